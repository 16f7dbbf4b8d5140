"""Read models: what the console shows and ``skconsole status`` prints.

Each function takes an open connection and returns plain data (dataclasses
with an ``as_dict`` for JSON), so the CLI, the console and scripts share them.
Every one stays fast on a big queue (a million waiting jobs, millions of
results): where an exact count would mean reading a big table, the read model
estimates and says so (``estimated``). Queries run with JIT off: compiling a
plan costs more than these queries take.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

import psycopg
from cronsim import CronSimError

from skconsole.core.durations import format_age
from skconsole.core.errors import ConfigError
from skconsole.core.hung import HungPolicy
from skconsole.core.schedule import Schedule
from skconsole.core.signature import error_signature, final_exception_line, read_error
from skconsole.core.status import FAILED, JobStatus
from skconsole.db.layout import has_skconsole_objects
from skconsole.db.schema import RETIRED_METRICS_OWNER
from skconsole.db.sqlfiles import active_mapping, query

#: Beyond this many waiting jobs (planner estimate), depth samples the queue.
DEPTH_EXACT_LIMIT = 200_000
#: Share of the queue's pages read when depth samples, aimed at ~30,000 rows.
DEPTH_SAMPLE_ROWS = 30_000
#: A status with more rows than this (planner estimate) is estimated, not counted.
STATUS_EXACT_LIMIT = 200_000

Conn = psycopg.Connection[Any]


def _rows(
    conn: Conn, sql: LiteralString, params: Mapping[str, Any] | None = None
) -> list[tuple[Any, ...]]:
    """Run the named read query (JIT is off for every skconsole session: see db.connect).

    Never prepared: the optional filters (``%(x)s IS NULL OR ...``) need the
    plan made for the actual values.
    """
    return conn.execute(sql, params, prepare=False).fetchall()


def group_id(signature: str) -> str:
    """A short, stable id of a failure group, to type instead of its signature."""
    data = signature.encode("utf-8", errors="surrogatepass")
    return hashlib.md5(data, usedforsecurity=False).hexdigest()[:12]


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


# -- queue depth ---------------------------------------------------------------------
@dataclass
class TypeDepth:
    task_type: str
    ready: int
    scheduled: int
    in_flight: int
    oldest_ready_s: float | None
    paused: bool


@dataclass
class Depth:
    types: list[TypeDepth]
    #: ready and scheduled are scaled up from a sample of the queue's pages
    estimated: bool = False

    @property
    def ready(self) -> int:
        return sum(t.ready for t in self.types)

    @property
    def scheduled(self) -> int:
        return sum(t.scheduled for t in self.types)

    @property
    def in_flight(self) -> int:
        return sum(t.in_flight for t in self.types)

    @property
    def oldest_ready_s(self) -> float | None:
        ages = [t.oldest_ready_s for t in self.types if t.oldest_ready_s is not None]
        return max(ages) if ages else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "types": [asdict(t) for t in self.types],
            "totals": {
                "ready": self.ready,
                "scheduled": self.scheduled,
                "in_flight": self.in_flight,
                "oldest_ready_s": self.oldest_ready_s,
            },
            "estimated": self.estimated,
        }


# -- limits per task type --------------------------------------------------------------
def rate_text(count: int, seconds: float) -> str:
    """A rate limit as the CLI takes it: "10/s", "600/min" (other windows: "5/90s")."""
    unit = {1.0: "s", 60.0: "min"}.get(float(seconds), f"{seconds:g}s")
    return f"{count}/{unit}"


@dataclass(frozen=True)
class TypeLimit:
    """A task type's fleet-wide limits (None: none) and its jobs running now."""

    task_type: str
    concurrency: int | None
    rate_count: int | None
    rate_seconds: float | None
    running: int

    @property
    def rate(self) -> str | None:
        if self.rate_count is None or self.rate_seconds is None:
            return None
        return rate_text(self.rate_count, self.rate_seconds)

    @property
    def slots(self) -> str | None:
        """Running/concurrency limit: "2/5"; None without a concurrency limit."""
        return None if self.concurrency is None else f"{self.running}/{self.concurrency}"

    def summary(self, sep: str = " · ") -> str:
        """Running/concurrency limit, then the rate limit: "2/5 · 10/min"."""
        return sep.join(p for p in (self.slots, self.rate) if p)

    @property
    def saturated(self) -> bool:
        """Running at its concurrency limit: its claims wait for a slot."""
        return self.concurrency is not None and self.running >= self.concurrency

    def as_dict(self) -> dict[str, Any]:
        return {
            "task_type": self.task_type,
            "concurrency": self.concurrency,
            "rate": self.rate,
            "running": self.running,
        }


