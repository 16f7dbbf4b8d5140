"""Drill-down 2: one job in full; c copies it."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual import work
from textual.app import ComposeResult
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from skconsole.text import printable
from skconsole.tui.formatting import short_id
from skconsole.tui.model import JobDetail
from skconsole.tui.widgets.job_view import JobView
from skconsole.tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from skconsole.tui.app import ConsoleApp


class JobDetailScreen(Screen[None]):
    def __init__(self, task_id: str, group_label: str | None = None) -> None:
        super().__init__()
        self.task_id = task_id
        self.group_label = group_label
        self.detail: JobDetail | None = None
        self._loading = False

    @property
    def console(self) -> ConsoleApp:
        return cast("ConsoleApp", self.app)

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield Static("", id="job-header")
        yield JobView(id="job-view")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#job-header", Static).update(Content(f"Job {self.task_id}"))
        view = self.query_one(JobView)
        view.loading = True
        view.focus()
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
        header.update(
            Content(
                printable(f"Job {detail.task_id}  ·  {detail.task_type}  ·  {detail.status}{where}")
            )
        )
        view.show(detail, self.console.clock())

    def _failed(self, exc: BaseException) -> None:
        self._loading = False
        self.query_one(JobView).loading = False
        self.console.report_error("could not load the job", exc)
