"""The jobs a search found (the search screen's list), with the columns of
:mod:`skconsole.views.find`."""

from __future__ import annotations

from skconsole.read import FoundJob
from skconsole.tui.widgets.panel import Panel, console_columns
from skconsole.views import find


class FoundJobsPanel(Panel):
    scope = "jobs"
    title = "Jobs"
    COLUMNS = console_columns(find.COLUMNS)

    def row_key(self, item: FoundJob) -> str:
        return str(item.task_id)