def limits(conn: Conn) -> list[TypeLimit]:
    """The task types with a concurrency or rate limit, by name (none on a database
    without skconsole's objects)."""
    if not has_skconsole_objects(conn):
        return []
    return [
        TypeLimit(
            r[0],
            None if r[1] is None else int(r[1]),
            None if r[2] is None else int(r[2]),
            None if r[3] is None else float(r[3]),
            int(r[4]),
        )
        for r in _rows(conn, query("limits"))
    ]


def table_estimates(conn: Conn) -> dict[str, int]:
    """Planner row estimates of the queue and results tables (no scan)."""
    return {str(r[0]): int(r[1]) for r in _rows(conn, query("table_estimates"))}


def depth(conn: Conn, *, exact_limit: int = DEPTH_EXACT_LIMIT) -> Depth:
    """Queue depth per task type; ready/scheduled are estimated beyond ``exact_limit`` jobs."""
    queued = table_estimates(conn).get(active_mapping().table("sk_tasks_queue_t"), 0)
    if queued <= exact_limit:
        rows, estimated = _rows(conn, query("depth")), False
    else:
        pct = max(0.1, min(100.0, 100.0 * DEPTH_SAMPLE_ROWS / max(queued, 1)))
        rows, estimated = _rows(conn, query("depth_estimated"), {"sample_pct": pct}), True
    paused = (
        {str(r[0]) for r in _rows(conn, query("paused_types"))}
        if has_skconsole_objects(conn)
        else set()
    )
    return Depth(
        [
            TypeDepth(
                r[0],
                int(r[1]),
                int(r[2]),
                int(r[3]),
                float(r[4]) if r[4] is not None else None,
                r[0] in paused,
            )
            for r in rows
        ],
        estimated,
    )


# -- jobs per status -------------------------------------------------------------------
@dataclass
class StatusCounts:
    counts: dict[int, int]
    #: statuses whose count comes from the planner's statistics
    estimated: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "statuses": {JobStatus.label_of(s): n for s, n in sorted(self.counts.items())},
            "estimated": [JobStatus.label_of(s) for s in self.estimated],
        }


def status_counts(conn: Conn) -> dict[int, int]:
    """Jobs per status code (see :func:`status_summary` for which are estimated)."""
    return status_summary(conn).counts


def status_summary(conn: Conn, *, exact_limit: int = STATUS_EXACT_LIMIT) -> StatusCounts:
    """Jobs per status: exact for small tables and small statuses; big ones estimated."""
    total = table_estimates(conn).get(active_mapping().table("sk_task_results_t"), 0)
    if total <= exact_limit:
        return StatusCounts({int(s): int(n) for s, n in _rows(conn, query("status_counts"))})
    big = {
        int(s): int(n)
        for s, n in _rows(conn, query("status_counts_estimated"))
        if int(n) > exact_limit
    }
    small = [int(s) for s in JobStatus if s not in big]
    counts = dict(big)
    for s, n in _rows(conn, query("status_count_exact"), {"statuses": small}):
        counts[int(s)] = int(n)
    return StatusCounts(dict(sorted(counts.items())), tuple(sorted(big)))


# -- in-flight jobs ------------------------------------------------------------------------
@dataclass
class InflightJob:
    task_id: UUID
    task_type: str
    attempt: int
    error_count: int
    started_at: datetime | None
    running_s: float | None
    worker_id: UUID | None
    worker_host: str | None
    worker_pid: int | None
    #: the worker's control session holds its liveness lock (None: no worker known)
    worker_connected: bool | None
    heartbeat_age_s: float | None
    timeout_s: float | None
    #: running, timed out, still running, connection lost, lease expiring, hung, ...
    state: str
    #: what is known, in words ("control connection lost, heartbeat 0.2 s ago")
    note: str | None
    hung_reason: str | None
    #: seconds until the owner's lease lapses and the job may be reaped
    reapable_in_s: float | None

    @property
    def hung(self) -> bool:
        return self.hung_reason is not None

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["task_id"] = str(self.task_id)
        d["worker_id"] = str(self.worker_id) if self.worker_id else None
        d["started_at"] = _iso(self.started_at)
        d["hung"] = self.hung
        return d


