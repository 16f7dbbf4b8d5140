"""The fixed scene behind the console's snapshot tests and screenshots: a queue at
03:12 one night, with failure groups, hung jobs, a held horizon and a blocked lock.

Every value is built from the frozen clock (:data:`FROZEN_AT`), so each screen
draws the same on every run.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from uuid import UUID

from skconsole.check.verdict import Models
from skconsole.core.find_query import FindQuery
from skconsole.core.states import InflightState, WorkerState
from skconsole.core.status import JobStatus
from skconsole.read import (
    FailedJob,
    FailureGroup,
    GroupJobs,
    Inflight,
    InflightJob,
    JobDetail,
    Progress,
    ScheduleInfo,
    StatusCounts,
    TypeLimit,
    TypeTimes,
    WorkerInfo,
    health,
)
from skconsole.read.attempts import ChildJob
from skconsole.read.flow import WINDOW_S, TypeFlow
from skconsole.tui.model import (
    AuditRow,
    DepthRow,
    MetricRow,
    QueueOverview,
    Snapshot,
)

FROZEN_AT = datetime(2025, 3, 14, 3, 12, 0, tzinfo=UTC)


class FrozenClock:
    """A clock that moves only when told to."""

    def __init__(self, at: datetime = FROZEN_AT) -> None:
        self.now = at.timestamp()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def _ago(seconds: float) -> datetime:
    return FROZEN_AT - timedelta(seconds=seconds)


def fixed_wave(
    n: int, base: float, amp: float, period: float, phase: float = 0.0
) -> tuple[int, ...]:
    return tuple(max(int(base + amp * math.sin((i + phase) / period)), 0) for i in range(n))


def fixed_id(n: int) -> str:
    return f"{n:08x}-7c1e-4b9a-9f3d-{n * 7919:012x}"


def _group(
    signature: str,
    count: int,
    task_types: tuple[str, ...],
    statuses: dict[int, int],
    first_seen: datetime,
    last_seen: datetime,
) -> FailureGroup:
    return FailureGroup(
        signature=signature,
        count=count,
        statuses=statuses,
        task_types=list(task_types),
        first_seen=first_seen,
        last_seen=last_seen,
        sample_task_id=None,
        sample_error=None,
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
    host, pid = worker
    return InflightJob(
        task_id=UUID(fixed_id(n)),
        task_type=task_type,
        attempt=attempt,
        error_count=attempt - 1,
        started_at=_ago(running_s),
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


def _worker(
    n: int,
    host: str,
    pid: int,
    state: str,
    heartbeat_age_s: float,
    concurrency: int,
    in_flight: int,
    task_types: tuple[str, ...],
) -> WorkerInfo:
    return WorkerInfo(
        worker_id=UUID(fixed_id(n)),
        process_id=f"{host}:{pid}",
        host=host,
        pid=pid,
        concurrency=concurrency,
        task_types=list(task_types),
        started_at=_ago(heartbeat_age_s + 86_400),
        heartbeat_age_s=heartbeat_age_s,
        stopped=WorkerState(state) is WorkerState.STOPPED,
        connected=WorkerState(state)
        in (WorkerState.ALIVE, WorkerState.LEASE_EXPIRING, WorkerState.UNRESPONSIVE),
        in_flight=in_flight,
        state=WorkerState(state),
        note="",
        lease_s=30.0,
        # the fleet mid-deploy: one host already runs the next release
        app_version="1.8.3" if n % 2 else "1.8.2",
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
        last_tick=None if age is None else _ago(age),
        last_task_id=None if task_id is None else UUID(fixed_id(task_id)),
        last_status=status,
        last_posted_at=None if age is None else _ago(age),
        last_posted_age_s=age,
        waiting=waiting,
        waiting_estimated=False,
        defined_at=_ago(30 * 86_400),
    )


TIMEOUT_SIG = (
    "UpstreamTimeout: timeout after <n>s calling https://api.partner.example/v2/orders/<n>"
)

E, F, X = JobStatus.ERROR, JobStatus.FAULTED, JobStatus.FATAL

GROUPS = (
    _group(
        TIMEOUT_SIG, 1284, ("payments.charge",), {E: 1190, F: 94}, _ago(3 * 3600 + 240), _ago(4)
    ),
    _group(
        "PaymentDeclined: card declined for customer cus_<n>: insufficient funds",
        342,
        ("payments.charge",),
        {X: 342},
        _ago(26 * 3600),
        _ago(95),
    ),
    _group(
        "ConnectionRefusedError: connection refused by cache-<n>.internal:6379",
        97,
        ("emails.send", "webhooks.deliver"),
        {E: 88, F: 9},
        _ago(1800),
        _ago(12),
    ),
    _group(
        "KeyError: \"'shipping_address' missing in order <n>\"",
        41,
        ("orders.ship",),
        {F: 41},
        _ago(5 * 3600),
        _ago(600),
    ),
    _group(
        "skconsole.HungJob: worker gone (<host> pid <n>): no heartbeat for <n> s",
        7,
        ("reports.nightly",),
        {E: 7},
        _ago(420),
        _ago(380),
    ),
    _group(
        "ValueError: cannot parse amount '<n>,00' for invoice INV-<n>",
        12,
        ("invoices.import",),
        {X: 12},
        _ago(7200),
        _ago(3000),
    ),
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


def fixed_snapshot() -> Snapshot:
    t = FROZEN_AT.timestamp()
    depth = (
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
    inflight = (
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
            Progress(0.18, "scanning orders", _ago(96.0)),
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
            Progress(0.62, "page 31 of 50", _ago(0.8)),
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
    exec_stats = (
        _times("emails.send", 184_220, 412, (380.0, 910.0, 1840.0), (31, 29_800, 402), 6_118),
        _times("orders.ship", 12_004, 1210, (990.0, 3100.0, 5200.0), (120, 61_000, 870), 410),
        _times(
            "payments.charge",
            48_310,
            2240,
            (1400.0, 30_100.0, 31_900.0),
            (88, 33_000, 31_020),
            1_630,
        ),
        _times(
            "reports.nightly",
            61,
            184_000,
            (171_000.0, 402_000.0, 433_000.0),
            (95_000, 433_000, 190_400),
            3,
        ),
        _times("webhooks.deliver", 96_400, 95, (61.0, 310.0, 1200.0), (4, 60_000, 58), 1_839),
    )
    metrics = (
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
    workers = (
        _worker(901, "web-1", 2200, "alive", 0.8, 10, 7, ("emails.send", "webhooks.deliver")),
        _worker(
            902,
            "web-2",
            2201,
            "connection lost",
            0.2,
            10,
            6,
            ("emails.send", "payments.charge"),
        ),
        _worker(903, "web-3", 2207, "alive", 1.2, 10, 5, ("orders.ship", "webhooks.deliver")),
        _worker(904, "batch-2", 3310, "unresponsive", 95.0, 2, 1, ("reports.nightly",)),
        _worker(905, "web-7", 4412, "gone", 381.0, 10, 1, ("orders.ship",)),
        _worker(906, "web-5", 1980, "stopped", 86_000.0, 10, 0, ("emails.send",)),
    )
    audit = (
        AuditRow(
            12, _ago(900), "maria", "ops-laptop", "requeue", "group `KeyError: ...` (ids 18)", 18
        ),
        AuditRow(
            11,
            _ago(5400),
            "maria",
            "ops-laptop",
            "pause",
            "type thumbnails.render",
            1,
            FindQuery(task_type="thumbnails.render"),
        ),
        AuditRow(
            10, _ago(86_400), "deploy", "ci-runner", "purge", "finished older than 30d", 1_204_331
        ),
    )
    schedules = (
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
    return Snapshot(
        taken_at=t,
        server_version="16.4",
        depth=depth,
        inflight=inflight,
        exec_stats=exec_stats,
        metrics=metrics,
        workers=workers,
        audit=audit,
        schedules=schedules,
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
    )


def fixed_group_jobs(group: FailureGroup) -> GroupJobs:
    statuses = [status for status, n in group.statuses.items() for _ in range(min(n, 40))]
    jobs = [
        FailedJob(
            task_id=UUID(fixed_id(5000 + i)),
            task_type=group.task_types[i % len(group.task_types)],
            status=statuses[i % len(statuses)],
            priority=i % 3,
            error_count=1 + i % 5,
            failed_at=_ago(4 + i * 37),
            error_line=group.signature.replace("<n>", str(48213 + i * 7)),
        )
        for i in range(min(group.count, 60))
    ]
    return GroupJobs(group.signature, group.count, jobs)


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
        posted_at=_ago(posted),
        first_attempt_at=_ago(first_attempt),
        last_attempt_at=_ago(last_attempt),
        finalized_at=_ago(finalized),
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


HEALTH_SERVER = {
    "autovacuum": "on",
    "track_counts": "on",
    "autovacuum_naptime": "60",
    "autovacuum_vacuum_scale_factor": "0.2",
    "autovacuum_vacuum_threshold": "50",
    "autovacuum_analyze_scale_factor": "0.1",
    "autovacuum_analyze_threshold": "50",
    "autovacuum_vacuum_cost_delay": "2",
    "autovacuum_vacuum_cost_limit": "-1",
    "vacuum_cost_delay": "0",
    "vacuum_cost_limit": "200",
}
#: the forgotten report session holding the horizon, and the one blocking a worker
HOLDER_PID = 4242
BLOCKER_PID = 5120


def _table_health(
    name: str, live: int, dead: int, size: int, autovacuumed_s: float, running: str | None = None
) -> health.TableHealth:
    return health.TableHealth(
        table=name,
        live_rows=live,
        dead_rows=dead,
        table_bytes=size,
        index_bytes=size // 3,
        last_vacuum=None,
        last_autovacuum=_ago(autovacuumed_s),
        last_analyze=None,
        last_autoanalyze=_ago(autovacuumed_s),
        vacuum_running="autovacuum" if running else None,
        vacuum_phase=running,
        autovacuum=health.autovacuum_settings(HEALTH_SERVER, None),
    )


def _session(
    pid: int,
    who: tuple[str | None, str | None],
    state: str | None,
    xact_age_s: float | None,
    ages: tuple[int | None, int | None],
    query: str | None,
    visible: bool = True,
) -> health.Session:
    user, application = who
    return health.Session(
        pid=pid,
        user=user,
        application=application,
        client="10.4.2.17" if visible else None,
        state=state,
        backend_type="client backend" if visible else None,
        backend_start=_ago(4 * 3600 + pid) if visible else None,
        xact_age_s=xact_age_s,
        xmin_age=ages[0],
        xid_age=ages[1],
        query=query,
        wait_event=None,
        visible=visible,
    )


def fixed_health() -> health.Health:
    """A queue mostly dead because a report left open for 2h holds the horizon, and a
    worker waiting on a row an operator's UPDATE holds."""
    tables = [
        _table_health("sk_tasks_queue_t", 48_210, 912_400, 318 * 2**20, 8040, "scanning heap"),
        _table_health("sk_task_results_t", 5_210_334, 41_120, 1_940 * 2**20, 3_130),
        _table_health("sk_metrics_t", 1_204, 310, 456 * 2**10, 611),
        _table_health("sk_task_execution_time_stats_t", 38, 12, 64 * 2**10, 611),
    ]
    holder = _session(
        HOLDER_PID,
        ("report_ro", "psql"),
        "idle in transaction",
        7_392.0,
        (1_843_211, None),
        "SELECT task_type, count(*) FROM sk_task_results_t WHERE task_status = 5 GROUP BY 1;",
    )
    blocker = _session(
        BLOCKER_PID,
        ("ops", "pgAdmin 4"),
        "active",
        48.0,
        (212, 212),
        "UPDATE sk_tasks_queue_t SET task_priority = 0 WHERE task_type = 'emails.send';",
    )
    hidden = _session(6001, ("etl", "airflow"), None, None, (1_020, None), None, visible=False)
    wait = health.LockWait(
        pid=3311,
        user="queue",
        application="skconsole-worker",
        query="UPDATE sk_tasks_queue_t SET task_locked_until = $1 WHERE task_id = ANY($2)",
        waited_s=41.0,
        lock_type="transactionid",
        mode="ShareLock",
        table="sk_tasks_queue_t",
        blocked_by=(BLOCKER_PID,),
    )
    horizon = health.Horizon(
        1_843_211, 7_392.0, holder.describe(), [holder, hidden, blocker], [], []
    )
    advice = health.advise(tables, horizon, [wait], [blocker], HEALTH_SERVER, FROZEN_AT)
    return health.Health(
        taken_at=FROZEN_AT,
        tables=tables,
        horizon=horizon,
        lock_waits=[wait],
        blockers=[blocker],
        advice=advice,
        settings=HEALTH_SERVER,
        role="ops",
        hidden=[
            "without pg_read_all_stats, other roles' sessions show only pid, user, application"
            " and transaction ages: their query, state, start times, client and waits are hidden",
            "1 session(s) listed here belong to other roles (details hidden)",
        ],
    )


