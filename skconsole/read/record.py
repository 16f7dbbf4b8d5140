"""The per-minute record: what the queue did, minute by minute, for as long as it keeps.

The record (sql/schema/146_skconsole_record.sql) is written by the statements that
change jobs and kept apart from the job rows, so a purge or a retention pass does not
delete the past: the console's charts, ``skconsole status history``, the console at a
past minute (``--at``) and an incident bundle all read it here. A database with
Stakhanovise.NET's tables alone has no record; there the same read is made from the job
rows (``record_compat.sql``), which keep each job's latest attempt only and go when
they are purged: :attr:`Record.source` says which, and :data:`FROM_ROWS_NOTE` says it
in words.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from skconsole.core.json_types import JsonObject
from skconsole.core.latency import Histogram, Latency
from skconsole.core.record_grains import aligned, grain_for
from skconsole.db.layout import has_skconsole_objects
from skconsole.read.query import Conn, fetch, iso

#: what a read from the job rows leaves out, in one line
FROM_ROWS_NOTE = (
    "from the job rows (no skconsole record in this database): only each job's latest"
    " attempt, no reaps, failure signatures or latencies, and a purge deletes this past"
)


#: how old the oldest unrolled minute may be before a read says no roll runs (a worker
#: rolls every 10 s, and only finished minutes)
UNROLLED_WARN = timedelta(minutes=10)

#: the type name a ``combined`` read gives every type's counts under (no type has it:
#: a type name has 1 to 250 characters)
COMBINED = ""


class RecordSource(enum.Enum):
    """Where a record read came from."""

    #: skconsole's per-minute record: every attempt, kept through purges
    RECORD = "record"
    #: the job rows (a database with Stakhanovise.NET's tables alone)
    ROWS = "rows"


@dataclass(frozen=True)
class Counts:
    """What happened in one step (a minute or more) of one type, or of all types."""

    posted: int = 0
    started: int = 0
    succeeded: int = 0
    failed_recoverable: int = 0
    failed_faulted: int = 0
    failed_fatal: int = 0
    cancelled: int = 0
    reaped: int = 0
    wait: Histogram = field(default_factory=Histogram)
    run: Histogram = field(default_factory=Histogram)

    @property
    def failed(self) -> int:
        """Failed attempts of every kind (recoverable, faulted, fatal)."""
        return self.failed_recoverable + self.failed_faulted + self.failed_fatal

    @property
    def ended(self) -> int:
        """Attempts that ended: succeeded or failed (a reap is a failed attempt)."""
        return self.succeeded + self.failed

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.posted + other.posted,
            self.started + other.started,
            self.succeeded + other.succeeded,
            self.failed_recoverable + other.failed_recoverable,
            self.failed_faulted + other.failed_faulted,
            self.failed_fatal + other.failed_fatal,
            self.cancelled + other.cancelled,
            self.reaped + other.reaped,
            self.wait + other.wait,
            self.run + other.run,
        )

    @property
    def wait_latency(self) -> Latency:
        return self.wait.latency()

    @property
    def run_latency(self) -> Latency:
        return self.run.latency()

    def as_dict(self) -> JsonObject:
        wait, run = self.wait_latency, self.run_latency
        return {
            "posted": self.posted,
            "started": self.started,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "failed_recoverable": self.failed_recoverable,
            "failed_faulted": self.failed_faulted,
            "failed_fatal": self.failed_fatal,
            "cancelled": self.cancelled,
            "reaped": self.reaped,
            "wait_p50_ms": wait.p50_ms,
            "wait_p95_ms": wait.p95_ms,
            "wait_max_ms": wait.max_ms,
            "run_p50_ms": run.p50_ms,
            "run_p95_ms": run.p95_ms,
            "run_max_ms": run.max_ms,
        }


def sum_counts(counts: Iterable[Counts]) -> Counts:
    out = Counts()
    for c in counts:
        out = out + c
    return out


@dataclass(frozen=True)
class RecordRow:
    """One row of record.sql: a step, type and signature ('' for the type's own)."""

    at: datetime
    task_type: str
    signature: str
    posted: int
    started: int
    succeeded: int
    failed_recoverable: int
    failed_faulted: int
    failed_fatal: int
    cancelled: int
    reaped: int
    wait_hist: list[int] | None
    wait_max_ms: float | None
    run_hist: list[int] | None
    run_max_ms: float | None
    starts_at: datetime | None
    unrolled_since: datetime | None

    def counts(self) -> Counts:
        return Counts(
            self.posted,
            self.started,
            self.succeeded,
            self.failed_recoverable,
            self.failed_faulted,
            self.failed_fatal,
            self.cancelled,
            self.reaped,
            Histogram.of(self.wait_hist, self.wait_max_ms),
            Histogram.of(self.run_hist, self.run_max_ms),
        )


@dataclass(frozen=True)
class Record:
    """The record over [since, until) in steps of ``step``: per type, per failure
    signature (of a type), and every step, present or not (zeros where nothing
    happened)."""

    since: datetime
    until: datetime
    step: timedelta
    source: RecordSource
    #: the oldest minute the record holds (None: it holds none, or read from rows)
    starts_at: datetime | None
    #: per type, its counts per step (steps with nothing left out)
    by_type: dict[str, dict[datetime, Counts]]
    #: per (type, signature key), its failures per step
    by_signature: dict[tuple[str, str], dict[datetime, Counts]]
    #: the oldest minute no worker's upkeep has rolled yet (None: all rolled)
    unrolled_since: datetime | None = None

    @property
    def unrolled_warning(self) -> str | None:
        """A line when no roll has run for a while: the record is exact all the same, but
        its recent rows pile up unrolled (no skconsole worker runs upkeep on this queue)."""
        if self.unrolled_since is None or self.until - self.unrolled_since < UNROLLED_WARN:
            return None
        return (
            f"the record has not been rolled since {self.unrolled_since:%Y-%m-%d %H:%M}: no"
            " skconsole worker runs upkeep on this queue, so its newest rows pile up (start one)"
        )

    @property
    def steps(self) -> list[datetime]:
        """The start of every step, oldest first."""
        out, at = [], self.since
        while at < self.until:
            out.append(at)
            at += self.step
        return out

    @property
    def types(self) -> list[str]:
        """The types read one by one (none when read ``combined``)."""
        return sorted(t for t in self.by_type if t != COMBINED)

    def series(self, task_type: str | None = None) -> list[Counts]:
        """Counts per step of one type, or of every type added (None)."""
        chosen = [self.by_type.get(task_type, {})] if task_type else list(self.by_type.values())
        return [sum_counts(t.get(at, Counts()) for t in chosen) for at in self.steps]

    def signature_series(self, signature: str, task_type: str | None = None) -> list[Counts]:
        """Failures per step of one signature, in one type or in every type (None)."""
        chosen = [
            per
            for (t, s), per in self.by_signature.items()
            if s == signature and (task_type is None or t == task_type)
        ]
        return [sum_counts(p.get(at, Counts()) for p in chosen) for at in self.steps]

    def signatures(self) -> list[tuple[str, str, int]]:
        """(type, signature, failures) over the whole span, most failures first."""
        totals = [
            (t, s, sum(c.failed for c in per.values())) for (t, s), per in self.by_signature.items()
        ]
        return sorted(totals, key=lambda x: (-x[2], x[0], x[1]))

    def total(self, task_type: str | None = None) -> Counts:
        return sum_counts(self.series(task_type))

    def as_dict(self) -> JsonObject:
        return {
            "since": iso(self.since),
            "until": iso(self.until),
            "step_seconds": self.step.total_seconds(),
            "source": self.source.value,
            "record_starts_at": iso(self.starts_at),
            "note": FROM_ROWS_NOTE if self.source is RecordSource.ROWS else None,
            "warning": self.unrolled_warning,
            "steps": [
                {"at": iso(at), **c.as_dict()}
                for at, c in zip(self.steps, self.series(), strict=True)
            ],
            "types": {
                t: [
                    {"at": iso(at), **c.as_dict()}
                    for at, c in zip(self.steps, self.series(t), strict=True)
                ]
                for t in self.types
            },
            "signatures": [
                {"task_type": t, "signature": s, "failed": n} for t, s, n in self.signatures()
            ],
        }


def record(
    conn: Conn,
    *,
    since: datetime,
    until: datetime,
    step: timedelta = timedelta(minutes=1),
    types: Sequence[str] | None = None,
    latency: bool = True,
    combined: bool = False,
    signatures: bool = True,
) -> Record:
    """The record over [since, until), ``step`` at a time (a whole number of minutes:
    the record's grain), of ``types`` (None: all). ``since`` is moved back to a whole
    number of steps since the epoch, so a quarter-hourly or hourly step reads the rows
    rolled at that grain. Without ``latency`` the waits and run times are left empty:
    adding their histograms is most of the read's cost. With ``combined`` every type is
    added into one (the server adds them: ``series()`` of the whole queue, cheaply), and
    ``types`` is empty. Without ``signatures`` the failure signatures' rows are left
    out (a trend needs the types' own)."""
    step_s = max(60, int(step.total_seconds()) // 60 * 60)
    since = aligned(since, step_s)
    params = {
        "grain": grain_for(step_s, since),
        "since": since,
        "until": until,
        "step_s": step_s,
        "types": list(types) if types is not None else None,
        "latency": latency,
        "combined": combined,
        "signatures": signatures,
    }
    rows = fetch(conn, "record", RecordRow, params)
    by_type: dict[str, dict[datetime, Counts]] = {}
    by_signature: dict[tuple[str, str], dict[datetime, Counts]] = {}
    for row in rows:
        into = (
            by_type.setdefault(row.task_type, {})
            if row.signature == ""
            else (by_signature.setdefault((row.task_type, row.signature), {}))
        )
        into[row.at] = row.counts()
    source = RecordSource.RECORD if has_skconsole_objects(conn) else RecordSource.ROWS
    starts_at = rows[0].starts_at if rows else None
    unrolled = rows[0].unrolled_since if rows else None
    return Record(
        since, until, timedelta(seconds=step_s), source, starts_at, by_type, by_signature, unrolled
    )