@dataclass
class Inflight:
    jobs: list[InflightJob]
    total: int
    hung: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "hung": self.hung,
            "shown": len(self.jobs),
            "jobs": [j.as_dict() for j in self.jobs],
        }


def inflight(conn: Conn, policy: HungPolicy | None = None, *, limit: int = 500) -> Inflight:
    """Jobs being processed, hung ones first, judged by ``sk_inflight_tasks()`` (on a
    database without it, by the time they have been processing alone)."""
    params = {**(policy or HungPolicy()).params(), "limit": limit}
    sql_text = query("inflight") if has_skconsole_objects(conn) else query("inflight_compat")
    rows = _rows(conn, sql_text, params)
    jobs = [
        InflightJob(
            task_id=r[0],
            task_type=r[1],
            attempt=int(r[2]),
            error_count=int(r[3]),
            started_at=r[4],
            running_s=float(r[5]) if r[5] is not None else None,
            worker_id=r[6],
            worker_host=r[7],
            worker_pid=r[8],
            worker_connected=r[9] if r[7] is not None else None,
            heartbeat_age_s=float(r[10]) if r[10] is not None else None,
            timeout_s=float(r[11]) if r[11] is not None else None,
            state=str(r[12]),
            note=r[13],
            hung_reason=r[14],
            reapable_in_s=float(r[15]) if r[15] is not None else None,
        )
        for r in rows
    ]
    total = int(rows[0][16]) if rows else 0
    hung = int(rows[0][17]) if rows else 0
    return Inflight(jobs, total, hung)


# -- failure groups --------------------------------------------------------------------------
#: failed jobs a degraded read groups at most, newest first (signatures computed here)
FAILURE_SCAN_CAP = 50_000


@dataclass(frozen=True)
class FailureScan:
    """A degraded read's groups come from the newest ``rows`` of ``total`` failed jobs."""

    rows: int
    total: int

    @property
    def capped(self) -> bool:
        return self.rows < self.total

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "total": self.total, "capped": self.capped}


@dataclass
class FailureGroup:
    signature: str
    count: int
    statuses: dict[int, int]
    task_types: list[str]
    first_seen: datetime | None
    last_seen: datetime | None
    sample_task_id: UUID | None
    sample_error: str | None
    #: set on a degraded read (no stored signatures): what the group was computed from
    scan: FailureScan | None = None

    @property
    def id(self) -> str:
        return group_id(self.signature)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "signature": self.signature,
            "count": self.count,
            "statuses": {JobStatus.label_of(s): n for s, n in self.statuses.items() if n},
            "task_types": self.task_types,
            "first_seen": _iso(self.first_seen),
            "last_seen": _iso(self.last_seen),
            "sample_task_id": str(self.sample_task_id) if self.sample_task_id else None,
            "sample_error": self.sample_error,
            **({"scan": self.scan.as_dict()} if self.scan is not None else {}),
        }


def _scan_failures(conn: Conn, cap: int) -> tuple[list[tuple[Any, ...]], FailureScan]:
    """The newest failed jobs with their signature (computed: no stored one), capped."""
    rows = _rows(conn, query("failures_scan_compat"), {"cap": cap})
    scan = FailureScan(len(rows), int(rows[0][7]) if rows else 0)
    return [(*r[:7], error_signature(r[6])) for r in rows], scan


def _computed_groups(conn: Conn, limit: int, cap: int) -> list[FailureGroup]:
    rows, scan = _scan_failures(conn, cap)
    groups: dict[str, FailureGroup] = {}
    for task_id, task_type, status, _prio, _errors, seen_at, error, signature in rows:
        g = groups.get(signature)
        if g is None:  # rows come newest first: the first is the sample
            g = groups[signature] = FailureGroup(
                signature,
                0,
                dict.fromkeys(FAILED, 0),
                [],
                seen_at,
                seen_at,
                task_id,
                final_exception_line(error),
                scan,
            )
        g.count += 1
        g.statuses[JobStatus(status)] += 1
        if task_type not in g.task_types:
            g.task_types.append(task_type)
        if seen_at is not None:
            g.first_seen = min(g.first_seen or seen_at, seen_at)
            g.last_seen = max(g.last_seen or seen_at, seen_at)
    for g in groups.values():
        g.task_types.sort()
    return sorted(groups.values(), key=lambda g: (-g.count, g.signature))[:limit]


