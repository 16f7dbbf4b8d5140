"""Panel 5: application metrics (Stakhanovise ids) over processes, with rates: sums, and
the least minimum or greatest maximum of those kept per process."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from skconsole.tui.formatting import fmt_int, fmt_rate
from skconsole.tui.model import MetricRow, Snapshot
from skconsole.tui.widgets.panel import Panel
from skconsole.views.table import Column, figure_column


class MetricsPanel(Panel):
    scope = "metrics"
    title = "App metrics"
    short_title = "Metrics"
    COLUMNS: ClassVar[tuple[Column[MetricRow], ...]] = (
        Column("metric", "metric", 44, flex=True, cell=lambda m, _: m.metric_id),
        Column("category", "category", 34, cell=lambda m, _: (m.category, "muted")),
        figure_column(
            "value",
            14,
            lambda m, _: fmt_int(m.value) if m.value is not None else ("none yet", "muted"),
        ),
        figure_column("rate", 12, lambda m, _: fmt_rate(m.rate_per_s)),
    )

    def items(self, snapshot: Snapshot) -> Sequence[MetricRow]:
        return snapshot.metrics

    def row_key(self, item: MetricRow) -> str:
        return item.metric_id
