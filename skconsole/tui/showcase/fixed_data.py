"""The fixed scene behind the console's snapshot tests and screenshots: a queue at
03:12 one night, with failure groups, hung jobs, a held horizon and a blocked lock.

Every value is built from the frozen clock (:mod:`.frozen`, :data:`FROZEN_AT`), so each
screen draws the same on every run. The queue tables' health is :mod:`.fixed_health`;
the scene's tests take all of it from here.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from uuid import UUID

from skconsole.core.find_query import FindQuery
from skconsole.core.states import InflightState, WorkerState
from skconsole.core.status import JobStatus
from skconsole.read import (
    FailedJob,
    FailureGroup,
    GroupJobs,
    InflightJob,
    JobDetail,
    Progress,
    ReapedAttempt,
    ScheduleInfo,
    StatusCounts,
    TypeLimit,
    TypeTimes,
    WorkerInfo,
)
from skconsole.read.attempts import ChildJob
from skconsole.tui.model import (
    AuditRow,
    DepthRow,
    MetricRow,
    Snapshot,
)
from skconsole.tui.showcase.fixed_health import BLOCKER_PID, HOLDER_PID, fixed_health
from skconsole.tui.showcase.frozen import FROZEN_AT, FrozenClock, ago, fixed_id, fixed_wave

__all__ = [
    "BLOCKER_PID",
    "FROZEN_AT",
    "GROUPS",
    "HOLDER_PID",
    "NEW_GROUP",
    "PARENT_JOB",
    "STAGE_JOB",
    "TIMEOUT_SIG",
    "FrozenClock",
    "fixed_dead_snapshot",
    "fixed_failed_job",
    "fixed_group_jobs",
    "fixed_health",
    "fixed_id",
    "fixed_parent_job",
    "fixed_snapshot",
    "fixed_wave",
]


TIMEOUT_SIG = (
    "UpstreamTimeout: timeout after <n>s calling https://api.partner.example/v2/orders/<n>"
)


E, F, X = JobStatus.ERROR, JobStatus.FAULTED, JobStatus.FATAL


#: each failure group: its signature; its failed jobs, their task types, how many ended in
#: each status, and how long ago (s) the first and the last of them failed
_GROUP_ROWS: tuple[tuple[str, tuple[int, tuple[str, ...], dict[int, int], int, int]], ...] = (
    (TIMEOUT_SIG, (1284, ("payments.charge",), {E: 1190, F: 94}, 3 * 3600 + 240, 4)),
    (
        "PaymentDeclined: card declined for customer cus_<n>: insufficient funds",
        (342, ("payments.charge",), {X: 342}, 26 * 3600, 95),
    ),
    (
        "ConnectionRefusedError: connection refused by cache-<n>.internal:6379",
        (97, ("emails.send", "webhooks.deliver"), {E: 88, F: 9}, 1800, 12),
    ),
    (
        "KeyError: \"'shipping_address' missing in order <n>\"",
        (41, ("orders.ship",), {F: 41}, 5 * 3600, 600),
    ),
    (
        "skconsole.HungJob: worker gone (<host> pid <n>): no heartbeat for <n> s",
        (7, ("reports.nightly",), {E: 7}, 420, 380),
    ),
    (
        "ValueError: cannot parse amount '<n>,00' for invoice INV-<n>",
        (12, ("invoices.import",), {X: 12}, 7200, 3000),
    ),
)
#: the failure groups, no sample job of their own (:func:`fixed_group_jobs` lists them)
GROUPS = tuple(
    FailureGroup(signature, count, statuses, list(types), ago(first), ago(last), None, None)
    for signature, (count, types, statuses, first, last) in _GROUP_ROWS
)


#: a group no one has seen before: first seen 2 minutes ago (FixedSource(new_group=True))
NEW_GROUP = FailureGroup(
    "RateLimited: 429 Too Many Requests from https://api.partner.example/v2/orders/<n>",
    318,
    {E: 318},
    ["payments.charge"],
    ago(120),
    ago(2),
    None,
    None,
)


def fixed_group_jobs(group: FailureGroup) -> GroupJobs:
    """The group's latest 60 jobs at the most, 37 s apart: its task types and its statuses
    (up to 40 jobs of each) in turn."""
    statuses = [status for status, n in group.statuses.items() for _ in range(min(n, 40))]
    jobs = [
        FailedJob(
            task_id=UUID(fixed_id(5000 + i)),
            task_type=group.task_types[i % len(group.task_types)],
            status=statuses[i % len(statuses)],
            priority=i % 3,
            error_count=1 + i % 5,
            failed_at=ago(4 + i * 37),
            error_line=group.signature.replace("<n>", str(48213 + i * 7)),
        )
        for i in range(min(group.count, 60))
    ]
    return GroupJobs(group.signature, group.count, jobs)


def _depth_rows() -> tuple[DepthRow, ...]:
    """The queue by type: one over its wait SLO, one over its failure rate, one paused,
    two idle (one of them failing every job)."""
    return (
        DepthRow(
            "emails.send",
            1204,
            36,
            8,
            252.0,
            False,
            fixed_wave(30, 900, 300, 4),
            limit=TypeLimit("emails.send", 8, 600, 60.0, 8),
            slo_s=180.0,  # its oldest ready job waited 4m 12s: breached
            failed=3,
            finished=420,
        ),
        # idle: nothing waiting (dimmed, listed last)
        DepthRow("invoices.import", 0, 0, 0, None, False, (0,) * 30),
        DepthRow(
            "orders.ship",
            57,
            2,
            3,
            8.5,
            False,
            fixed_wave(30, 50, 10, 3, 1),
            slo_s=10.0,
            finished=40,
        ),
        DepthRow(
            "payments.charge",
            312,
            1284,
            2,
            12.0,
            False,
            fixed_wave(30, 1200, 350, 5, 2),
            limit=TypeLimit("payments.charge", None, 10, 1.0, 2),
            slo_s=60.0,
            failed=38,
            finished=260,
            max_failure_rate=0.1,  # 15% failed: over it
        ),
        # nothing waiting, but every job of the last 5 minutes failed: dimmed, its rate red
        DepthRow("pdf.render", 0, 0, 0, None, False, (0,) * 30, failed=72, finished=72),
        DepthRow("reports.nightly", 0, 14, 1, None, False, (15,) * 20 + (14,) * 10),
        DepthRow(
            "thumbnails.render", 5120, 0, 0, 2280.0, True, tuple(4000 + 40 * i for i in range(30))
        ),
        DepthRow(
            "webhooks.deliver",
            88,
            3,
            6,
            3.2,
            False,
            fixed_wave(30, 90, 40, 2, 3),
            limit=TypeLimit("webhooks.deliver", 10, None, None, 6),
            failed=9,
            finished=120,
        ),
    )


def _inflight(
    n: int,
    task_type: str,
    worker: tuple[str, int],
    running_s: float,
    heartbeat_age_s: float,
    attempt: int,
    state: InflightState,
    note: str,
    hung_reason: str | None,
    progress: Progress | None = None,
) -> InflightJob:
    """A job ``n`` (its id number) on ``worker`` (host, pid), in its ``attempt`` (every
    earlier one failed); its worker connected unless the state says it lost its connection."""
    host, pid = worker
    return InflightJob(
        task_id=UUID(fixed_id(n)),
        task_type=task_type,
        attempt=attempt,
        error_count=attempt - 1,
        started_at=ago(running_s),
        running_s=running_s,
        worker_id=None,
        worker_host=host,
        worker_pid=pid,
        worker_connected=state is not InflightState.CONNECTION_LOST,
        heartbeat_age_s=heartbeat_age_s,
        timeout_s=None,
        state=state,
        note=note,
        hung_reason=hung_reason,
        reapable_in_s=None,
        progress=progress,
    )


def _inflight_jobs() -> tuple[InflightJob, ...]:
    """Five jobs in trouble (hung, timed out, ignoring a cancel, cut off from their
    worker), then 17 running on three web hosts."""
    return (
        _inflight(
            101,
            "reports.nightly",
            ("batch-2", 3310),
            4210.0,
            95.0,
            1,
            InflightState.HUNG,
            "silent for 95.4 s, still connected",
            "worker unresponsive (batch-2 pid 3310): no heartbeat for 95.4 s, connection still open",
            Progress(0.18, "scanning orders", ago(96.0)),
        ),
        _inflight(
            102,
            "orders.ship",
            ("web-7", 4412),
            380.0,
            381.0,
            2,
            InflightState.HUNG,
            "silent for 381 s, no connection",
            "worker gone (web-7 pid 4412): no heartbeat for 381 s",
        ),
        _inflight(
            103,
            "webhooks.deliver",
            ("web-3", 2207),
            75.4,
            1.2,
            1,
            InflightState.TIMED_OUT,
            "timed out 15.4 s ago, still running",
            None,
        ),
        _inflight(
            105,
            "reports.export",
            ("batch-1", 3120),
            140.0,
            0.6,
            1,
            InflightState.CANCEL_IGNORED,
            "cancel requested 42.3 s ago, still running",
            None,
            Progress(0.62, "page 31 of 50", ago(0.8)),
        ),
        _inflight(
            104,
            "payments.charge",
            ("web-2", 2201),
            12.5,
            0.2,
            1,
            InflightState.CONNECTION_LOST,
            "control connection lost, heartbeat 0.2 s ago",
            None,
        ),
        *(
            _inflight(
                200 + i,
                typ,
                (f"web-{1 + i % 3}", 2200 + i % 3),
                0.4 + i * 0.7,
                1.1,
                1,
                InflightState.RUNNING,
                "heartbeat 1.1 s ago",
                None,
            )
            for i, typ in enumerate(
                ["emails.send"] * 8
                + ["webhooks.deliver"] * 5
                + ["payments.charge"] * 2
                + ["orders.ship"] * 2
            )
        ),
    )


def _times(
    task_type: str,
    cycles: int,
    avg_ms: int,
    pcts: tuple[float, float, float],
    spread: tuple[int, int, int],
    sample: int,
) -> TypeTimes:
    """Execution times: ``pcts`` are p50, p95, p99; ``spread`` fastest, longest, last (ms)
    of the ``sample`` recent runs (the latest 10,000 of all types, together); every run
    reported: ``cycles``, a slower tail and a faster head."""
    fastest, longest, last = spread
    p50, p95, p99 = pcts
    assert fastest <= p50 <= p95 <= p99 <= longest, task_type
    return TypeTimes(
        task_type=task_type,
        cycles=cycles,
        total_ms=avg_ms * cycles,
        fastest_ms=max(1, fastest // 2),
        longest_ms=longest * 2,
        last_ms=last,
        sample=sample,
        p50_ms=p50,
        p95_ms=p95,
        p99_ms=p99,
        recent_avg_ms=float(avg_ms),
        recent_fastest_ms=fastest,
        recent_longest_ms=longest,
        recent_last_ms=last,
    )


#: execution times by type: runs reported, their mean (ms), p50, p95, p99 (ms), the
#: fastest, longest and last of the recent sample (ms), and the sample's size
_TIMES_ROWS = (
    ("emails.send", 184_220, 412, (380.0, 910.0, 1840.0), (31, 29_800, 402), 6_118),
    ("orders.ship", 12_004, 1210, (990.0, 3100.0, 5200.0), (120, 61_000, 870), 410),
    ("payments.charge", 48_310, 2240, (1400.0, 30_100.0, 31_900.0), (88, 33_000, 31_020), 1_630),
    (
        "reports.nightly",
        61,
        184_000,
        (171_000.0, 402_000.0, 433_000.0),
        (95_000, 433_000, 190_400),
        3,
    ),
    ("webhooks.deliver", 96_400, 95, (61.0, 310.0, 1200.0), (4, 60_000, 58), 1_839),
)


def _metrics() -> tuple[MetricRow, ...]:
    """The workers' counters, with their rates per second."""
    return (
        MetricRow("listener@reconnect-count", "task-queue-notification-listener", 3, 0.0),
        MetricRow(
            "listener@task-notification-count", "task-queue-notification-listener", 402_118, 21.4
        ),
        MetricRow("poller@dequeue-count", "task-poller", 341_006, 18.2),
        MetricRow("queue-consumer@total-dequeue-duration", "task-queue-consumer", 1_904_221, 96.0),
        MetricRow("reaper@reaped-count", "task-reaper", 7, 0.0),
        MetricRow("result-queue@result-writes-count", "task-result-queue", 340_982, 18.1),
        MetricRow("worker@failed-processed-payload-count", "task-worker", 1_791, 0.9),
        MetricRow("worker@fenced-result-count", "task-worker", 1, 0.0),
        MetricRow("worker@processed-payload-count", "task-worker", 340_982, 18.1),
        MetricRow("worker@successful-processed-payload-count", "task-worker", 339_191, 17.2),
        MetricRow("worker@total-processing-time", "task-worker", 120_551_004, 6_310.0),
    )