def failure_groups(
    conn: Conn, *, limit: int = 200, scan_cap: int = FAILURE_SCAN_CAP
) -> list[FailureGroup]:
    """Failed jobs (4, 5, 6) grouped by error signature, the biggest groups first. On a
    database without stored signatures, computed over the newest ``scan_cap`` failed
    jobs (each group's ``scan`` says so)."""
    if not has_skconsole_objects(conn):
        return _computed_groups(conn, limit, scan_cap)
    return [
        FailureGroup(
            signature=r[0],
            count=int(r[1]),
            statuses=dict(zip(FAILED, (int(r[2]), int(r[3]), int(r[4])), strict=True)),
            task_types=sorted(r[5] or []),
            first_seen=r[6],
            last_seen=r[7],
            sample_task_id=r[8],
            sample_error=r[9],
        )
        for r in _rows(conn, query("failure_groups"), {"limit": limit})
    ]


@dataclass
class FailedJob:
    task_id: UUID
    task_type: str
    status: int
    priority: int
    error_count: int
    failed_at: datetime | None
    error_line: str

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["task_id"] = str(self.task_id)
        d["status"] = JobStatus.label_of(self.status)
        d["failed_at"] = _iso(self.failed_at)
        return d


@dataclass
class GroupJobs:
    signature: str
    total: int
    jobs: list[FailedJob]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": group_id(self.signature),
            "signature": self.signature,
            "total": self.total,
            "jobs": [j.as_dict() for j in self.jobs],
        }


def failure_jobs(
    conn: Conn, signature: str, *, limit: int = 200, scan_cap: int = FAILURE_SCAN_CAP
) -> GroupJobs:
    """The jobs of one failure group (drill-down), latest failure first."""
    if not has_skconsole_objects(conn):
        scanned, _ = _scan_failures(conn, scan_cap)
        mine = [r for r in scanned if r[7] == signature]
        jobs = [
            FailedJob(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), r[5], final_exception_line(r[6]))
            for r in mine[:limit]
        ]
        return GroupJobs(signature, len(mine), jobs)
    rows = _rows(conn, query("failure_jobs"), {"signature": signature, "limit": limit})
    jobs = [FailedJob(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), r[5], r[6] or "") for r in rows]
    return GroupJobs(signature, int(rows[0][7]) if rows else 0, jobs)


@dataclass
class JobDetail:
    task_id: UUID
    task_type: str
    source: str
    payload: str | None
    status: int
    priority: int
    error_count: int
    last_error: str | None
    recoverable: bool
    processing_ms: int
    posted_at: datetime | None
    first_attempt_at: datetime | None
    last_attempt_at: datetime | None
    finalized_at: datetime | None
    owner_worker_id: UUID | None
    attempt: int
    signature: str | None
    #: when the job becomes (or became) eligible, if it waits in the queue
    queued_until: datetime | None
    #: the job whose success posted this one (a pipeline's previous stage, or a
    #: handler's ctx.post); None for a job a producer posted
    parent_task_id: UUID | None = None
    #: the parent's type; None when there is no parent, or it was purged
    parent_task_type: str | None = None
    #: a pipeline's stage job: the pipeline and its stage (2, 3, ...; the first has neither)
    pipeline: str | None = None
    stage: int | None = None
    #: how often a handler asked to run it later (raise Snooze): not errors
    snooze_count: int = 0
    #: the jobs its success posted (its next stage, its ctx.post jobs)
    children: int = 0

    @property
    def queued(self) -> bool:
        return self.queued_until is not None

    @property
    def parent_purged(self) -> bool:
        """It names a parent whose result row is gone."""
        return self.parent_task_id is not None and self.parent_task_type is None

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k, v in d.items():
            if isinstance(v, datetime):
                d[k] = v.isoformat()
            elif isinstance(v, UUID):
                d[k] = str(v)
        d["status_name"] = JobStatus.label_of(self.status)
        d["queued"] = self.queued
        d["parent_purged"] = self.parent_purged
        error = read_error(self.last_error)
        d["error"] = error.as_dict() if error is not None else None
        return d


