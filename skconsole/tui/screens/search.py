"""The search screen: find jobs by payload field, type, status, age or error text.

Typed as one line (``payload.customer.id=42 type=invoices.send status=4 since=1h
error="timed out"``, the terms of :func:`skconsole.core.find_query.parse_line`),
read in a worker thread through the data source, shown as the failure-group
drill-down shows its jobs: Enter opens one job, and the job keys act on the
selected job or (``A``) on every job shown.

A search stops at its limit (``limit=N``, 50 unless told): it reads one job more than
that, so the header says whether it stopped there ("first 50 jobs found; more match")
and ``m`` reads the next page (up to the most a search may read).
"""

from __future__ import annotations

from dataclasses import replace

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Input, Static

from skconsole.core.errors import ConfigError
from skconsole.core.find_query import MAX_LIMIT, FindQuery, parse_line
from skconsole.core.text import printable
from skconsole.read import FoundJob
from skconsole.tui.context import Console
from skconsole.tui.model import Snapshot
from skconsole.tui.opening import Opening, job
from skconsole.tui.reads import FindRead
from skconsole.tui.screens.drilldown import DrillDownScreen
from skconsole.tui.widgets.footer import ConsoleFooter
from skconsole.tui.widgets.found_jobs_panel import FoundJobsPanel
from skconsole.tui.widgets.status_bar import StatusBar

HELP = (
    "Search: payload.PATH=VALUE type=T status=N since=1h error=TEXT limit=N"
    ' (Enter runs it; 42 matches 42 and "42")'
)


class SearchScreen(DrillDownScreen[list[FoundJob], FoundJobsPanel]):
    """A search line over the jobs it found; nothing is read until a search is entered."""

    HEADER_ID = "search-header"
    SCOPE = "jobs"
    WHAT = "the search's jobs"

    def __init__(self, console: Console, line: str = "") -> None:
        super().__init__(console, FoundJobsPanel(id="panel-jobs"))
        self.line = line
        self.query_: FindQuery | None = None
        self.found: list[FoundJob] = []
        #: the search stopped at its limit: more jobs match than are shown
        self.more_match = False
        self.page_size = 0  # the line's limit

    def compose(self) -> ComposeResult:
        yield StatusBar(self.console.status_state)
        yield Static("", id=self.HEADER_ID)
        yield Input(value=self.line, placeholder="payload.customer.id=42 type=T", id="search-line")
        yield self.body
        yield ConsoleFooter()

    @property
    def line_input(self) -> Input:
        return self.query_one("#search-line", Input)

    def on_mount(self) -> None:
        self.show_header()
        self.line_input.focus()
        if self.line.strip():
            self.search(self.line)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.search(event.value)

    def search(self, line: str) -> None:
        """Parse the line (a bad one is said in a notification) and read its jobs."""
        try:
            self.query_ = parse_line(line)
        except ConfigError as exc:
            self.notify(printable(str(exc)), title="Search", severity="error")
            return
        self.line = line
        self.page_size = self.query_.limit
        self.body.loading = True
        self.reload()

    def reload(self) -> None:
        if self.query_ is not None:
            super().reload()

    def show_header(self) -> None:
        self.header.update(Content(printable(self.found_text() if self.query_ else HELP)))

    def found_text(self) -> str:
        """How many jobs are shown, and whether the search stopped at its limit."""
        n = len(self.found)
        if not self.more_match:
            return f"{n:,} job(s) found"
        if self.query_ is not None and self.query_.limit >= MAX_LIMIT:
            return f"first {n:,} jobs found; more match (a search reads at most {MAX_LIMIT:,})"
        return f"first {n:,} jobs found; more match, not shown (m loads {self.page():,} more)"

    def page(self) -> int:
        """How many more jobs ``m`` reads: as many as the line asked for."""
        return self.page_size

    def load_more(self) -> None:
        """m: read the search again with room for the next page of jobs."""
        if self.query_ is None or not self.more_match or self.query_.limit >= MAX_LIMIT:
            return
        self.query_ = replace(self.query_, limit=min(self.query_.limit + self.page(), MAX_LIMIT))
        self.body.loading = True
        self.reload()

    def fetch(self) -> list[FoundJob]:
        assert self.query_ is not None
        limit = self.query_.limit
        probe = replace(self.query_, limit=min(limit + 1, MAX_LIMIT))  # one more: is there more?
        return self.console.source.read(FindRead(probe))

    def show(self, data: list[FoundJob]) -> None:
        assert self.query_ is not None
        limit = self.query_.limit
        self.more_match = len(data) > limit or len(data) >= MAX_LIMIT
        data = data[:limit]
        self.found = data
        summary = f"first {len(data):,}" if self.more_match else f"{len(data):,}"
        self.body.show_rows(self.body.rows_of(data, self.console.clock()), summary)
        self.show_header()
        if data:
            self.body.table.focus()

    def selected_job(self) -> str | None:
        return self.body.table.selected_key

    def opening(self, _snapshot: Snapshot | None) -> Opening | None:
        task_id = self.selected_job()
        return None if task_id is None else job(task_id)

    def job(self, task_id: str) -> FoundJob | None:
        return next((j for j in self.found if str(j.task_id) == task_id), None)
