"""Drill-down 1: the jobs of one failure group; Enter opens a job.

The header says the group's signature once; the rows say what differs per job
(:class:`~skconsole.tui.widgets.group_jobs_panel.GroupJobsPanel`)."""

from __future__ import annotations

from textual.content import Content

from skconsole.core.text import printable
from skconsole.read import FailureGroup, GroupJobs
from skconsole.tui.context import Console
from skconsole.tui.formatting import fmt_ago
from skconsole.tui.model import Snapshot
from skconsole.tui.opening import Opening, job
from skconsole.tui.reads import GroupJobsRead
from skconsole.tui.screens.drilldown import DrillDownScreen
from skconsole.tui.widgets.group_jobs_panel import GroupJobsPanel
from skconsole.views.failures import statuses_text

JOB_LIMIT = 200


class GroupJobsScreen(DrillDownScreen[GroupJobs, GroupJobsPanel]):
    """The group's jobs, loaded again whenever the data changes."""

    HEADER_ID = "group-header"
    SCOPE = "jobs"
    WHAT = "the group's jobs"
    FAILURE_DATA = True  # a big group is a costly read: not on every refresh

    def __init__(self, group: FailureGroup, console: Console) -> None:
        super().__init__(console, GroupJobsPanel(group.signature, id="panel-jobs"))
        self.group = group
        self.jobs: GroupJobs | None = None

    def focus_body(self) -> None:
        self.body.table.focus()

    def show_header(self) -> None:
        g = self.group
        now = self.console.clock()
        total = self.jobs.total if self.jobs is not None else g.count
        lines = [
            f"Failure group  {g.signature}",
            f"{total:,} jobs · types {', '.join(g.task_types)} · {statuses_text(g)}"
            f" · first seen {fmt_ago(g.first_seen, now)} · last seen {fmt_ago(g.last_seen, now)}",
        ]
        self.header.update(Content("\n".join(printable(line) for line in lines)))

    def fetch(self) -> GroupJobs:
        return self.console.source.read(GroupJobsRead(self.group.signature, JOB_LIMIT))

    def show(self, data: GroupJobs) -> None:
        self.jobs = data
        shown = len(data.jobs)
        summary = f"{shown:,} of {data.total:,}" if data.total > shown else f"{shown:,}"
        self.body.show_rows(self.body.rows_of(data.jobs, self.console.clock()), summary)
        self.show_header()

    def selected_job(self) -> str | None:
        return self.body.table.selected_key

    def opening(self, _snapshot: Snapshot | None) -> Opening | None:
        task_id = self.selected_job()
        return None if task_id is None else job(task_id, self.group.signature)