def job(conn: Conn, task_id: UUID) -> JobDetail | None:
    """Everything stored about one job, the full last error included."""
    sql_text = query("job") if has_skconsole_objects(conn) else query("job_compat")
    rows = _rows(conn, sql_text, {"task_id": task_id})
    if not rows:
        return None
    r = rows[0]
    return JobDetail(
        r[0],
        r[1],
        r[2],
        r[3],
        int(r[4]),
        int(r[5]),
        int(r[6]),
        r[7],
        bool(r[8]),
        int(r[9]),
        r[10],
        r[11],
        r[12],
        r[13],
        r[14],
        int(r[15]),
        r[16],
        r[17],
        parent_task_id=r[18],
        parent_task_type=r[19],
        pipeline=r[20],
        stage=int(r[21]) if r[21] is not None else None,
        snooze_count=int(r[22] or 0),
        children=int(r[23]),
    )


# -- execution times ------------------------------------------------------------------------
RECENT_WINDOW_S = 3600.0
RECENT_LIMIT = 10_000


@dataclass
class TypeTimes:
    """Execution times of one task type, in milliseconds.

    ``cycles`` to ``longest_ms`` sum the per-process rows of
    sk_task_execution_time_stats_t. The percentiles come from the most recent
    processed jobs (``sample`` of them: at most RECENT_LIMIT, within
    RECENT_WINDOW_S, over all types). ``last_ms`` is the latest processed job's
    time when one is in that sample, else the largest "last" a process reported.
    """

    task_type: str
    cycles: int
    total_ms: int
    fastest_ms: int | None
    longest_ms: int | None
    last_ms: int | None
    sample: int
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None

    @property
    def avg_ms(self) -> float | None:
        return self.total_ms / self.cycles if self.cycles else None

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "avg_ms": self.avg_ms}


def execution_stats(
    conn: Conn, *, window_s: float = RECENT_WINDOW_S, recent_limit: int = RECENT_LIMIT
) -> list[TypeTimes]:
    """Execution-time statistics per task type (see :class:`TypeTimes`)."""

    def num(v: Any) -> float | None:
        return float(v) if v is not None else None

    def whole(v: Any) -> int | None:
        return int(v) if v is not None else None

    rows = _rows(
        conn, query("execution_stats"), {"window_s": window_s, "recent_limit": recent_limit}
    )
    return [
        TypeTimes(
            task_type=r[0],
            cycles=int(r[1] or 0),
            total_ms=int(r[2] or 0),
            fastest_ms=whole(r[3]),
            longest_ms=whole(r[4]),
            last_ms=whole(r[5]),
            sample=int(r[6]),
            p50_ms=num(r[7]),
            p95_ms=num(r[8]),
            p99_ms=num(r[9]),
        )
        for r in rows
    ]


# -- app metrics ----------------------------------------------------------------------------
class MetricKind(enum.Enum):
    """How a metric adds up over processes (metrics.sql decides it from the id)."""

    SUM = "sum"  # a counter or a total: summed
    MIN = "min"  # each process's minimum: the least
    MAX = "max"  # each process's maximum: the greatest


@dataclass(frozen=True)
class Metric:
    category: str
    metric_id: str
    #: over processes by ``kind``; None: no process has a value yet (a .NET process
    #: starts its minimum and maximum metrics at long.MaxValue and long.MinValue)
    value: int | None
    processes: int
    updated_at: datetime | None
    kind: MetricKind = MetricKind.SUM


