"""Panel 4: execution time per task type: every figure of a row is of the same runs,
the type's recent processed jobs, and the title says which (``views.exec_times``: its columns, drawn by ``skconsole status stats`` too)."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.read import TypeTimes
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.panel import TypesPanel, console_columns
from skconsole.views import exec_times
from skconsole.views.exec_times import exec_window


class ExecPanel(TypesPanel):
    scope = "exec"
    title = "Execution time"
    short_title = "Exec times"
    COLUMNS = console_columns(exec_times.COLUMNS)
    opens = "the type's most recent jobs (a search)"

    def items(self, snapshot: Snapshot) -> Sequence[TypeTimes]:
        return snapshot.exec_stats

    def summarize(self, snapshot: Snapshot) -> str:
        runs = sum(s.sample for s in snapshot.exec_stats)
        return f"{runs:,} runs {exec_window()}"