# -- several queues: the overview ---------------------------------------------------------------
#: the queues of the overview scene: the busy queue above, a quiet one, one that is down
FIXED_QUEUES = ("payments", "emails", "search")


def _flows(snapshot: Snapshot) -> tuple[TypeFlow, ...]:
    """The depth rows as the flow read model has them (what check judges)."""
    return tuple(
        TypeFlow(
            task_type=d.task_type,
            window_s=WINDOW_S,
            arrivals=d.finished,
            completions=d.finished - d.failed,
            ready=d.ready,
            ready_estimated=d.estimated,
            oldest_ready_s=d.oldest_ready_s,
            slo_max_wait_s=d.slo_s,
            paused=d.paused,
            failures=d.failed,
            slo_max_failure_rate=d.max_failure_rate,
        )
        for d in snapshot.depth
    )


def fixed_overview() -> QueueOverview:
    """The busy queue of :func:`fixed_snapshot` as the overview reads it and check judges it."""
    snap = fixed_snapshot()
    models = Models(
        _flows(snap),
        Inflight(list(snap.inflight), len(snap.inflight), snap.hung_count),
        snap.workers,
        fixed_health(),
        snap.schedules,
    )
    return QueueOverview(models, models.evaluate(), snap.statuses, snap.taken_at, read_ms=64.0)