@dataclass(frozen=True)
class MetricsSnapshot:
    """App metrics over owner processes (each by its kind), read at ``taken_at`` (caller's
    clock)."""

    metrics: tuple[Metric, ...]
    taken_at: float = 0.0

    def values(self) -> dict[str, int | None]:
        return {m.metric_id: m.value for m in self.metrics}

    def counters(self) -> dict[str, int]:
        """The summed metrics that have a value: the ones a rate means something for."""
        return {
            m.metric_id: m.value
            for m in self.metrics
            if m.kind is MetricKind.SUM and m.value is not None
        }

    def by_category(self) -> dict[str, list[Metric]]:
        out: dict[str, list[Metric]] = {}
        for m in self.metrics:
            out.setdefault(m.category, []).append(m)
        return out

    def as_dict(self, rates: Mapping[str, float | None] | None = None) -> dict[str, Any]:
        return {
            "categories": {
                category: [
                    {
                        "metric_id": m.metric_id,
                        "kind": m.kind.value,
                        "value": m.value,
                        "processes": m.processes,
                        "updated_at": _iso(m.updated_at),
                        "rate_per_s": (rates or {}).get(m.metric_id),
                    }
                    for m in ms
                ]
                for category, ms in self.by_category().items()
            }
        }


def metrics(conn: Conn, *, taken_at: float = 0.0) -> MetricsSnapshot:
    """App metrics by category, over owner processes (see :class:`MetricKind`)."""
    rows = _rows(conn, query("metrics"), {"retired": RETIRED_METRICS_OWNER})
    return MetricsSnapshot(
        tuple(
            Metric(
                r[0],
                r[1],
                int(r[3]) if r[3] is not None else None,
                int(r[4]),
                r[5],
                MetricKind(r[2]),
            )
            for r in rows
        ),
        taken_at,
    )


def metric_rates(
    before: MetricsSnapshot, after: MetricsSnapshot, elapsed_s: float
) -> dict[str, float | None]:
    """Per-second rate of each summed metric of ``after`` since ``before`` (a pure
    function); a minimum or maximum has none.

    None where no rate can be told: no elapsed time, a metric absent from
    ``before``, or a value that went down (a process's rows were deleted).
    """
    old = before.counters()
    rates: dict[str, float | None] = {}
    for metric_id, value in after.counters().items():
        prev = old.get(metric_id)
        if elapsed_s <= 0 or prev is None or value < prev:
            rates[metric_id] = None
        else:
            rates[metric_id] = (value - prev) / elapsed_s
    return rates


# -- workers --------------------------------------------------------------------------------
@dataclass
class WorkerInfo:
    worker_id: UUID
    process_id: str
    host: str
    pid: int
    concurrency: int
    task_types: list[str]
    started_at: datetime
    heartbeat_age_s: float
    stopped: bool
    #: its control session holds its liveness lock
    connected: bool
    in_flight: int
    #: alive, connection lost, lease expiring, unresponsive, gone or stopped (sk_worker_liveness)
    state: str
    note: str
    lease_s: float

    @property
    def alive(self) -> bool:
        return self.state == "alive"

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["worker_id"] = str(self.worker_id)
        d["started_at"] = self.started_at.isoformat()
        d["alive"] = self.alive
        return d


def workers(conn: Conn) -> list[WorkerInfo]:
    """Registered worker processes with their liveness (``sk_worker_liveness()``); none
    on a database without skconsole's objects (Stakhanovise.NET's workers register nowhere)."""
    if not has_skconsole_objects(conn):
        return []
    rows = _rows(conn, query("workers"))
    return [
        WorkerInfo(
            worker_id=r[0],
            process_id=r[1],
            host=r[2],
            pid=int(r[3]),
            concurrency=int(r[4]),
            task_types=list(r[5]),
            started_at=r[6],
            heartbeat_age_s=float(r[7]),
            stopped=bool(r[8]),
            connected=bool(r[9]),
            in_flight=int(r[10]),
            state=str(r[11]),
            note=str(r[12]),
            lease_s=float(r[13]),
        )
        for r in rows
    ]


# -- periodic jobs ---------------------------------------------------------------------------
#: a due tick nobody has taken after this long is late: no worker that runs the
#: type is taking its ticks (a running one takes a due tick within a second or two)
SCHEDULE_LATE_AFTER_S = 10.0


