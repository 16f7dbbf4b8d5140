"""Drill-down 1: the jobs of one failure group; Enter opens a job."""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from skconsole.stats import FailureGroup, GroupJobs
from skconsole.text import printable
from skconsole.tui.context import Console
from skconsole.tui.formatting import fmt_ago
from skconsole.tui.messages import DataChanged
from skconsole.tui.widgets.failures_panel import statuses_text
from skconsole.tui.widgets.jobs_panel import JobsPanel
from skconsole.tui.widgets.status_bar import StatusBar

JOB_LIMIT = 200


class GroupJobsScreen(Screen[None]):
    """Loads the group's jobs in a worker thread, again whenever the data changes
    (:class:`DataChanged`: after every refresh and action)."""

    def __init__(self, group: FailureGroup, console: Console) -> None:
        super().__init__()
        self.group = group
        self.console = console
        self.jobs: GroupJobs | None = None
        self._loading = False

    def compose(self) -> ComposeResult:
        yield StatusBar(self.console.status_state)
        yield Static("", id="group-header")
        yield JobsPanel(id="panel-jobs")
        yield Footer()

    def on_mount(self) -> None:
        self._show_header()
        panel = self.query_one(JobsPanel)
        panel.loading = True
        panel.table.focus()
        self.reload()

    def on_data_changed(self, _message: DataChanged) -> None:
        self.reload()

    def _show_header(self) -> None:
        g = self.group
        now = self.console.clock()
        total = self.jobs.total if self.jobs is not None else g.count
        lines = [
            f"Failure group  {g.signature}",
            f"{total:,} jobs · types {', '.join(g.task_types)} · {statuses_text(g)}"
            f" · first seen {fmt_ago(g.first_seen, now)} · last seen {fmt_ago(g.last_seen, now)}",
        ]
        self.query_one("#group-header", Static).update(
            Content("\n".join(printable(line) for line in lines))
        )

    def reload(self) -> None:
        """Fetch the jobs again (ignored while a fetch is running: no pile-up)."""
        if not self._loading:
            self._loading = True
            self._load()

    @work(thread=True, exclusive=True, group="drilldown", exit_on_error=False)
    def _load(self) -> None:
        try:
            jobs = self.console.source.group_jobs(self.group.signature, JOB_LIMIT)
        except Exception as exc:
            self.app.call_from_thread(self._failed, exc)
            return
        self.app.call_from_thread(self._loaded, jobs)

    def _loaded(self, jobs: GroupJobs) -> None:
        self._loading = False
        self.jobs = jobs
        panel = self.query_one(JobsPanel)
        panel.loading = False
        shown = len(jobs.jobs)
        summary = f"{shown:,} of {jobs.total:,}" if jobs.total > shown else f"{shown:,}"
        panel.show_rows(panel.job_rows(jobs, self.console.clock()), summary)
        self._show_header()

    def _failed(self, exc: BaseException) -> None:
        self._loading = False
        self.query_one(JobsPanel).loading = False
        self.console.report_error("could not load the group's jobs", exc)

    def selected_job(self) -> str | None:
        return self.query_one(JobsPanel).table.selected_key
