"""A fixed data source and a frozen clock: deterministic screens for snapshot tests and
the README's screenshots.

This stands in for the *data source* of the console only (the TUI layer); the
engine, ``stats`` and ``ops`` are always tested against PostgreSQL, and so are
the console's own actions in the Pilot tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast
from uuid import UUID

from skconsole import ops, read
from skconsole.core.errors import ReadOnlyError
from skconsole.core.find_query import FindQuery
from skconsole.core.status import JobStatus
from skconsole.ops.forecast import FORECAST_ACTIONS, preview_forecast
from skconsole.ops.model import PreviewDetails
from skconsole.read import (
    Cause,
    CauseCode,
    Fix,
    FoundJob,
    GroupJobs,
    JobDetail,
    Why,
)
from skconsole.read.factors import CommonFactors, Factor
from skconsole.read.flow import TypeCounts
from skconsole.read.job_lookup import CANDIDATES, JobMatch, prefix_range
from skconsole.tui.model import (
    ActionRequest,
    Dialog,
    FailureGroups,
    OutcomeInfo,
    PreviewInfo,
    QueueHealth,
    QueueOverview,
    Snapshot,
    TargetKind,
    Trends,
    Windows,
)
from skconsole.tui.reads import (
    ChartsRead,
    FactorsRead,
    FailureGroupsRead,
    FindRead,
    GroupCurveRead,
    GroupJobsRead,
    HealthRead,
    JobRead,
    OverviewRead,
    PrefixRead,
    Read,
    SnapshotRead,
    TrendsRead,
    WhyRead,
    WindowsRead,
)
from skconsole.tui.showcase.fixed_data import (
    FROZEN_AT,
    GROUPS,
    NEW_GROUP,
    PARENT_JOB,
    STAGE_JOB,
    TIMEOUT_SIG,
    fixed_dead_snapshot,
    fixed_failed_job,
    fixed_group_jobs,
    fixed_health,
    fixed_id,
    fixed_parent_job,
    fixed_snapshot,
    fixed_wave,
    waves_audit,
)
from skconsole.tui.showcase.fixed_overview import (
    fixed_flows,
    fixed_overview,
    fixed_quiet_overview,
)
from skconsole.tui.showcase.fixed_record import fixed_charts, fixed_curve
from skconsole.tui.source import SourceUnavailable

T = TypeVar("T")


def _table_target(request: ActionRequest) -> dict[str, object]:
    """What the preview of a vacuum reads of its table now."""
    params = request.params
    assert isinstance(params, ops.VacuumParams)  # a table's action is a vacuum
    t = next(t for t in fixed_health().tables if t.table == params.table)
    return {
        "table": t.table,
        "live_rows": t.live_rows,
        "dead_rows": t.dead_rows,
        "table_bytes": t.table_bytes,
        "last_vacuumed": t.last_vacuumed,
        "vacuum_running": t.vacuum_running is not None,
        "may_vacuum": True,
    }


def _session_target(request: ActionRequest) -> dict[str, object]:
    """What the preview of a session cancel reads of its session now."""
    params = request.params
    assert isinstance(params, ops.CancelSessionParams)  # a session's action is a cancel
    h = fixed_health()
    s = next(s for s in [*h.horizon.sessions, *h.blockers] if s.pid == params.pid)
    return {
        "pid": s.pid,
        "user": s.user,
        "application": s.application,
        "client": s.client,
        "state": s.state,
        "backend_start": s.backend_start,
        "xact_age_s": s.xact_age_s,
        "horizon_age": s.horizon_age,
        "query": s.query,
        "blocks": [w.pid for w in h.lock_waits if s.pid in w.blocked_by],
        "holds_horizon": s.horizon_age == h.horizon.age,
        "eligible": True,
    }


def _type_target(request: ActionRequest) -> dict[str, object]:
    """A task type as a pause's or a limit's preview reads it, from the fixed depth rows."""
    task_type = request.target.task_type
    row = next((d for d in fixed_snapshot().depth if d.task_type == task_type), None)
    params = request.params
    if row is None:
        return {"task_type": task_type}
    if isinstance(params, ops.LimitParams):
        limit = row.limit
        old = ops.Limits(
            limit.concurrency if limit else None,
            limit.rate_count if limit else None,
            limit.rate_seconds if limit else None,
        )
        return {
            "task_type": task_type,
            "old": params.shown(old),
            "new": params.shown(params.apply(old)),
        }
    if request.action in (ops.PAUSE, ops.RESUME):
        waiting = row.ready + row.scheduled
        return {
            "task_type": task_type,
            "paused": row.paused,
            "waiting": waiting,
            "in_flight": row.in_flight,
        }
    return {"task_type": task_type}


#: What a one-target action's preview reads of its target, by the target's kind.
SERVER_TARGETS: dict[TargetKind, Callable[[ActionRequest], dict[str, object]]] = {
    TargetKind.TABLE: _table_target,
    TargetKind.SESSION: _session_target,
    TargetKind.TYPE: _type_target,
}


def fixed_why(job: JobDetail) -> Why:
    """A retry waiting out its back-off behind other due jobs of its type."""
    return Why(
        job.task_id,
        job.task_type,
        job.status,
        (
            Cause(
                CauseCode.NOT_DUE,
                "not due for 42s: a retry waiting out its back-off after 1 failed attempt(s)",
                (Fix("bump", ("--now", "--id", str(job.task_id))),),
                facts={"kind": "backoff"},
            ),
            Cause(
                CauseCode.BEHIND,
                "1,284 due job(s) of its type are ahead of it in claim order",
                (Fix("bump", ("--to", "0", "--id", str(job.task_id))),),
                facts={"ahead": 1284},
            ),
        ),
    )


@dataclass
class FixedSource:
    """Serves the same data every time; ``offline`` makes it behave like a lost server;
    ``why_causes`` replaces the causes :meth:`why` gives; ``quiet``: the overview of a
    queue where all is well (its panels show the busy queue's data all the same)."""

    read_only: bool = False
    description: str = "ops@db.prod.example:5432/queue"
    connection: str = "host=db.prod.example port=5432 dbname=queue user=ops password=****"
    offline: bool = False
    executed: list[PreviewInfo] = field(default_factory=list)
    why_causes: tuple[Cause, ...] | None = None
    quiet: bool = False
    #: the busy queue after every worker was killed (:func:`fixed_dead_snapshot`)
    dead_workers: bool = False
    #: a failure group first seen two minutes ago (panel 3 marks it new)
    new_group: bool = False
    #: a circuit breaker open on the timeouts' group (panels 1 and 3 mark it)
    breaker: bool = False
    #: a canary-waves requeue of the timeouts' group in progress (the audit panel)
    waves: bool = False

    def _reach(self) -> None:
        """Every read and write first: offline, it fails the way a lost server does."""
        if self.offline:
            raise SourceUnavailable("connection refused")

    def read(self, request: Read[T]) -> T:
        """The fixed answer to ``request`` (:data:`FIXED_ANSWERS`)."""
        self._reach()
        return cast(T, FIXED_ANSWERS[type(request)](self, request))

    def snapshot(self) -> Snapshot:
        snap = fixed_dead_snapshot() if self.dead_workers else fixed_snapshot()
        if self.waves:
            snap = replace(snap, audit=(*waves_audit(), *snap.audit))
        if not self.breaker:
            return snap
        held = GROUPS[0].task_types[0]
        depth = tuple(
            replace(d, breaker="breaker open 1,190", breaker_open=True)
            if d.task_type == held
            else d
            for d in snap.depth
        )
        return replace(snap, depth=depth)

    def failure_groups(self) -> FailureGroups:
        groups = (*GROUPS[:2], NEW_GROUP, *GROUPS[2:]) if self.new_group else GROUPS
        if self.breaker:
            groups = (replace(groups[0], breaker="open"), *groups[1:])
        return FailureGroups(groups, taken_at=FROZEN_AT.timestamp(), read_ms=21.0)

    def trends(self) -> Trends:
        return Trends(
            processed=fixed_wave(60, 1100, 250, 6),
            failed=fixed_wave(60, 30, 25, 3, 2),
            posted=fixed_wave(60, 1150, 200, 5),
        )

    def windows(self) -> Windows:
        """The fixed snapshot's execution times and its depth rows' finished jobs."""
        snap = fixed_snapshot()
        finished = {
            d.task_type: TypeCounts(d.task_type, 0, d.finished - d.failed, d.failed, 0)
            for d in snap.depth
        }
        return Windows(snap.exec_stats, finished, FROZEN_AT.timestamp(), 9.0)

    def health(self) -> QueueHealth:
        return QueueHealth(fixed_health(), taken_at=FROZEN_AT.timestamp(), read_ms=38.0)

    def overview(self) -> QueueOverview:
        return fixed_quiet_overview() if self.quiet else fixed_overview()

    def group_jobs(self, signature: str, limit: int) -> GroupJobs:
        group = next(g for g in GROUPS if g.signature == signature)
        jobs = fixed_group_jobs(group)
        return replace(jobs, jobs=jobs.jobs[:limit])

    def find_jobs(self, query: FindQuery) -> list[FoundJob]:
        """The first group's jobs as found jobs, each with a small payload, whatever the
        query (a fixed scene: the filters are the database's to apply), at most its limit."""
        found = []
        for i, j in enumerate(fixed_group_jobs(GROUPS[0]).jobs):
            payload = {"order_id": str(48213 + i * 7), "region": "eu" if i % 4 else "us"}
            at = j.failed_at or FROZEN_AT
            found.append(
                FoundJob(
                    j.task_id,
                    j.task_type,
                    JobStatus(j.status),
                    j.priority,
                    j.error_count,
                    at,
                    at,
                    json.dumps(payload),
                    j.error_line,
                )
            )
        return found[: query.limit]

    def common_factors(self, signature: str) -> CommonFactors:
        return CommonFactors(
            signature,
            40,
            2000,
            (
                Factor("payload.region", "eu", 36, 200, 0.9, 0.1),
                Factor("payload.customer.tier", "enterprise", 28, 340, 0.7, 0.17),
                Factor("host", "w-3", 30, 700, 0.75, 0.35),
            ),
        )

    def job_detail(self, task_id: str) -> JobDetail | None:
        """The fixed jobs' detail (the groups' jobs, the in-flight ones, the parent); None
        for any other id, as for a job that no longer exists."""
        if task_id == PARENT_JOB:
            return fixed_parent_job()
        if task_id not in _fixed_job_ids():
            return None
        job = fixed_failed_job(task_id)
        if task_id == STAGE_JOB:
            return replace(
                job,
                parent_task_id=UUID(PARENT_JOB),
                parent_task_type="checkout.validate",
                source="checkout.validate",  # a stage's source is its parent's type
                pipeline="checkout",
                stage=2,
                snooze_count=2,
            )
        return job

    def why(self, task_id: str) -> Why | None:
        job = self.job_detail(task_id)
        if job is None:
            return None
        found = fixed_why(job)
        return found if self.why_causes is None else replace(found, causes=self.why_causes)

    def jobs_by_prefix(self, text: str) -> list[JobMatch]:
        """Among the fixed jobs: the parent and the first group's jobs, by id."""
        low, high = prefix_range(text)
        known = [JobMatch(UUID(PARENT_JOB), "checkout.validate", JobStatus.PROCESSED, None)]
        known += [
            JobMatch(j.task_id, j.task_type, JobStatus(j.status), None)
            for j in fixed_group_jobs(GROUPS[0]).jobs
        ]
        found = sorted((m for m in known if low <= m.task_id <= high), key=lambda m: m.task_id)
        return found[:CANDIDATES]

    def preview(self, request: ActionRequest) -> PreviewInfo:
        self._reach()
        return _with_forecast(self._preview(request))

    def _preview(self, request: ActionRequest) -> PreviewInfo:
        target = request.target
        server = SERVER_TARGETS.get(target.kind)
        if server is not None:  # one table or session, as it is now
            return PreviewInfo(request, 1, (), None, server(request))
        if target.ids:
            count = len(target.ids)
        elif target.group:
            count = next(g.count for g in GROUPS if g.signature == target.group)
        elif request.action is ops.REAP:
            return self._reap_preview(request)
        elif request.action is ops.PURGE:
            count = 1_204_331
        else:
            count = 1284
        sample = tuple(
            f"{fixed_id(5000 + i)[:8]}  payments.charge  Error  {TIMEOUT_SIG.replace('<n>', str(48213 + i))[:70]}"
            for i in range(min(count, 3))
        )
        running = [j for j in fixed_snapshot().inflight if str(j.task_id) in target.ids]
        if running:  # jobs of the in-flight panel, as the cancel's preview lists them
            sample = tuple(
                f"{str(j.task_id)[:8]}  {j.task_type}  Processing  running on {j.worker_host}"
                f" pid {j.worker_pid}"
                for j in running
            )
        if request.dialog is Dialog.DIFF:  # an edit: the job as it is now, and the edit
            params = request.params
            assert isinstance(params, ops.EditParams)
            job = fixed_failed_job(target.ids[0])
            new_priority = params.priority
            details: dict[str, object] = {
                "old": {"payload": job.payload, "priority": job.priority},
                "new": {
                    "payload": params.payload,
                    "priority": job.priority if new_priority is None else new_priority,
                },
            }
            return PreviewInfo(request, count, sample[:1], None, details)
        if request.action is ops.REQUEUE:  # timeouts at 3 errors of the type's 4 attempts
            attempts = ops.Attempts(count, 3, 3, 4, 4, 1, 1)
            return PreviewInfo(request, count, sample, None, {"attempts": attempts.as_json()})
        return PreviewInfo(request, count, sample, None)

    def _reap_preview(self, request: ActionRequest) -> PreviewInfo:
        """The hung jobs, and their types no live worker runs (as the reap's plan says)."""
        snap = self.snapshot()
        hung = [j for j in snap.inflight if j.hung]
        sample = tuple(
            f"{str(j.task_id)[:8]}  {j.task_type}  Processing  {j.hung_reason}" for j in hung
        )
        idle = sorted({j.task_type for j in hung} - read.served_types(snap.workers))
        details: dict[str, object] = {"no_live_worker": idle} if idle else {}
        return PreviewInfo(request, len(hung), sample[:3], None, details)

    def execute(self, preview: PreviewInfo, actor: str) -> OutcomeInfo:
        self._reach()
        if self.read_only:  # as a read-only session refuses it on the server
            raise ReadOnlyError(
                f"refused: {preview.request.action.name} changes the queue and this session is read-only"
            )
        self.executed.append(preview)
        skipped = 5 if preview.count > 10 else 0
        details: dict[str, object] = {}
        if preview.request.action is ops.CANCEL and preview.request.target.ids:
            # the job shown was running: its worker stopped it
            details = {"cancelled_waiting": 0, "cancel_requested": 1, "cancelled_running": 1}
        return OutcomeInfo(
            preview.request, preview.count, preview.count - skipped, skipped, details
        )

    def close(self) -> None:
        pass


def _with_forecast(info: PreviewInfo) -> PreviewInfo:
    """The preview with its forecast at the fixed flow (an action that moves jobs), as
    ``ops.forecast`` makes it from the flow read model."""
    request = info.request
    if request.action.name not in FORECAST_ACTIONS or info.count <= 0:
        return info
    target = request.target
    group = next((g for g in GROUPS if g.signature == target.group), None)
    task_type = target.task_type or (group.task_types[0] if group else "payments.charge")
    details = cast(PreviewDetails, {**request.params.details(), **info.details})
    preview = ops.Preview(
        request.action.name,
        ops.Selection(task_type=task_type),
        info.count,
        (),
        None,
        details,
        ((task_type, info.count),),
    )
    snap = fixed_snapshot()
    rates = {
        d.task_type: d.limit.rate_count / d.limit.rate_seconds
        for d in snap.depth
        if d.limit is not None and d.limit.rate_count is not None and d.limit.rate_seconds
    }
    found = preview_forecast(preview, fixed_flows(snap), rates)
    return replace(info, forecast=found.text) if found is not None else info


def _fixed_job_ids() -> frozenset[str]:
    """The ids of the fixed jobs that have a detail: every group's jobs and the in-flight."""
    grouped = {str(j.task_id) for g in GROUPS for j in fixed_group_jobs(g).jobs}
    return frozenset(grouped | {str(j.task_id) for j in fixed_snapshot().inflight})


#: How the fixed source answers each request: by the method of its fixed data.
FIXED_ANSWERS: dict[type[Read[Any]], Callable[[FixedSource, Any], object]] = {
    SnapshotRead: lambda source, _: source.snapshot(),
    FailureGroupsRead: lambda source, _: source.failure_groups(),
    TrendsRead: lambda source, _: source.trends(),
    WindowsRead: lambda source, _: source.windows(),
    HealthRead: lambda source, _: source.health(),
    ChartsRead: lambda _source, request: fixed_charts(request.window),
    OverviewRead: lambda source, _: source.overview(),
    GroupJobsRead: lambda source, r: source.group_jobs(r.signature, r.limit),
    GroupCurveRead: lambda _source, r: fixed_curve(r.signature),
    JobRead: lambda source, r: source.job_detail(r.task_id),
    WhyRead: lambda source, r: source.why(r.task_id),
    PrefixRead: lambda source, r: source.jobs_by_prefix(r.text),
    FindRead: lambda source, r: source.find_jobs(r.query),
    FactorsRead: lambda source, r: source.common_factors(r.signature),
}


@dataclass
class FixedEngine:
    """An embedded engine that only reports a state (for screenshots)."""

    state: str = "running"
    running_count: int = 6
    processed: int = 12_840
    concurrency: int = 10
    error: str | None = None

    def start(self) -> None:
        self.state = "running"

    def stop(self) -> None:
        self.state = "stopped"
