"""Drill-down 1: the jobs of one failure group; Enter opens a job.

The header says the group's signature once; the rows say what differs per job
(:class:`~skconsole.tui.widgets.group_jobs_panel.GroupJobsPanel`). The list reads the
group's latest :data:`JOB_LIMIT` jobs; when the group has more, its title and header say
so ("first 200 of 338") and ``m`` reads the next :data:`JOB_LIMIT`. ``R`` acts on the
whole group whatever the list shows."""

from __future__ import annotations

from textual.content import Content

from skconsole.core.text import printable
from skconsole.read import FailureGroup, GroupJobs
from skconsole.tui.context import Console
from skconsole.tui.formatting import fmt_ago, spark
from skconsole.tui.model import Snapshot
from skconsole.tui.off_thread import read_off_thread
from skconsole.tui.opening import Opening, job
from skconsole.tui.reads import GROUP_CURVE_MINUTES, GroupCurveRead, GroupJobsRead
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
        self.limit = JOB_LIMIT
        #: its failed attempts per minute over the last hour (None: not read yet)
        self.curve: tuple[int, ...] | None = None

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
        if self.curve is not None:
            lines.append(curve_line(self.curve))
        left = self.not_shown()
        if self.jobs is not None and left:
            whole = "" if self.console.status_state().read_only else " · R requeues the whole group"
            lines.append(
                f"Listed: the latest {len(self.jobs.jobs):,} of {total:,} ({left:,} not shown:"
                f" m loads {min(left, JOB_LIMIT):,} more){whole}"
            )
        self.header.update(Content("\n".join(printable(line) for line in lines)))

    def not_shown(self) -> int:
        """The group's jobs the list does not show (it stopped at its limit)."""
        return 0 if self.jobs is None else max(self.jobs.total - len(self.jobs.jobs), 0)

    def load_more(self) -> None:
        """m: read the next :data:`JOB_LIMIT` of the group's jobs too."""
        if self.jobs is not None and self.not_shown() and len(self.jobs.jobs) >= self.limit:
            self.limit += JOB_LIMIT
            self.body.loading = True
            self.reload()

    def reload(self) -> None:
        """The group's jobs, and its curve from the record (a read of its own)."""
        super().reload()
        group = self.group
        read_off_thread(
            self,
            lambda: self.console.source.read(
                GroupCurveRead(group.signature, tuple(group.task_types))
            ),
            self._curve_loaded,
            lambda exc: self.console.report_error("could not load the group's curve", exc),
            group="group-curve",
        )

    def _curve_loaded(self, curve: tuple[int, ...]) -> None:
        self.curve = curve
        self.show_header()

    def fetch(self) -> GroupJobs:
        return self.console.source.read(GroupJobsRead(self.group.signature, self.limit))

    def show(self, data: GroupJobs) -> None:
        self.jobs = data
        shown = len(data.jobs)
        summary = f"first {shown:,} of {data.total:,}" if data.total > shown else f"{shown:,}"
        self.body.show_rows(self.body.rows_of(data.jobs, self.console.clock()), summary)
        self.show_header()

    def selected_job(self) -> str | None:
        return self.body.table.selected_key

    def opening(self, _snapshot: Snapshot | None) -> Opening | None:
        task_id = self.selected_job()
        return None if task_id is None else job(task_id, self.group.signature)


def curve_line(curve: tuple[int, ...]) -> str:
    """The group's failures per minute over the last hour, as one line of bars (from 0:
    a quiet minute is at the bottom) and the busiest minute's count."""
    if not any(curve):
        return f"No failures in the last {GROUP_CURVE_MINUTES} min (the record)"
    return f"1 h {spark(curve, GROUP_CURVE_MINUTES, from_zero=True)} peak {max(curve):,}/min"
