"""What the console shows: snapshots, built off the UI thread.

The rows are the read models' own dataclasses (:mod:`skconsole.read`:
FailureGroup, InflightJob, TypeTimes, WorkerInfo, ScheduleInfo, StatusCounts,
and for the drill-downs GroupJobs and JobDetail); the widgets format them. Only what the
console adds lives here: the snapshot of one refresh cycle, the per-minute
trends, the failure groups and the queue health read on their own cadences
(FailureGroups, QueueHealth), queue
depth with its recent history (DepthRow: the read model's TypeDepth and a
trend), metrics with their rates (MetricRow), the audit log
in words (AuditRow), and with several queues each one's overview (QueueOverview:
what ``skconsole check`` reads and its verdict; QueueRow: a line of the overview). Frozen dataclasses with tuples (but DepthRow, a read model
like the others), and nothing mutates a read model once read: a snapshot
handed from a worker thread to the UI never changes under it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from skconsole.check.verdict import Models, Report
from skconsole.core.find_query import FindQuery
from skconsole.core.status import FAILED, JobStatus
from skconsole.core.text import printable
from skconsole.ops import OperatorAction, Params
from skconsole.read import (
    FailureGroup,
    InflightJob,
    ReapedAttempt,
    Replication,
    ScheduleInfo,
    StatusCounts,
    TypeDepth,
    TypeLimit,
    TypeTimes,
    WorkerInfo,
    unserved_types,
)
from skconsole.read.flow import TypeCounts
from skconsole.read.health import Health
from skconsole.views.metrics import MetricRow as MetricRow

#: a job a reap put back is told of in the in-flight panel this long after the reap
REAPED_SHOWN_S = 600.0
#: how a past minute's note of a panel it cannot rebuild begins (``Snapshot.past_notes``)
NOT_KEPT_NOTE = "not kept"


@dataclass
class DepthRow(TypeDepth):
    """Queue depth of one task type (the read model's), with its recent history for the trend."""

    trend: tuple[int, ...] = ()  # waiting (ready + scheduled) at each recent refresh
    #: ready and scheduled are scaled up from a sample of the queue (a big queue)
    estimated: bool = False
    #: the type's fleet-wide limits (``skconsole limit``); None: it has none
    limit: TypeLimit | None = None
    #: the type's SLO, the longest a ready job should wait (``skconsole slo``); None: none
    slo_s: float | None = None
    #: its jobs that failed for good (Faulted, Fatal) within the flow window (5 minutes)
    failed: int = 0
    #: its jobs that finished by running (succeeded or failed) within the flow window
    finished: int = 0
    #: its max failure rate (0 to 1; ``skconsole slo set --max-failure-rate``); None: none
    max_failure_rate: float | None = None
    #: it has ready jobs and no live worker runs it (:attr:`Snapshot.unserved`)
    no_worker: bool = False
    #: a circuit breaker holds some of its jobs back: its state and the jobs it holds
    #: ("breaker open, 1,204 held"); None: none
    breaker: str | None = None
    #: that breaker is open (not half-open): the state column is red
    breaker_open: bool = False


@dataclass(frozen=True)
class AuditRow:
    audit_id: int
    at: datetime
    #: who acted and through what: "console (maria@ops-laptop)" (ops.AuditEntry.who)
    who: str
    action: str
    #: what was done, in one line: "bump 1 job d49b4fd8 to run now" (ops.audit_line.what)
    what: str
    count: int
    #: the search that lists the jobs it was on (None: it names no jobs, e.g. a purge by age)
    jobs: FindQuery | None = None


@dataclass(frozen=True)
class FailureGroups:
    """Failed jobs grouped by error signature, as read at ``taken_at`` (console clock).

    A costly read on a big results table (it aggregates every failed row), so
    it has a slower cadence of its own, off the refresh path, and the console
    shows its age.
    """

    groups: tuple[FailureGroup, ...]
    taken_at: float
    read_ms: float = 0.0


@dataclass(frozen=True)
class QueueHealth:
    """The queue tables' health (:mod:`skconsole.read.health`), read at ``taken_at`` (console clock).

    It reads the server's activity and lock views and sizes every hot table, and it
    changes slowly, so it has a slower cadence of its own, like the failure groups.
    """

    health: Health
    taken_at: float
    read_ms: float = 0.0


@dataclass(frozen=True)
class Windows:
    """What the last minutes hold: the execution times by type (their window) and each
    type's jobs finished and failed within the flow window (5 minutes), as read at
    ``taken_at`` (console clock).

    Read on a cadence of their own (every few seconds, not every refresh): they move
    slowly, and on a big queue they are two of the refresh's costliest reads."""

    exec_stats: tuple[TypeTimes, ...] = ()
    finished: dict[str, TypeCounts] = field(default_factory=dict)
    taken_at: float = 0.0
    read_ms: float = 0.0


@dataclass(frozen=True)
class Snapshot:
    """Everything one refresh cycle read, at one moment (``taken_at``, console clock),
    with the latest failure groups (``failures``), read on their own cadence as of
    ``failures_at`` (None until they are first read), the latest queue health
    (``health``, None until first read) and the latest windows (execution times, each
    type's finished jobs: :class:`Windows`), read on cadences of their own too."""

    taken_at: float
    server_version: str = ""
    depth: tuple[DepthRow, ...] = ()
    inflight: tuple[InflightJob, ...] = ()
    failures: tuple[FailureGroup, ...] = ()
    failures_at: float | None = None
    exec_stats: tuple[TypeTimes, ...] = ()
    metrics: tuple[MetricRow, ...] = ()
    workers: tuple[WorkerInfo, ...] = ()
    audit: tuple[AuditRow, ...] = ()
    schedules: tuple[ScheduleInfo, ...] = ()  # periodic task types
    statuses: StatusCounts = field(default_factory=lambda: StatusCounts({}))  # jobs per status
    waiting: tuple[int, ...] = ()  # all waiting jobs at each recent refresh, oldest first
    read_ms: float = 0.0  # how long the database reads took
    timings: tuple[tuple[str, float], ...] = ()  # (read model, ms) of this cycle
    #: the database has Stakhanovise.NET's tables alone (skconsole.db.layout): read degraded
    degraded: bool = False
    health: QueueHealth | None = None
    #: the replication mode and the last failover (None: not read)
    replication: Replication | None = None
    #: jobs that left the in-flight list because a reap put them back, within the last
    #: minutes (:data:`REAPED_SHOWN_S`), newest first
    reaped: tuple[ReapedAttempt, ...] = ()
    #: a past minute (``skconsole --at``, a bundle): per panel scope, what its title says
    #: instead of its summary (what it shows of then, or that it is not kept); empty: the
    #: present
    past_notes: Mapping[str, str] = field(default_factory=dict)

    def kept(self, scope: str) -> bool:
        """Whether the panel ``scope`` shows what was (always, but for a past minute's
        panel it cannot rebuild: its tab then carries no note nor alarm)."""
        return not self.past_notes.get(scope, "").startswith(NOT_KEPT_NOTE)

    @property
    def hung_count(self) -> int:
        return sum(1 for r in self.inflight if r.hung)

    @property
    def unserved(self) -> tuple[str, ...]:
        """The types with ready jobs, not paused, that no live worker runs: what
        ``skconsole check`` warns of (:func:`skconsole.read.unserved_types`, the one
        definition); none on Stakhanovise.NET's tables alone, which have no registry."""
        if self.degraded or self.past_notes:  # a past minute keeps no worker's types
            return ()
        return unserved_types(self.workers, self.depth)

    @property
    def failed_jobs(self) -> int:
        return sum(g.count for g in self.failures)

    @property
    def depth_estimated(self) -> bool:
        return any(d.estimated for d in self.depth)

    @property
    def failures_age_s(self) -> float | None:
        """How old the failure groups are at ``taken_at``; None: not read yet."""
        if self.failures_at is None:
            return None
        return max(self.taken_at - self.failures_at, 0.0)

    def with_failures(self, groups: FailureGroups | None) -> Snapshot:
        """This snapshot showing ``groups`` (the latest failure-groups read)."""
        if groups is None:
            return self
        return replace(self, failures=groups.groups, failures_at=groups.taken_at)

    def with_windows(self, windows: Windows | None) -> Snapshot:
        """This snapshot showing ``windows`` (the latest read of the execution times and
        of each type's finished jobs: the depth rows' failure rates)."""
        if windows is None:
            return self
        rows = []
        for row in self.depth:
            done = windows.finished.get(row.task_type)
            rows.append(
                replace(
                    row, failed=done.failed if done else 0, finished=done.finished if done else 0
                )
            )
        return replace(self, exec_stats=windows.exec_stats, depth=tuple(rows))

    def with_health(self, health: QueueHealth | None) -> Snapshot:
        """This snapshot showing ``health`` (the latest queue-health read)."""
        return self if health is None else replace(self, health=health)


@dataclass(frozen=True)
class Trends:
    """Jobs per minute over the last hour, oldest first (the last minute is partial).

    Read on a slower cycle of its own: it changes by the minute, and it is the
    costliest read on a big results table.
    """

    processed: tuple[int, ...] = ()
    failed: tuple[int, ...] = ()
    posted: tuple[int, ...] = ()


# -- several queues ------------------------------------------------------------------
@dataclass(frozen=True)
class QueueOverview:
    """One queue as the overview of several shows it, read at ``taken_at`` (console
    clock): what ``skconsole check`` reads (``models``) and its verdict on them, and the
    jobs per status."""

    models: Models
    verdict: Report
    statuses: StatusCounts
    taken_at: float
    read_ms: float = 0.0

    @property
    def oldest_ready_s(self) -> float | None:
        """How long the oldest ready job of any type has been eligible."""
        ages = [f.oldest_ready_s for f in self.models.flows if f.oldest_ready_s is not None]
        return max(ages, default=None)

    @property
    def failed_recently(self) -> int:
        """Jobs that failed for good (Faulted, Fatal) within the flow window (5 minutes)."""
        return sum(f.failures for f in self.models.flows)

    @property
    def finished_recently(self) -> int:
        """Jobs that finished (succeeded or failed for good) within the flow window."""
        return sum(f.finished for f in self.models.flows)

    @property
    def hung(self) -> int:
        return self.models.inflight.hung

    def jobs(self, *statuses: JobStatus) -> int:
        return sum(self.statuses.counts.get(s, 0) for s in statuses)

    @property
    def failed(self) -> int:
        """Jobs whose last attempt failed (Error, Faulted, Fatal)."""
        return self.jobs(*FAILED)

    def estimated(self, *statuses: JobStatus) -> bool:
        return any(s in self.statuses.estimated for s in statuses)


@dataclass(frozen=True)
class QueueRow:
    """A line of the overview: the queue, whether the panels show it, its latest
    overview (None: none read yet) and why the latest read failed (None: it worked),
    ``attempt`` reads in a row."""

    name: str
    description: str
    shown: bool
    overview: QueueOverview | None
    error: str | None = None
    attempt: int = 0

    @property
    def connection(self) -> str:
        """live, connecting or error (the status line's words)."""
        if self.error is not None:
            return "error"
        return "connecting" if self.overview is None else "live"


# -- actions -----------------------------------------------------------------------
class TargetKind(enum.Enum):
    """What a target is: it decides how a confirmation states the scope and what it shows."""

    JOB = "job"  # one job, by id
    SHOWN = "shown jobs"  # the jobs a list shows, by id
    GROUP = "group"  # a failure group's jobs
    TYPE_JOBS = "type's jobs"  # the jobs of a task type the action acts on
    TYPE = "type"  # a task type itself (pause, limit)
    HUNG = "hung jobs"
    RESULTS = "results"  # finished results older than an age
    TABLE = "table"  # a queue table (vacuum)
    SESSION = "session"  # a server session (cancel its statement)

    @property
    def named(self) -> bool:
        """The label is the whole scope ("job 1a2b3c4d ..."); else the preview counts it."""
        return self in _NAMED


_NAMED = frozenset(
    {TargetKind.JOB, TargetKind.SHOWN, TargetKind.TYPE, TargetKind.TABLE, TargetKind.SESSION}
)


class Dialog(enum.Enum):
    """What a confirmation shows besides its question (the action's spec says whether one
    opens, and when the count must be typed)."""

    SAMPLE = "sample"  # some of the jobs it acts on
    TARGET = "target"  # the one target as the preview read it (a table, a session)
    DIFF = "diff"  # the change itself (an edit)


@dataclass(frozen=True)
class Target:
    """What an action applies to, as the operator chose it on screen.

    ``label`` says it in words for the confirmation ("group `TimeoutError: ...`");
    ``kind`` says what it is.
    """

    label: str
    kind: TargetKind
    ids: tuple[str, ...] = ()
    group: str | None = None
    task_type: str | None = None
    older_than_s: float | None = None

    def __post_init__(self) -> None:
        # a task type or signature in the label is shown in confirmations and toasts
        object.__setattr__(self, "label", printable(self.label))


@dataclass(frozen=True)
class ActionRequest:
    """One operator action (its ``skconsole.ops`` spec) on a target, with its parameters."""

    action: OperatorAction
    target: Target
    params: Params
    dialog: Dialog = Dialog.SAMPLE
    #: the queue it acts on, when the console watches several (its sentences name it)
    queue: str | None = None


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
    #: what the action's preview recorded besides the count (an edit: old and new payload)
    details: dict[str, object] = field(default_factory=dict)
    #: what follows from the action at the present flow, in one sentence (an action
    #: that moves jobs: ``ops.Preview.forecast``); "": none
    forecast: str = ""


@dataclass(frozen=True)
class OutcomeInfo:
    request: ActionRequest
    requested: int
    changed: int
    skipped: int  # changed state meanwhile, so left alone
    #: what the result recorded besides the counts (a cancel: how each job ended)
    details: dict[str, object] = field(default_factory=dict)
