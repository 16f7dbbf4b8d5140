"""Panel 5: application metrics (Stakhanovise ids) over processes, with rates: sums, and
the least minimum or greatest maximum of those kept per process."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.tui.model import MetricRow, Snapshot
from skconsole.tui.widgets.panel import Panel, console_columns
from skconsole.views.metrics import COLUMNS


class MetricsPanel(Panel):
    scope = "metrics"
    title = "App metrics"
    short_title = "Metrics"
    COLUMNS = console_columns(COLUMNS)

    def items(self, snapshot: Snapshot) -> Sequence[MetricRow]:
        return snapshot.metrics

    def row_key(self, item: MetricRow) -> str:
        return item.metric_id