def fixed_worker(
    n: int,
    host: str,
    pid: int,
    state: str,
    heartbeat_age_s: float,
    concurrency: int,
    in_flight: int,
    task_types: tuple[str, ...],
) -> WorkerInfo:
    """A worker ``n`` (its id number) on ``host``, up a day longer than its heartbeat's
    age; its control session still open unless its ``state`` (a :class:`WorkerState`
    value) says it lost it, went or stopped."""
    worker_state = WorkerState(state)
    return WorkerInfo(
        worker_id=UUID(fixed_id(n)),
        process_id=f"{host}:{pid}",
        host=host,
        pid=pid,
        concurrency=concurrency,
        task_types=list(task_types),
        started_at=ago(heartbeat_age_s + 86_400),
        heartbeat_age_s=heartbeat_age_s,
        stopped=worker_state is WorkerState.STOPPED,
        connected=worker_state
        in (WorkerState.ALIVE, WorkerState.LEASE_EXPIRING, WorkerState.UNRESPONSIVE),
        in_flight=in_flight,
        state=worker_state,
        note="",
        lease_s=30.0,
        # the fleet mid-deploy: one host already runs the next release
        app_version="1.8.3" if n % 2 else "1.8.2",
    )


#: the fleet mid-incident: id number, host, pid, state, heartbeat age (s), concurrency,
#: jobs in flight, task types
_WORKER_ROWS = (
    (901, "web-1", 2200, "alive", 0.8, 10, 7, ("emails.send", "webhooks.deliver")),
    (902, "web-2", 2201, "connection lost", 0.2, 10, 6, ("emails.send", "payments.charge")),
    (903, "web-3", 2207, "alive", 1.2, 10, 5, ("orders.ship", "webhooks.deliver")),
    (904, "batch-2", 3310, "unresponsive", 95.0, 2, 1, ("reports.nightly",)),
    (905, "web-7", 4412, "gone", 381.0, 10, 1, ("orders.ship",)),
    (906, "web-5", 1980, "stopped", 86_000.0, 10, 0, ("emails.send",)),
)