@dataclass
class ScheduleInfo:
    """One periodic task type, as the workers that run it published it (sk_schedules_t).

    ``schedule`` says what it is ("every 30s", "cron 0 3 * * * (Europe/Paris)").
    A definition this version cannot read (a cron expression or a time zone
    written by another version) is shown as stored, ``error`` says why, and it
    has no next run. Ages and waits count from the server's clock at the read.
    """

    task_type: str
    schedule: str
    cron: str | None
    every_s: float | None
    timezone: str
    missed: str
    payload: str | None
    #: why the definition cannot be read (None: it can)
    error: str | None
    #: the type is paused: its ticks are not taken, so it has no next run
    paused: bool
    next_run: datetime | None
    next_run_in_s: float | None
    #: how long its latest due tick has waited untaken, past SCHEDULE_LATE_AFTER_S
    late_s: float | None
    #: the latest tick taken (posted, or skipped as missed)
    last_tick: datetime | None
    #: the job of the latest posted tick, its status (None: purged) and when it was posted
    last_task_id: UUID | None
    last_status: int | None
    last_posted_at: datetime | None
    last_posted_age_s: float | None
    #: its jobs in the queue (ready or scheduled), as the depth read model counts
    #: them: estimated from a sample on a big queue (``waiting_estimated``)
    waiting: int
    waiting_estimated: bool
    defined_at: datetime | None
    #: live workers that schedule it (0: none: removed from the code, or its workers
    #: are gone; None: a live worker of an older version, which does not say, might)
    scheduled_by: int | None = None

    @property
    def orphaned(self) -> bool:
        """No live worker schedules it: no tick will be posted."""
        return self.scheduled_by == 0

    @property
    def last_job_purged(self) -> bool:
        """A tick was posted, but its job's result row is gone."""
        return self.last_task_id is not None and self.last_status is None

    @property
    def next_run_text(self) -> str:
        """When its next job is posted, in words: "in 12s", "paused", "late 5m 02s"
        (a due tick nobody took: no worker runs the type), "unreadable"."""
        if self.error is not None:
            return "unreadable"
        if self.paused:
            return "paused"
        if self.orphaned:
            return "no worker schedules it"
        if self.late_s is not None:
            return f"late {format_age(self.late_s)}"
        return f"in {format_age(self.next_run_in_s)}" if self.next_run_in_s is not None else "-"

    @property
    def last_job_text(self) -> str:
        """Its latest posted job's status: "Processed", "purged", or "-" (none posted)."""
        if self.last_task_id is None:
            return "-"
        return "purged" if self.last_status is None else JobStatus.label_of(self.last_status)

    def as_dict(self) -> dict[str, Any]:
        return {
            "task_type": self.task_type,
            "schedule": self.schedule,
            "cron": self.cron,
            "every_s": self.every_s,
            "timezone": self.timezone,
            "missed": self.missed,
            "payload": self.payload,
            "error": self.error,
            "paused": self.paused,
            "next_run": _iso(self.next_run),
            "next_run_in_s": self.next_run_in_s,
            "late_s": self.late_s,
            "last_tick": _iso(self.last_tick),
            "last_task_id": str(self.last_task_id) if self.last_task_id else None,
            "last_status": (
                JobStatus.label_of(self.last_status) if self.last_status is not None else None
            ),
            "last_job_purged": self.last_job_purged,
            "last_posted_at": _iso(self.last_posted_at),
            "last_posted_age_s": self.last_posted_age_s,
            "waiting": self.waiting,
            "waiting_estimated": self.waiting_estimated,
            "defined_at": _iso(self.defined_at),
            "scheduled_by": self.scheduled_by,
        }


def _stored_schedule(cron: str | None, every_s: float | None, timezone: str) -> str:
    """A definition as stored, for one this version cannot read."""
    parts = [f"cron {cron}"] if cron is not None else []
    if every_s is not None:
        parts.append(f"every {every_s:g}s")
    text = ", ".join(parts) or "no period"
    return text if timezone == "UTC" else f"{text} ({timezone})"


