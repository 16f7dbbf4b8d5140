"""Drill-down 2 (key F on a failure group): what the group's jobs share.

The factors (:mod:`skconsole.read.factors`) are a costly read (two bounded samples),
read once, in a worker thread, when the screen opens: one a row, with how many of the
group's sampled jobs hold it and what share, the same of its types' other jobs, and the
search that selects by it; Enter on a factor opens that search (a payload factor; a
worker's host selects no search).
"""

from __future__ import annotations

from textual.content import Content

from skconsole.core.text import printable
from skconsole.read import FailureGroup
from skconsole.read.factors import CommonFactors
from skconsole.tui.context import Console
from skconsole.tui.messages import DataChanged
from skconsole.tui.model import Snapshot
from skconsole.tui.opening import Opening, search
from skconsole.tui.reads import FactorsRead
from skconsole.tui.screens.drilldown import DrillDownScreen
from skconsole.tui.widgets.factors_panel import FactorsPanel
from skconsole.views.factors import FactorRow, factor_rows


class FactorsScreen(DrillDownScreen[CommonFactors, FactorsPanel]):
    """The group's factors, strongest first; read once (not again on every refresh)."""

    HEADER_ID = "factors-header"
    SCOPE = "factors"
    WHAT = "the group's factors"

    def __init__(self, group: FailureGroup, console: Console) -> None:
        super().__init__(console, FactorsPanel())
        self.group = group
        self.found: CommonFactors | None = None
        self.rows: list[FactorRow] = []

    def focus_body(self) -> None:
        self.body.table.focus()

    def on_data_changed(self, message: DataChanged) -> None:
        """Read once: a refresh does not run the comparison again (nor does the drill-down's
        own handler, which Textual would call next)."""
        message.prevent_default()

    def show_header(self) -> None:
        lines = [f"Failure group  {self.group.signature}"]
        found = self.found
        if found is None:
            lines.append("What its jobs share: comparing them with the other jobs of its types…")
        else:
            lines.append(
                f"What its jobs share: {found.failing_sampled:,} failed job(s) of the group"
                f" compared with {found.others_sampled:,} other job(s) of its types · "
                + ("⏎ opens a factor's search" if found.factors else "nothing stands out")
            )
        self.header.update(Content("\n".join(printable(line) for line in lines)))

    def fetch(self) -> CommonFactors:
        return self.console.source.read(FactorsRead(self.group.signature))

    def show(self, data: CommonFactors) -> None:
        self.found = data
        self.rows = factor_rows(data.factors, self.group.task_types)
        self.body.show_rows(self.body.rows_of(self.rows, self.console.clock()), f"{len(self.rows)}")
        self.show_header()

    def selected(self) -> FactorRow | None:
        key = self.body.table.selected_key
        return next((r for r in self.rows if r.key == key), None)

    def opening(self, _snapshot: Snapshot | None) -> Opening | None:
        row = self.selected()
        if row is None:
            return None
        if row.search is None:
            self.app.notify(  # plain text: a field's name may hold [brackets]
                printable(f"{row.factor.field} is not a payload field: no search selects by it."),
                title="Factors",
            )
            return None
        return search(row.search)