def waves_audit() -> tuple[AuditRow, ...]:
    """A canary-waves requeue of the timeouts' group in progress, newest first: its first
    two waves requeued (the second after the first passed its gate)."""
    group = "group `UpstreamTimeout: timeout after <n>s calling https://api.partner...`"
    waves = "error counts kept, in waves 1%,10%,50%,100% gated at 95%"
    return (
        AuditRow(
            14,
            ago(40),
            "worker (web-1)",
            "requeue",
            f"requeue 115 jobs in {group}, {waves}, wave 2 of 4 of waves requeue #7",
            115,
        ),
        AuditRow(
            13,
            ago(160),
            "console (maria@ops-laptop)",
            "requeue",
            f"requeue 13 jobs in {group}, {waves}, wave 1 of 4 of waves requeue #7",
            13,
        ),
    )


def _audit() -> tuple[AuditRow, ...]:
    """The operators' latest actions, newest first."""
    return (
        AuditRow(
            12,
            ago(900),
            "console (maria@ops-laptop)",
            "requeue",
            "requeue 18 jobs in group `KeyError: ...`, error counts reset to 0,"
            " due over the next 5m",
            18,
        ),
        AuditRow(
            11,
            ago(5400),
            "console (maria@ops-laptop)",
            "pause",
            "pause type thumbnails.render",
            1,
            FindQuery(task_type="thumbnails.render"),
        ),
        AuditRow(
            10,
            ago(86_400),
            "cli (deploy@ci-runner)",
            "purge",
            "purge 1,204,331 results older than 30d",
            1_204_331,
        ),
    )