def _schedule_info(r: Sequence[Any], waiting: int, estimated: bool) -> ScheduleInfo:
    now: datetime = r[0]
    task_type, cron, every_s, timezone, payload, missed = r[1:7]
    last_tick, last_task_id, posted_at, defined_at = r[7:11]
    paused, last_status = bool(r[11]), r[12]
    scheduled_by = int(r[13]) if r[13] is not None else None
    every_s = float(every_s) if every_s is not None else None
    timezone = timezone or "UTC"
    description, error = _stored_schedule(cron, every_s, timezone), None
    next_run = late_s = None
    try:
        schedule = Schedule(
            cron=cron, every=every_s, timezone=timezone, payload=payload, missed=missed
        )
        description = schedule.describe()
        due, upcoming = schedule.latest_tick(now), schedule.next_tick(now)
    except (ConfigError, CronSimError, ValueError, OverflowError, OSError, StopIteration) as exc:
        error = str(exc) or type(exc).__name__
    else:
        waited = (now - due).total_seconds()
        if not paused and scheduled_by != 0:
            next_run = upcoming
            if (last_tick is None or due > last_tick) and waited > SCHEDULE_LATE_AFTER_S:
                late_s = waited
    return ScheduleInfo(
        task_type=task_type,
        schedule=description,
        cron=cron,
        every_s=every_s,
        timezone=timezone,
        missed=str(missed),
        payload=payload,
        error=error,
        paused=paused,
        next_run=next_run,
        next_run_in_s=(next_run - now).total_seconds() if next_run is not None else None,
        late_s=late_s,
        last_tick=last_tick,
        last_task_id=last_task_id,
        last_status=int(last_status) if last_status is not None else None,
        last_posted_at=posted_at,
        last_posted_age_s=(
            max((now - posted_at).total_seconds(), 0.0) if posted_at is not None else None
        ),
        waiting=waiting,
        waiting_estimated=estimated,
        defined_at=defined_at,
        scheduled_by=scheduled_by,
    )


def schedules(conn: Conn, *, queue: Depth | None = None) -> list[ScheduleInfo]:
    """Every periodic task type: its next run (from the server's clock), its latest
    posted job and that job's status, and how many of its jobs wait (see ScheduleInfo).

    ``queue``: the queue depth, if the caller has just read it (the console's
    refresh does); otherwise it is read here, only when there is a schedule.
    """
    if not has_skconsole_objects(conn):
        return []
    rows = _rows(conn, query("schedules"))
    if not rows:
        return []
    queue = queue if queue is not None else depth(conn)
    waiting = {t.task_type: t.ready + t.scheduled for t in queue.types}
    return [_schedule_info(r, waiting.get(r[1], 0), queue.estimated) for r in rows]


# -- throughput history ----------------------------------------------------------------------
@dataclass(frozen=True)
class Minute:
    minute: datetime
    posted: int
    processed: int
    failed: int


@dataclass
class History:
    """Per minute over the last ``len(minutes)`` minutes, oldest first; the last is partial."""

    minutes: list[Minute] = field(default_factory=list)

    def series(self, name: str) -> list[int]:
        """One line of the trend: "posted", "processed" or "failed"."""
        return [int(getattr(m, name)) for m in self.minutes]

    def as_dict(self) -> dict[str, Any]:
        return {
            "minutes": [
                {
                    "minute": m.minute.isoformat(),
                    "posted": m.posted,
                    "processed": m.processed,
                    "failed": m.failed,
                }
                for m in self.minutes
            ]
        }


def history(conn: Conn, *, minutes: int = 60) -> History:
    """Jobs posted, processed and failed per minute (failed: jobs whose latest attempt failed)."""
    rows = _rows(conn, query("history"), {"minutes": max(1, minutes)})
    return History([Minute(r[0], int(r[1]), int(r[2]), int(r[3])) for r in rows])


# -- the overview of ``skconsole status`` -----------------------------------------------------
def overview(conn: Conn) -> dict[str, Any]:
    """The stable JSON document of ``skconsole status --json`` (documented in the README)."""
    d = depth(conn)
    summary = status_summary(conn)
    counts = summary.counts
    ws = workers(conn)
    version = conn.execute(query("server_version")).fetchone()
    return {
        "server_version": version[0] if version else None,
        "depth": d.as_dict(),
        "statuses": {
            JobStatus.label_of(s): counts.get(s, 0)
            for s in sorted({int(s) for s in JobStatus} | set(counts))
        },
        "workers": [w.as_dict() for w in ws],
        "oldest_ready_s": d.oldest_ready_s,
        "estimated": {
            "depth": d.estimated,
            "statuses": [JobStatus.label_of(s) for s in summary.estimated],
        },
    }


def as_json_list(items: Sequence[Any]) -> list[dict[str, Any]]:
    """``as_dict()`` of each item: the JSON of a list-valued read model."""
    return [i.as_dict() for i in items]
