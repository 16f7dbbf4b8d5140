"""Drill-down 2: one job in full; c copies it."""

from __future__ import annotations

from collections.abc import Sequence

from textual import work
from textual.app import ComposeResult
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from skconsole.stats import JobDetail, WorkerInfo
from skconsole.status import JobStatus
from skconsole.text import printable
from skconsole.tui.context import Console
from skconsole.tui.formatting import short_id
from skconsole.tui.messages import DataChanged
from skconsole.tui.widgets.job_view import JobView, job_text, owner_text
from skconsole.tui.widgets.status_bar import StatusBar


class JobDetailScreen(Screen[None]):
    """Loads the job in a worker thread, again whenever the data changes.

    ``workers`` are the workers the console knows (its latest snapshot's): the
    owner is named by host and pid when it is one of them.
    """

    def __init__(
        self,
        task_id: str,
        console: Console,
        group_label: str | None = None,
        workers: Sequence[WorkerInfo] = (),
    ) -> None:
        super().__init__()
        self.task_id = task_id
        self.console = console
        self.group_label = group_label
        self.known_workers = tuple(workers)
        self.detail: JobDetail | None = None
        self._loading = False

    def compose(self) -> ComposeResult:
        yield StatusBar(self.console.status_state)
        yield Static("", id="job-header")
        yield JobView(id="job-view")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#job-header", Static).update(Content(f"Job {self.task_id}"))
        view = self.query_one(JobView)
        view.loading = True
        view.focus()
        self.reload()

    def on_data_changed(self, _message: DataChanged) -> None:
        self.reload()

    def reload(self) -> None:
        if not self._loading:
            self._loading = True
            self._load()

    @work(thread=True, exclusive=True, group="drilldown", exit_on_error=False)
    def _load(self) -> None:
        try:
            detail = self.console.source.job_detail(self.task_id)
        except Exception as exc:
            self.app.call_from_thread(self._failed, exc)
            return
        self.app.call_from_thread(self._loaded, detail)

    @property
    def owner(self) -> str:
        return owner_text(self.detail, self.known_workers) if self.detail is not None else "-"

    def copy_text(self) -> str | None:
        """The job as plain text (fields, payload and full error); None until loaded."""
        return job_text(self.detail, self.owner) if self.detail is not None else None

    def _loaded(self, detail: JobDetail | None) -> None:
        self._loading = False
        view = self.query_one(JobView)
        view.loading = False
        header = self.query_one("#job-header", Static)
        if detail is None:
            header.update(Content(f"Job {short_id(self.task_id)} no longer exists (purged?)"))
            return
        self.detail = detail
        where = f"  ·  group {self.group_label}" if self.group_label else ""
        status = JobStatus.label_of(detail.status)
        header.update(
            Content(printable(f"Job {detail.task_id}  ·  {detail.task_type}  ·  {status}{where}"))
        )
        view.show(detail, self.console.clock(), self.owner)

    def _failed(self, exc: BaseException) -> None:
        self._loading = False
        self.query_one(JobView).loading = False
        self.console.report_error("could not load the job", exc)