def _schedule(
    task_type: str,
    schedule: str,
    next_run_in_s: float | None,
    last: tuple[int, int | None, float] | None,
    waiting: int = 0,
    *,
    paused: bool = False,
    late_s: float | None = None,
    error: str | None = None,
) -> ScheduleInfo:
    """A periodic type; ``last``: its latest job (id number, status or None if purged,
    posted this many seconds ago)."""
    task_id, status, age = last if last is not None else (None, None, None)
    return ScheduleInfo(
        task_type=task_type,
        schedule=schedule,
        cron=schedule.removeprefix("cron ") if schedule.startswith("cron") else None,
        every_s=None if schedule.startswith("cron") else 30.0,
        timezone="UTC",
        missed="once",
        payload=None,
        error=error,
        paused=paused,
        next_run=None if next_run_in_s is None else FROZEN_AT + timedelta(seconds=next_run_in_s),
        next_run_in_s=next_run_in_s,
        late_s=late_s,
        last_tick=None if age is None else ago(age),
        last_task_id=None if task_id is None else UUID(fixed_id(task_id)),
        last_status=status,
        last_posted_at=None if age is None else ago(age),
        last_posted_age_s=age,
        waiting=waiting,
        waiting_estimated=False,
        defined_at=ago(30 * 86_400),
    )