def fixed_quiet_overview() -> QueueOverview:
    """A queue where all is well: two types kept well within their SLO by two workers."""
    flows = (
        TypeFlow("emails.digest", WINDOW_S, 40, 41, 3, False, 0.8, 60.0, False),
        TypeFlow("emails.send", WINDOW_S, 1_310, 1_302, 12, False, 1.6, 30.0, False, failures=2),
    )
    served = ("emails.digest", "emails.send")
    workers = (
        _worker(911, "mail-1", 1200, "alive", 0.6, 20, 4, served),
        _worker(912, "mail-2", 1204, "alive", 1.1, 20, 3, served),
    )
    quiet = fixed_health()
    calm = health.Health(
        taken_at=FROZEN_AT,
        tables=quiet.tables,
        horizon=health.Horizon(None, None, None, [], [], []),
        lock_waits=[],
        blockers=[],
        advice=[],
        settings=HEALTH_SERVER,
        role="ops",
    )
    models = Models(flows, Inflight([], 7, 0), workers, calm, ())
    statuses = StatusCounts(
        {
            int(JobStatus.UNPROCESSED): 15,
            int(JobStatus.PROCESSING): 7,
            int(JobStatus.PROCESSED): 2_481_930,
            int(JobStatus.ERROR): 1,
            int(JobStatus.FAULTED): 2,
            int(JobStatus.FATAL): 0,
            int(JobStatus.CANCELLED): 14,
        },
        (int(JobStatus.PROCESSED),),
    )
    return QueueOverview(
        models, models.evaluate(), statuses, FROZEN_AT.timestamp() - 1.0, read_ms=22.0
    )
