"""Panel 5: application metrics (Stakhanovise ids) summed over processes, with rates."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.tui.formatting import fmt_int, fmt_rate
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.keyed_table import Column, Row
from skconsole.tui.widgets.panel import Panel


class MetricsPanel(Panel):
    scope = "metrics"
    title = "App metrics"
    short_title = "Metrics"
    COLUMNS = (
        Column("metric", "metric", 44, flex=True),
        Column("category", "category", 34),
        Column("value", "value", 14, right=True),
        Column("rate", "rate", 12, right=True),
    )

    def rows(self, snapshot: Snapshot) -> Sequence[Row]:
        return [
            (
                m.metric_id,
                (m.metric_id, (m.category, "muted"), fmt_int(m.value), fmt_rate(m.rate_per_s)),
            )
            for m in snapshot.metrics
        ]
