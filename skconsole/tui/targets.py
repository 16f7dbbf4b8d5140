"""What the selection on screen means for an operator action: its :class:`Target`.

On a job's detail, a group's list or the in-flight panel: the selected job.
On the failures panel: the selected group. On the depth panel: the selected
type's jobs that the
action acts on by default (failed jobs for requeue, waiting ones for bump and
cancel: the action's spec says which). On the health panel: the selected table
(vacuum) or session (cancel-session), whose parameters name the target.
None when nothing is selected.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen

from skconsole.core.status import FAILED, JobStatus
from skconsole.ops import JobAction, OperatorAction
from skconsole.read.health import Session, TableHealth
from skconsole.tui.formatting import short_id
from skconsole.tui.model import DepthRow, Snapshot, Target
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.main import MainScreen
from skconsole.tui.widgets.failures_panel import FailuresPanel
from skconsole.tui.widgets.health_panel import HealthPanel
from skconsole.tui.widgets.panel import Panel
from skconsole.views.inflight import worker_text


def selected_type(screen: Screen[Any], snapshot: Snapshot | None) -> DepthRow | None:
    """The task type selected on the depth panel of the main screen."""
    if not isinstance(screen, MainScreen) or snapshot is None:
        return None
    key = screen.panel("depth").table.selected_key
    return next((d for d in snapshot.depth if d.task_type == key), None)


def selected_table(screen: Screen[Any], snapshot: Snapshot | None) -> TableHealth | None:
    """The queue table selected on the health panel of the main screen."""
    if not isinstance(screen, MainScreen):
        return None
    return screen.query_one(HealthPanel).selected_table(snapshot)


def selected_session(screen: Screen[Any], snapshot: Snapshot | None) -> Session | None:
    """The session selected on the health panel (with a lock wait selected: its blocker)."""
    if not isinstance(screen, MainScreen):
        return None
    return screen.query_one(HealthPanel).selected_session(snapshot)


def session_label(s: Session) -> str:
    """The session in a confirmation and its outcome: "pid 4242 (psql, user report_ro)"."""
    who = [w for w in (s.application, f"user {s.user}" if s.user else None) if w]
    return f"pid {s.pid}" + (f" ({', '.join(who)})" if who else "")


def selected(
    action: OperatorAction, screen: Screen[Any], scope: str, snapshot: Snapshot | None
) -> Target | None:
    """The target of ``action`` on ``screen`` (whose focused panel is ``scope``)."""
    if isinstance(screen, JobDetailScreen):
        d = screen.detail
        if d is None:
            return None
        what = f"{d.task_type}, {JobStatus.label_of(d.status)}"
        return Target(label=f"job {short_id(str(d.task_id))} ({what})", ids=(str(d.task_id),))
    if isinstance(screen, GroupJobsScreen):
        task_id = screen.selected_job()
        if task_id is None or screen.jobs is None:
            return None
        job = next((j for j in screen.jobs.jobs if str(j.task_id) == task_id), None)
        what = f" ({job.task_type}, {JobStatus.label_of(job.status)})" if job else ""
        return Target(label=f"job {short_id(task_id)}{what}", ids=(task_id,))
    if scope == "failures" and isinstance(screen, MainScreen):
        panel = screen.query_one(FailuresPanel)
        group = panel.group(panel.table.selected_key, snapshot)
        if group is None:
            return None
        return Target(label=f"group `{group.signature}`", group=group.signature)
    if scope == "inflight" and isinstance(screen, MainScreen) and snapshot is not None:
        key = screen.panel("inflight").table.selected_key
        run = next((j for j in snapshot.inflight if str(j.task_id) == key), None)
        if run is None or key is None:
            return None
        where = f"running on {worker_text(run)}" if run.worker_host else "running"
        label = f"job {short_id(key)} ({run.task_type}, {where})"
        return Target(label=label, ids=(key,))
    if scope == "depth":
        row = selected_type(screen, snapshot)
        if row is None:
            return None
        failed = isinstance(action, JobAction) and action.statuses.default == FAILED
        jobs = "failed" if failed else "waiting"
        return Target(label=f"{jobs} jobs of type `{row.task_type}`", task_type=row.task_type)
    return None


def shown_jobs(screen: Screen[Any]) -> Target | None:
    """Every job the (filtered) list of a failure group shows; None when there are none."""
    if not isinstance(screen, GroupJobsScreen):
        return None
    panel = screen.query_one(Panel)
    ids = tuple(panel.table.visible_keys)
    if not ids:
        return None
    filt = panel.table.filter_text
    label = (
        f"the {len(ids):,} jobs shown"
        + (f" (filter “{filt}”)" if filt else "")
        + f" in group `{screen.group.signature}`"
    )
    return Target(label=label, ids=ids, group=screen.group.signature)
