"""What the selection on screen means for an operator action: the resolvers of
:class:`~skconsole.tui.operation.Operation`, each turning :class:`Here` into a
:class:`Pick` (its :class:`Target`, which says its kind), a refusal, or None.

On a job's detail, a group's list or the in-flight panel: the selected job.
On the failures panel: the selected group; requeue (R) takes the whole group from its
drill-down too, and the selected job of a list is requeued by a key of its own (O). On the depth panel: the selected
type's jobs that the action acts on (failed jobs for requeue, waiting ones for
bump and cancel: its key's resolver says which), or the type itself (pause,
limit). On the health panel: the selected table (vacuum) or session
(cancel-session), whose parameters name the target.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen

from skconsole import ops
from skconsole.core.status import JobStatus
from skconsole.ops.edit import refusal
from skconsole.read.failures import FailureGroup
from skconsole.read.health import Session, TableHealth
from skconsole.tui.formatting import short_id
from skconsole.tui.model import DepthRow, Snapshot, Target, TargetKind
from skconsole.tui.operation import Here, Pick, Resolver
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.main import MainScreen
from skconsole.tui.screens.search import SearchScreen
from skconsole.tui.widgets.failures_panel import FailuresPanel
from skconsole.tui.widgets.health_panel import HealthPanel
from skconsole.tui.widgets.keyed_table import KeyedTable
from skconsole.tui.widgets.panel import Panel
from skconsole.views.inflight import worker_text

#: where rows are jobs that space marks (the mark key's scopes)
MARKS_JOBS = frozenset({"jobs", "inflight"})


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


def _selected_job(here: Here) -> Target | None:
    """The job selected on a job's detail, a group's list or the in-flight panel."""
    screen, snapshot = here.screen, here.snapshot
    if isinstance(screen, JobDetailScreen):
        d = screen.detail
        if d is None:
            return None
        what = f"{d.task_type}, {JobStatus.label_of(d.status)}"
        label = f"job {short_id(str(d.task_id))} ({what})"
        return Target(label, TargetKind.JOB, ids=(str(d.task_id),))
    if isinstance(screen, GroupJobsScreen):
        task_id = screen.selected_job()
        if task_id is None or screen.jobs is None:
            return None
        job = next((j for j in screen.jobs.jobs if str(j.task_id) == task_id), None)
        what = f" ({job.task_type}, {JobStatus.label_of(job.status)})" if job else ""
        return Target(f"job {short_id(task_id)}{what}", TargetKind.JOB, ids=(task_id,))
    if isinstance(screen, SearchScreen):
        task_id = screen.selected_job()
        found = screen.job(task_id) if task_id is not None else None
        if task_id is None or found is None:
            return None
        what = f" ({found.task_type}, {found.status.label})"
        return Target(f"job {short_id(task_id)}{what}", TargetKind.JOB, ids=(task_id,))
    if here.scope == "inflight" and isinstance(screen, MainScreen) and snapshot is not None:
        key = screen.panel("inflight").table.selected_key
        run = next((j for j in snapshot.inflight if str(j.task_id) == key), None)
        if run is None or key is None:
            return None
        where = f"running on {worker_text(run)}" if run.worker_host else "running"
        label = f"job {short_id(key)} ({run.task_type}, {where})"
        return Target(label, TargetKind.JOB, ids=(key,))
    return None


def _marked(here: Here) -> Target | None:
    """The jobs marked (space) in the focused list, those it shows; None when none is."""
    table = here.screen.focused
    if not isinstance(table, KeyedTable) or here.scope not in MARKS_JOBS:
        return None
    ids = tuple(table.marked_keys)
    if not ids:
        return None
    noun = "job" if len(ids) == 1 else "jobs"
    return Target(f"the {len(ids):,} marked {noun}", TargetKind.SHOWN, ids=ids)


def jobs(of_type: str) -> Resolver:
    """The marked jobs, else the selected job, group, or the ``of_type`` ("failed",
    "waiting") jobs of the selected task type."""

    def resolve(here: Here) -> Pick | None:
        screen, scope = here.screen, here.scope
        target = _marked(here) or _selected_job(here)
        if target is None and scope == "failures" and isinstance(screen, MainScreen):
            panel = screen.query_one(FailuresPanel)
            group = panel.group(panel.table.selected_key, here.snapshot)
            if group is not None:
                label = f"group `{group.signature}`"
                target = Target(label, TargetKind.GROUP, group=group.signature)
        if target is None and scope == "depth":
            row = selected_type(screen, here.snapshot)
            if row is not None:
                label = f"{of_type} jobs of type `{row.task_type}`"
                target = Target(label, TargetKind.TYPE_JOBS, task_type=row.task_type)
        return None if target is None else Pick(target)

    return resolve


def _group_target(group: str) -> Target:
    """A failure group's jobs: all of them, whatever a list shows."""
    return Target(f"group `{group}`", TargetKind.GROUP, group=group)


