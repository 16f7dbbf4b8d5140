"""The jobs of one failure group (the drill-down list)."""

from __future__ import annotations

from skconsole.read import FailedJob
from skconsole.tui.widgets.panel import Panel, console_columns
from skconsole.views.failures import JOB_COLUMNS


class JobsPanel(Panel):
    scope = "jobs"
    title = "Jobs"
    COLUMNS = console_columns(JOB_COLUMNS)

    def row_key(self, item: FailedJob) -> str:
        return str(item.task_id)