def _schedules() -> tuple[ScheduleInfo, ...]:
    """The periodic types: one with a time zone it cannot find, one late, one paused."""
    return (
        _schedule("invoices.import", "cron */30 * * * *", 18 * 60, (301, JobStatus.PROCESSED, 720)),
        _schedule(
            "legacy.export",
            "cron 0 4 * * * (Europe/Lutetia)",
            None,
            (302, None, 3 * 86_400 + 3600),
            error="unknown time zone 'Europe/Lutetia': use an IANA name such as UTC or Europe/Paris",
        ),
        _schedule(
            "payments.reconcile",
            "every 5m",
            110.0,
            (303, JobStatus.FATAL, 1090.0),
            late_s=850.0,
        ),
        _schedule(
            "reports.nightly",
            "cron 0 3 * * * (Europe/Paris)",
            22 * 3600 + 48 * 60,
            (101, JobStatus.PROCESSING, 4210.0),
        ),
        _schedule(
            "thumbnails.render",
            "cron 0 * * * *",
            None,
            (304, JobStatus.PROCESSED, 5400.0),
            5120,
            paused=True,
        ),
        _schedule("webhooks.retry_sweep", "every 30s", 18.0, (305, JobStatus.PROCESSED, 12.0), 1),
    )


#: jobs a live worker's reaper put back in the last minutes (their workers' leases had
#: lapsed): id number, seconds ago, host, pid, the status the reap left them in
_REAPED_ROWS = (
    (401, 170.0, "web-9", 5120, JobStatus.ERROR),
    (402, 170.0, "web-9", 5120, JobStatus.ERROR),
    (403, 171.0, "web-9", 5120, JobStatus.FAULTED),
    (404, 460.0, "web-4", 2290, JobStatus.ERROR),
)


def _reaped() -> tuple[ReapedAttempt, ...]:
    return tuple(
        ReapedAttempt(UUID(fixed_id(n)), ago(age), host, pid, status)
        for n, age, host, pid, status in _REAPED_ROWS
    )


def fixed_snapshot() -> Snapshot:
    """The busy queue at the frozen clock, every panel's rows built afresh (as each read
    builds its own)."""
    depth = _depth_rows()
    return Snapshot(
        taken_at=FROZEN_AT.timestamp(),
        server_version="16.4",
        depth=depth,
        inflight=_inflight_jobs(),
        exec_stats=tuple(_times(*row) for row in _TIMES_ROWS),
        metrics=_metrics(),
        workers=tuple(fixed_worker(*row) for row in _WORKER_ROWS),
        audit=_audit(),
        schedules=_schedules(),
        statuses=StatusCounts(
            {
                JobStatus.UNPROCESSED: 6781,
                JobStatus.PROCESSING: 20,
                JobStatus.PROCESSED: 339_191,
                JobStatus.ERROR: 1285,
                JobStatus.FAULTED: 144,
                JobStatus.FATAL: 354,
                JobStatus.CANCELLED: 12,
            }
        ),
        waiting=tuple(sum(d.trend[i] for d in depth) for i in range(30)),
        read_ms=38.0,
        reaped=_reaped(),
    )


#: how long ago every worker of the dead-workers scene was killed (kill -9)
KILLED_S = 351.0


def _killed(job: InflightJob) -> InflightJob:
    """A job of the busy queue, its worker killed :data:`KILLED_S` ago: hung, nothing
    reaping it."""
    who = f"{job.worker_host} pid {job.worker_pid}"
    return replace(
        job,
        running_s=(job.running_s or 0.0) + KILLED_S,
        started_at=ago((job.running_s or 0.0) + KILLED_S),
        heartbeat_age_s=KILLED_S,
        worker_connected=False,
        state=InflightState.HUNG,
        note=f"silent for {KILLED_S:g} s, no connection",
        hung_reason=f"worker gone ({who}): no heartbeat for {KILLED_S:g} s",
    )