def failed_jobs(here: Here) -> Pick | str | None:
    """What R requeues: the marked jobs, else the whole group (from the failures panel or
    the group's drill-down, with the same dialog), the selected job's detail, or the
    failed jobs of the selected type. A search's list is no group: there O requeues the
    selected job and A every job shown."""
    screen = here.screen
    marked = _marked(here)
    if marked is not None:
        return Pick(marked)
    if isinstance(screen, GroupJobsScreen):
        return Pick(_group_target(screen.group.signature))
    if isinstance(screen, SearchScreen):
        return (
            "R requeues a whole group or type: here O requeues the selected job, A every job shown."
        )
    return jobs("failed")(here)


def one_job(here: Here) -> Pick | None:
    """The one job selected in a list (a group's, a search's) or shown on its detail."""
    target = _selected_job(here)
    return None if target is None else Pick(target)


def shown_jobs(here: Here) -> Pick | None:
    """Every job the (filtered) list of a failure group shows; None when there are none."""
    screen = here.screen
    if isinstance(screen, SearchScreen):
        return _shown_found(screen)
    if not isinstance(screen, GroupJobsScreen):
        return None
    panel = screen.query_one(Panel)
    ids = tuple(panel.table.visible_keys)
    if not ids:
        return None
    filt = panel.table.filter_text
    total = screen.jobs.total if screen.jobs is not None else len(ids)
    left = max(total - len(ids), 0)
    label = (
        f"the {len(ids):,} jobs shown"
        + (f" (filter “{filt}”)" if filt else "")
        + f" in group `{screen.group.signature}`"
        + (f", not the {left:,} others of its {total:,} (R takes the whole group)" if left else "")
    )
    return Pick(Target(label, TargetKind.SHOWN, ids=ids, group=screen.group.signature))


def _shown_found(screen: SearchScreen) -> Pick | None:
    """Every job the search screen shows (filtered or not)."""
    ids = tuple(screen.body.table.visible_keys)
    if not ids:
        return None
    line = screen.line.strip()
    label = f"the {len(ids):,} jobs shown" + (f" (search “{line}”)" if line else "")
    if screen.more_match:
        label += ", not the others the search matches (m loads more)"
    return Pick(Target(label, TargetKind.SHOWN, ids=ids))


def job_to_edit(here: Here) -> Pick | str | None:
    """The job shown on its detail, if it may be edited (waiting or failed); else why not."""
    screen = here.screen
    if not isinstance(screen, JobDetailScreen) or screen.detail is None:
        return None
    refused = refusal(screen.detail.task_id, screen.detail.status)
    if refused is not None:
        return refused
    target = _selected_job(here)
    return None if target is None else Pick(target)


def hung_jobs(_here: Here) -> Pick:
    """Every hung job (the preview finds them)."""
    return Pick(Target("hung jobs", TargetKind.HUNG))


def old_results(_here: Here) -> Pick:
    """Finished results (their age is asked next)."""
    return Pick(Target("finished results", TargetKind.RESULTS))


def type_to_pause(here: Here) -> Pick | None:
    """The selected task type, to pause, or to resume when it is paused."""
    row = selected_type(here.screen, here.snapshot)
    if row is None:
        return None
    target = Target(f"type `{row.task_type}`", TargetKind.TYPE, task_type=row.task_type)
    return Pick(target, action=ops.RESUME if row.paused else ops.PAUSE)


def type_to_set(here: Here) -> Pick | None:
    """The selected task type, whose settings an action sets."""
    row = selected_type(here.screen, here.snapshot)
    if row is None:
        return None
    task_type = row.task_type
    return Pick(Target(f"the type `{task_type}`", TargetKind.TYPE, task_type=task_type))


def table(here: Here) -> Pick | None:
    """The queue table selected on the health panel."""
    t = selected_table(here.screen, here.snapshot)
    if t is None:
        return None
    return Pick(Target(t.table, TargetKind.TABLE), ops.VacuumParams(table=t.table))


def session(here: Here) -> Pick | str | None:
    """The session selected on the health panel. Its start time tells it from a later
    session with its pid: one hidden (another role's, without pg_read_all_stats) cannot
    be told apart, so it is refused here as by the CLI."""
    s = selected_session(here.screen, here.snapshot)
    if s is None:
        return None
    if s.backend_start is None:
        return (
            f"pid {s.pid} belongs to another role and its start time is hidden"
            " (needs pg_read_all_stats): it cannot be told from a later session with its pid."
        )
    params = ops.CancelSessionParams(pid=s.pid, backend_start=s.backend_start)
    return Pick(Target(session_label(s), TargetKind.SESSION), params)


def group_to_break(here: Here) -> Pick | None:
    """The failure group selected on panel 3, or the one whose drill-down is shown: a
    breaker is made (or closed) on its signature, for its first type until the dialog
    names another."""
    screen = here.screen
    group: FailureGroup | None = None
    if isinstance(screen, GroupJobsScreen):
        group = screen.group
    elif here.scope == "failures" and isinstance(screen, MainScreen):
        panel = screen.query_one(FailuresPanel)
        group = panel.group(panel.table.selected_key, here.snapshot)
    if group is None:
        return None
    task_type = group.task_types[0] if group.task_types else ""
    target = Target(f"the type `{task_type}`", TargetKind.TYPE, task_type=task_type)
    return Pick(target, ops.BreakerParams(signature=group.signature))
