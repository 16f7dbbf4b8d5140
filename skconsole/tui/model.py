"""What the console shows: immutable snapshots, built off the UI thread.

These are the console's own view of the read models. :mod:`skconsole.tui.data`
converts whatever ``skconsole.stats`` returns into them, so widgets never
depend on the shape of a query result, and a fixed data source for snapshot
tests and screenshots can build them by hand. Frozen dataclasses with tuples:
a snapshot handed from a worker thread to the UI can never change under it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from skconsole.text import printable


@dataclass(frozen=True)
class DepthRow:
    """Queue depth of one task type, with its recent history for the trend."""

    task_type: str
    ready: int
    scheduled: int
    in_flight: int
    oldest_ready_s: float | None
    paused: bool
    trend: tuple[int, ...] = ()  # waiting (ready + scheduled) at each recent refresh


@dataclass(frozen=True)
class InflightRow:
    task_id: str
    task_type: str
    worker: str  # "host pid N", or "-" when no owner is recorded
    running_s: float | None
    heartbeat_age_s: float | None
    attempt: int
    state: str  # running, timed out, still running, connection lost, ..., hung (sk_inflight_tasks)
    note: str | None  # what is known, in words
    hung_reason: str | None

    @property
    def hung(self) -> bool:
        return self.hung_reason is not None


@dataclass(frozen=True)
class FailureGroup:
    """Failed jobs sharing one normalized error signature."""

    key: str  # what identifies the group to ``ops`` (its selection value)
    signature: str
    count: int
    task_types: tuple[str, ...]
    statuses: tuple[tuple[str, int], ...]  # (status name, jobs) — most first
    first_seen: datetime | None
    last_seen: datetime | None


@dataclass(frozen=True)
class ExecStat:
    """Execution time of one task type, in milliseconds."""

    task_type: str
    runs: int
    avg_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    fastest_ms: float | None
    longest_ms: float | None
    last_ms: float | None


@dataclass(frozen=True)
class MetricRow:
    metric_id: str
    category: str
    value: int
    rate_per_s: float | None  # None until two samples are known


@dataclass(frozen=True)
class WorkerRow:
    worker_id: str
    host: str
    pid: int
    state: str  # alive, connection lost, lease expiring, unresponsive, gone, stopped
    heartbeat_age_s: float | None
    concurrency: int
    in_flight: int
    task_types: tuple[str, ...]


@dataclass(frozen=True)
class AuditRow:
    audit_id: int
    at: datetime
    user: str
    host: str
    action: str
    selection: str
    count: int


@dataclass(frozen=True)
class Snapshot:
    """Everything one refresh cycle read, at one moment (``taken_at``, console clock)."""

    taken_at: float
    server_version: str = ""
    depth: tuple[DepthRow, ...] = ()
    inflight: tuple[InflightRow, ...] = ()
    failures: tuple[FailureGroup, ...] = ()
    exec_stats: tuple[ExecStat, ...] = ()
    metrics: tuple[MetricRow, ...] = ()
    workers: tuple[WorkerRow, ...] = ()
    audit: tuple[AuditRow, ...] = ()
    statuses: tuple[tuple[str, int], ...] = ()  # jobs per status name
    waiting: tuple[int, ...] = ()  # all waiting jobs at each recent refresh, oldest first
    read_ms: float = 0.0  # how long the database reads took
    timings: tuple[tuple[str, float], ...] = ()  # (read model, ms) of this cycle

    @property
    def hung_count(self) -> int:
        return sum(1 for r in self.inflight if r.hung)

    @property
    def failed_jobs(self) -> int:
        return sum(g.count for g in self.failures)


@dataclass(frozen=True)
class Trends:
    """Jobs per minute over the last hour, oldest first (the last minute is partial).

    Read on a slower cycle of its own: it changes by the minute, and it is the
    costliest read on a big results table.
    """

    processed: tuple[int, ...] = ()
    failed: tuple[int, ...] = ()
    posted: tuple[int, ...] = ()


@dataclass(frozen=True)
class JobRow:
    """One job in a failure group's list."""

    task_id: str
    task_type: str
    status: str
    error_count: int
    priority: int
    last_attempt_at: datetime | None
    error_line: str


@dataclass(frozen=True)
class GroupJobs:
    group_key: str
    total: int
    jobs: tuple[JobRow, ...]


@dataclass(frozen=True)
class JobDetail:
    """Everything known about one job: what to read before deciding, and what to copy."""

    task_id: str
    task_type: str
    source: str
    status: str
    priority: int
    error_count: int
    recoverable: bool
    posted_at: datetime | None
    first_attempt_at: datetime | None
    last_attempt_at: datetime | None
    finalized_at: datetime | None
    processing_ms: int
    attempt: int
    owner: str
    payload: str | None
    last_error: str | None
    queued: bool = False  # a queue row exists (waiting, delayed or backing off)
    extra: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    def as_text(self) -> str:
        """The job as plain text, for the clipboard or a bug report."""
        lines = [
            f"task_id: {self.task_id}",
            f"type: {self.task_type}",
            f"source: {self.source}",
            f"status: {self.status}",
            f"priority: {self.priority}",
            f"errors: {self.error_count} (last recoverable: {'yes' if self.recoverable else 'no'})",
            f"attempt: {self.attempt}  owner: {self.owner}",
            f"posted: {_iso(self.posted_at)}",
            f"first attempt: {_iso(self.first_attempt_at)}",
            f"last attempt: {_iso(self.last_attempt_at)}",
            f"finalized: {_iso(self.finalized_at)}",
            f"processing time: {self.processing_ms} ms",
            *(f"{k}: {v}" for k, v in self.extra),
            "",
            "payload:",
            self.payload if self.payload is not None else "null",
            "",
            "last error:",
            self.last_error or "-",
        ]
        return "\n".join(lines)


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value is not None else "-"


# -- actions -----------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """What an action applies to, as the operator chose it on screen.

    ``label`` says it in words for the confirmation ("group `TimeoutError: ...`").
    """

    label: str
    ids: tuple[str, ...] = ()
    group: str | None = None
    task_type: str | None = None
    statuses: tuple[int, ...] = ()
    older_than_s: float | None = None

    def __post_init__(self) -> None:
        # a task type or signature in the label is shown in confirmations and toasts
        object.__setattr__(self, "label", printable(self.label))


@dataclass(frozen=True)
class ActionRequest:
    """One operator action: requeue, bump, cancel, reap, purge, pause or resume."""

    kind: str
    target: Target
    priority: int | None = None  # bump: the new priority


@dataclass(frozen=True)
class PreviewInfo:
    """What an action would touch, captured when the confirmation opened.

    ``handle`` is the data source's own object (``ops``' preview with its ids):
    executing passes it back, so the action changes what was shown and no more.
    """

    request: ActionRequest
    count: int
    sample: tuple[str, ...]
    handle: object = None


@dataclass(frozen=True)
class OutcomeInfo:
    request: ActionRequest
    requested: int
    changed: int
    skipped: int  # changed state meanwhile, so left alone