def fixed_dead_snapshot() -> Snapshot:
    """The busy queue :data:`KILLED_S` after every worker was killed (kill -9): each gone
    with the jobs it held, hung, and no live worker to reap them or to take the ready
    jobs, whose oldest have waited since; a worker stopped yesterday is no longer listed."""
    busy = fixed_snapshot()
    workers = tuple(
        fixed_worker(n, host, pid, "gone", KILLED_S, slots, jobs, types)
        if state != "stopped"
        else fixed_worker(n, host, pid, state, age, slots, jobs, types)
        for n, host, pid, state, age, slots, jobs, types in _WORKER_ROWS
    )
    depth = tuple(
        replace(d, oldest_ready_s=max(d.oldest_ready_s or 0.0, KILLED_S)) if d.ready else d
        for d in busy.depth
    )
    return replace(
        busy,
        workers=workers,
        inflight=tuple(_killed(j) for j in busy.inflight),
        depth=depth,
        reaped=(),
    )


OWNER = fixed_id(902)  # web-2 pid 2201: the worker of the job shown in detail
#: the second job of every group's list is a pipeline's stage 2, posted by this job
STAGE_JOB = fixed_id(5001)
PARENT_JOB = fixed_id(4000)


TRACEBACK = """Traceback (most recent call last):
  File "/srv/app/skconsole/worker/engine.py", line 342, in _run_job
    await asyncio.wait_for(task.handler(*args), task.options.timeout)
  File "/srv/app/payments/tasks.py", line 88, in charge
    receipt = await partner.create_order(order_id, amount=payload["amount"])
  File "/srv/app/payments/partner.py", line 41, in create_order
    raise UpstreamTimeout(f"timeout after {elapsed:.0f}s calling {url}")
payments.partner.UpstreamTimeout: timeout after 31s calling https://api.partner.example/v2/orders/48213"""


def _checkout_job(
    task_id: str,
    task_type: str,
    payload: str,
    status: JobStatus,
    tries: tuple[int, int],
    ages: tuple[float, float, float, float],
    processing_ms: int,
    last_error: str | None = None,
    child_jobs: tuple[ChildJob, ...] = (),
) -> JobDetail:
    """A job of the checkout pipeline, posted from web-2 and last run by ``OWNER``
    (recoverable if it failed); ``tries``: its attempt and its error count; ``ages``: how
    many seconds ago it was posted, first tried, last tried and finalized."""
    attempt, error_count = tries
    posted, first_attempt, last_attempt, finalized = ages
    return JobDetail(
        task_id=UUID(task_id),
        task_type=task_type,
        source="checkout@web-2:2201",
        payload=payload,
        status=status,
        priority=1,
        error_count=error_count,
        last_error=last_error,
        recoverable=last_error is not None,
        processing_ms=processing_ms,
        posted_at=ago(posted),
        first_attempt_at=ago(first_attempt),
        last_attempt_at=ago(last_attempt),
        finalized_at=ago(finalized),
        owner_worker_id=UUID(OWNER),
        attempt=attempt,
        signature=None,
        queued_until=None,
        children=len(child_jobs),
        child_jobs=child_jobs,
    )


def fixed_failed_job(task_id: str) -> JobDetail:
    return _checkout_job(
        task_id,
        "payments.charge",
        '{"order_id": 48213, "amount": "129.90", "currency": "EUR", "customer": "cus_00048213"}',
        JobStatus.FAULTED,
        (5, 5),
        (3 * 3600 + 240, 3 * 3600 + 239, 35, 4),
        155_210,
        last_error=TRACEBACK,
    )


def fixed_parent_job() -> JobDetail:
    """The first stage of the checkout pipeline: it succeeded and posted the next one."""
    return _checkout_job(
        PARENT_JOB,
        "checkout.validate",
        '{"order_id": 48213, "cart": "c_88412"}',
        JobStatus.PROCESSED,
        (1, 0),
        (3 * 3600 + 242, 3 * 3600 + 241, 3 * 3600 + 241, 3 * 3600 + 240),
        184,
        child_jobs=(ChildJob(UUID(STAGE_JOB), "checkout.charge", JobStatus.FAULTED),),
    )
