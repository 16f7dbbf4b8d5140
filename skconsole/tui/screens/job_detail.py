"""Drill-down 2: one job in full; c copies it, u opens the job that posted it, d the
jobs it posted."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content

from skconsole.core.status import JobStatus
from skconsole.core.text import printable
from skconsole.read import JobDetail, WorkerInfo
from skconsole.tui.context import Console
from skconsole.tui.formatting import short_id
from skconsole.tui.opening import Opening, job, search
from skconsole.tui.reads import JobRead
from skconsole.tui.screens.drilldown import DrillDownScreen
from skconsole.tui.widgets.job_view import JobView, job_text, owner_text


class JobDetailScreen(DrillDownScreen[JobDetail | None, JobView]):
    """The job, loaded again whenever the data changes.

    ``workers`` are the workers the console knows (its latest snapshot's): the
    owner is named by host and pid when it is one of them.
    """

    HEADER_ID = "job-header"
    SCOPE = "job"
    WHAT = "the job"

    def __init__(
        self,
        task_id: str,
        console: Console,
        group_label: str | None = None,
        workers: Sequence[WorkerInfo] = (),
    ) -> None:
        super().__init__(console, JobView(id="job-view"))
        self.task_id = task_id
        self.group_label = group_label
        self.known_workers = tuple(workers)
        self.detail: JobDetail | None = None

    def show_header(self) -> None:
        self.header.update(Content(f"Job {self.task_id}"))

    def fetch(self) -> JobDetail | None:
        return self.console.source.read(JobRead(self.task_id))

    @property
    def parent_id(self) -> str | None:
        """The job that posted this one, when its result row is still there."""
        d = self.detail
        if d is None or d.parent_task_id is None or d.parent_purged:
            return None
        return str(d.parent_task_id)

    def posted_jobs(self) -> Opening | None:
        """The jobs this one posted: the one child's detail, or a search for them all."""
        d = self.detail
        if d is None or not d.children:
            return None
        if d.children == 1 and d.child_jobs:
            return job(str(d.child_jobs[0].task_id))
        return search(f"parent={d.task_id}", f"limit={min(max(d.children, 50), 10_000)}")

    @property
    def owner(self) -> str:
        return owner_text(self.detail, self.known_workers) if self.detail is not None else "-"

    def copy_text(self) -> str | None:
        """The job as plain text (fields, payload and full error); None until loaded."""
        return job_text(self.detail, self.owner) if self.detail is not None else None

    def show(self, data: JobDetail | None) -> None:
        if data is None:
            self.header.update(Content(f"Job {short_id(self.task_id)} no longer exists (purged?)"))
            return
        self.detail = data
        where = f"  ·  group {self.group_label}" if self.group_label else ""
        status = JobStatus.label_of(data.status)
        self.header.update(
            Content(printable(f"Job {data.task_id}  ·  {data.task_type}  ·  {status}{where}"))
        )
        self.body.show(data, self.console.clock(), self.owner)
        self.refresh_bindings()  # the parent key shows once there is a parent to open
