"""The queue as it stood at a past minute, rebuilt from the per-minute record and gauges.

The record (:mod:`skconsole.read.record`) counts what happened each minute (posts,
starts, finishes, failures by signature, latencies); the gauges
(sql/schema/148_skconsole_record_gauges.sql) say what stood each minute (jobs waiting
and running per type, workers alive). Both outlive the job rows: a purge or a
retention pass does not delete them. From them, :func:`past_at` rebuilds minute T as
the console shows it (``skconsole --at 02:47``) and as an incident bundle carries it:
depth per type, the failure groups of the hour before T with when each was first seen,
throughput and latency of the minute and of the 15 minutes up to it, the workers alive.
What they cannot rebuild is said, never shown as zero: :data:`NOT_KEPT`.

A :class:`Book` is what the rebuilding reads: the record and the gauges over a span.
:func:`book` reads one from a database; an incident bundle carries one
(:mod:`skconsole.read.incident`); :func:`past_at` is pure over it, so the console at a
past minute and a bundle opened offline show the same figures the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from skconsole.core.json_read import Doc
from skconsole.core.json_types import JsonObject
from skconsole.core.latency import Histogram, Latency
from skconsole.read.query import Conn, fetch, iso
from skconsole.read.record import Counts, Record, RecordSource, record, sum_counts

MINUTE = timedelta(minutes=1)
#: the failure groups of minute T are the failures of the hour up to it (T included)
GROUPS_SPAN = timedelta(hours=1)
#: the throughput and latency "of late": the 15 minutes up to T (T included)
RECENT_SPAN = timedelta(minutes=15)
#: the finished and failed jobs of the depth panel: the 5 minutes up to T (the flow window)
FLOW_SPAN = timedelta(minutes=5)
#: how far before T a failure is looked for to say when its signature was first seen
FIRST_SEEN_SPAN = timedelta(hours=24)
#: the gauges of T are the latest written at or before it, at most this long before
GAUGES_REACH = timedelta(minutes=5)
#: the trend of waiting jobs per type: this many minutes of gauges up to T
TREND_MINUTES = 30
#: what a book must hold before T for every figure of T (the failure groups' hour)
BEFORE_T = GROUPS_SPAN

#: what the record and the gauges do not keep, so a past minute cannot show it
NOT_KEPT = (
    "the jobs in flight (which job ran where)",
    "job payloads, and the jobs of a failure group",
    "the jobs per status",
    "each worker by name (only how many were alive)",
    "the metrics and execution-time totals of the worker processes",
    "the queue tables' health (sizes, dead rows, sessions, locks)",
    "paused types, limits and SLOs as they were then",
)


@dataclass(frozen=True)
class Gauge:
    """One minute's gauge of one task type ('' for the totals, with the workers alive)."""

    minute: datetime
    task_type: str
    ready: int
    scheduled: int
    running: int
    workers: int | None
    estimated: bool

    def as_dict(self) -> JsonObject:
        return {
            "minute": iso(self.minute),
            "task_type": self.task_type,
            "ready": self.ready,
            "scheduled": self.scheduled,
            "running": self.running,
            "workers": self.workers,
            "estimated": self.estimated,
        }

    @classmethod
    def from_dict(cls, d: Doc) -> Gauge:
        return cls(
            d.time("minute"),
            d.text("task_type"),
            d.integer("ready"),
            d.integer("scheduled"),
            d.integer("running"),
            d.integer_or_none("workers"),
            d.flag("estimated"),
        )


def gauges(conn: Conn, *, since: datetime, until: datetime) -> list[Gauge]:
    """The gauges of the minutes in [since, until) (none on Stakhanovise.NET's tables alone)."""
    return fetch(conn, "gauges", Gauge, {"since": since, "until": until})


@dataclass(frozen=True)
class Book:
    """What a past minute is rebuilt from: the record per minute (per type and per failure
    signature) and the gauges, over [since, until)."""

    since: datetime
    until: datetime
    source: RecordSource
    #: the oldest minute the record holds (None: none, or read from the job rows)
    record_starts_at: datetime | None
    by_type: Mapping[str, Mapping[datetime, Counts]]
    by_signature: Mapping[tuple[str, str], Mapping[datetime, Counts]]
    gauges: tuple[Gauge, ...] = ()

    @classmethod
    def of(cls, rec: Record, found: Sequence[Gauge]) -> Book:
        return cls(
            rec.since,
            rec.until,
            rec.source,
            rec.starts_at,
            rec.by_type,
            rec.by_signature,
            tuple(found),
        )

    def holds(self, at: datetime) -> bool:
        """Whether ``at`` is a minute of this book."""
        return self.since <= at < self.until

    def as_dict(self) -> JsonObject:
        return {
            "since": iso(self.since),
            "until": iso(self.until),
            "source": self.source.value,
            "record_starts_at": iso(self.record_starts_at),
            "types": [
                {"task_type": t, "minutes": _minutes_dict(per)} for t, per in self.by_type.items()
            ],
            "signatures": [
                {"task_type": t, "signature": s, "minutes": _minutes_dict(per)}
                for (t, s), per in self.by_signature.items()
            ],
            "gauges": [g.as_dict() for g in self.gauges],
        }

    @classmethod
    def from_dict(cls, d: Doc) -> Book:
        try:
            source = RecordSource(d.text("source"))
        except ValueError:
            raise d.bad("source", "record or rows") from None
        return cls(
            d.time("since"),
            d.time("until"),
            source,
            d.time_or_none("record_starts_at"),
            {t.text("task_type"): _minutes_load(t) for t in d.docs("types")},
            {
                (s.text("task_type"), s.text("signature")): _minutes_load(s)
                for s in d.docs("signatures")
            },
            tuple(Gauge.from_dict(g) for g in d.docs("gauges")),
        )


def _minutes_dict(per: Mapping[datetime, Counts]) -> list[JsonObject]:
    return [
        {
            "at": iso(at),
            "posted": c.posted,
            "started": c.started,
            "succeeded": c.succeeded,
            "failed_recoverable": c.failed_recoverable,
            "failed_faulted": c.failed_faulted,
            "failed_fatal": c.failed_fatal,
            "cancelled": c.cancelled,
            "reaped": c.reaped,
            "wait_hist": list(c.wait.counts),
            "wait_max_ms": c.wait.max_ms,
            "run_hist": list(c.run.counts),
            "run_max_ms": c.run.max_ms,
        }
        for at, c in sorted(per.items())
    ]


def _minutes_load(d: Doc) -> dict[datetime, Counts]:
    out = {}
    for m in d.docs("minutes"):
        out[m.time("at")] = Counts(
            m.integer("posted"),
            m.integer("started"),
            m.integer("succeeded"),
            m.integer("failed_recoverable"),
            m.integer("failed_faulted"),
            m.integer("failed_fatal"),
            m.integer("cancelled"),
            m.integer("reaped"),
            Histogram.of(m.integers("wait_hist"), m.number_or_none("wait_max_ms")),
            Histogram.of(m.integers("run_hist"), m.number_or_none("run_max_ms")),
        )
    return out


def minute_of(at: datetime) -> datetime:
    return at.replace(second=0, microsecond=0)


def book(conn: Conn, *, since: datetime, until: datetime) -> Book:
    """The record and the gauges of the minutes in [since, until)."""
    since = minute_of(since)
    rec = record(conn, since=since, until=until)
    return Book.of(rec, gauges(conn, since=since, until=until))


def book_for(conn: Conn, at: datetime, *, now: datetime) -> Book:
    """A book that rebuilds minute ``at`` whole (its failure groups' first seen within
    :data:`FIRST_SEEN_SPAN`), and the hour after it (scrubbing forward reads nothing more),
    up to the current minute."""
    at = minute_of(at)
    return book(
        conn, since=at - FIRST_SEEN_SPAN, until=min(at + GROUPS_SPAN, minute_of(now)) + MINUTE
    )


# -- the past minute ---------------------------------------------------------------------
@dataclass(frozen=True)
class Figures:
    """What happened over ``minutes`` minutes: jobs posted, started, succeeded, failed
    (attempts; ``failed_for_good``: faulted or fatal), cancelled and reaped, and the
    waits and run times (p50, p95 to their bucket, the max exact)."""

    minutes: int = 1
    posted: int = 0
    started: int = 0
    succeeded: int = 0
    failed: int = 0
    failed_for_good: int = 0
    cancelled: int = 0
    reaped: int = 0
    wait: Latency = field(default_factory=Latency)
    run: Latency = field(default_factory=Latency)

    @classmethod
    def of(cls, c: Counts, minutes: int) -> Figures:
        return cls(
            minutes,
            c.posted,
            c.started,
            c.succeeded,
            c.failed,
            c.failed_faulted + c.failed_fatal,
            c.cancelled,
            c.reaped,
            c.wait_latency,
            c.run_latency,
        )

    def as_dict(self) -> JsonObject:
        return {
            "minutes": self.minutes,
            "posted": self.posted,
            "started": self.started,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "failed_for_good": self.failed_for_good,
            "cancelled": self.cancelled,
            "reaped": self.reaped,
            "wait": _latency_dict(self.wait),
            "run": _latency_dict(self.run),
        }

    @classmethod
    def from_dict(cls, d: Doc) -> Figures:
        return cls(
            d.integer("minutes"),
            d.integer("posted"),
            d.integer("started"),
            d.integer("succeeded"),
            d.integer("failed"),
            d.integer("failed_for_good"),
            d.integer("cancelled"),
            d.integer("reaped"),
            _latency_load(d.doc("wait")),
            _latency_load(d.doc("run")),
        )


def _latency_dict(x: Latency) -> JsonObject:
    return {"count": x.count, "p50_ms": x.p50_ms, "p95_ms": x.p95_ms, "max_ms": x.max_ms}


def _latency_load(d: Doc) -> Latency:
    return Latency(
        d.integer("count"),
        d.number_or_none("p50_ms"),
        d.number_or_none("p95_ms"),
        d.number_or_none("max_ms"),
    )


@dataclass(frozen=True)
class PastType:
    """One task type at minute T: waiting (ready: due; scheduled: not yet) and running, from
    the gauges (None: no gauge kept then); what it did in the minute, the flow window and
    the last 15 minutes; its waiting jobs at each minute of the trend (oldest first)."""

    task_type: str
    ready: int | None
    scheduled: int | None
    running: int | None
    minute: Figures
    flow: Figures
    recent: Figures
    trend: tuple[int, ...] = ()

    def as_dict(self) -> JsonObject:
        return {
            "task_type": self.task_type,
            "ready": self.ready,
            "scheduled": self.scheduled,
            "running": self.running,
            "minute": self.minute.as_dict(),
            "flow": self.flow.as_dict(),
            "recent": self.recent.as_dict(),
            "trend": list(self.trend),
        }

    @classmethod
    def from_dict(cls, d: Doc) -> PastType:
        return cls(
            d.text("task_type"),
            d.integer_or_none("ready"),
            d.integer_or_none("scheduled"),
            d.integer_or_none("running"),
            Figures.from_dict(d.doc("minute")),
            Figures.from_dict(d.doc("flow")),
            Figures.from_dict(d.doc("recent")),
            tuple(d.integers("trend")),
        )


@dataclass(frozen=True)
class PastGroup:
    """A failure signature in the hour up to T: its failed attempts by kind, the reaps
    among them, its types, the first and last minute of the hour it failed in, and the
    first minute it failed in within :data:`FIRST_SEEN_SPAN` (as far as the book reaches:
    :attr:`Past.first_seen_since`); a sample error when a bundle carries one."""

    signature: str
    task_types: tuple[str, ...]
    failed_recoverable: int
    failed_faulted: int
    failed_fatal: int
    reaped: int
    first_seen: datetime | None
    last_seen: datetime | None
    sample_error: str | None = None

    @property
    def failed(self) -> int:
        return self.failed_recoverable + self.failed_faulted + self.failed_fatal

    def as_dict(self) -> JsonObject:
        return {
            "signature": self.signature,
            "task_types": list(self.task_types),
            "failed": self.failed,
            "failed_recoverable": self.failed_recoverable,
            "failed_faulted": self.failed_faulted,
            "failed_fatal": self.failed_fatal,
            "reaped": self.reaped,
            "first_seen": iso(self.first_seen),
            "last_seen": iso(self.last_seen),
            "sample_error": self.sample_error,
        }

    @classmethod
    def from_dict(cls, d: Doc) -> PastGroup:
        return cls(
            d.text("signature"),
            tuple(d.texts("task_types")),
            d.integer("failed_recoverable"),
            d.integer("failed_faulted"),
            d.integer("failed_fatal"),
            d.integer("reaped"),
            d.time_or_none("first_seen"),
            d.time_or_none("last_seen"),
            d.text_or_none("sample_error"),
        )


@dataclass(frozen=True)
class MinuteTotals:
    """One minute of every type: jobs posted, attempts that ended, attempts failed."""

    at: datetime
    posted: int
    processed: int
    failed: int


@dataclass(frozen=True)
class Past:
    """The queue at minute ``at``, as the record and the gauges rebuild it."""

    at: datetime
    source: RecordSource
    record_starts_at: datetime | None
    #: the minute the depth and workers are of (the latest gauge at or before ``at``,
    #: within :data:`GAUGES_REACH`); None: no gauge kept then
    gauges_at: datetime | None
    #: ready and scheduled were scaled up from a sample of the queue (a big queue)
    estimated: bool
    workers_alive: int | None
    types: tuple[PastType, ...]
    groups: tuple[PastGroup, ...]
    minute: Figures
    recent: Figures
    #: every type's figures per minute over the hour up to ``at``, oldest first
    hour: tuple[MinuteTotals, ...]
    #: how far back a group's first seen was looked for
    first_seen_since: datetime
    not_kept: tuple[str, ...] = NOT_KEPT

    def as_dict(self) -> JsonObject:
        return {
            "at": iso(self.at),
            "source": self.source.value,
            "record_starts_at": iso(self.record_starts_at),
            "gauges_at": iso(self.gauges_at),
            "estimated": self.estimated,
            "workers_alive": self.workers_alive,
            "types": [t.as_dict() for t in self.types],
            "groups": [g.as_dict() for g in self.groups],
            "minute": self.minute.as_dict(),
            "recent": self.recent.as_dict(),
            "hour": [
                {"at": iso(m.at), "posted": m.posted, "processed": m.processed, "failed": m.failed}
                for m in self.hour
            ],
            "first_seen_since": iso(self.first_seen_since),
            "not_kept": list(self.not_kept),
        }

    @classmethod
    def from_dict(cls, d: Doc) -> Past:
        try:
            source = RecordSource(d.text("source"))
        except ValueError:
            raise d.bad("source", "record or rows") from None
        return cls(
            d.time("at"),
            source,
            d.time_or_none("record_starts_at"),
            d.time_or_none("gauges_at"),
            d.flag("estimated"),
            d.integer_or_none("workers_alive"),
            tuple(PastType.from_dict(t) for t in d.docs("types")),
            tuple(PastGroup.from_dict(g) for g in d.docs("groups")),
            Figures.from_dict(d.doc("minute")),
            Figures.from_dict(d.doc("recent")),
            tuple(
                MinuteTotals(
                    m.time("at"), m.integer("posted"), m.integer("processed"), m.integer("failed")
                )
                for m in d.docs("hour")
            ),
            d.time("first_seen_since"),
            tuple(d.texts("not_kept")),
        )


def _span(per: Mapping[datetime, Counts], since: datetime, until: datetime) -> Counts:
    return sum_counts(c for at, c in per.items() if since <= at < until)


def past_at(b: Book, at: datetime, *, samples: Mapping[str, str] | None = None) -> Past:
    """Minute ``at`` as ``b`` rebuilds it (pure: no database). ``samples``: a sample error
    per failure signature (an incident bundle's)."""
    at = minute_of(at)
    end = at + MINUTE
    flow_since, recent_since, hour_since = end - FLOW_SPAN, end - RECENT_SPAN, end - GROUPS_SPAN

    # the gauges: the latest minute at or before ``at``, within reach
    kept = [g.minute for g in b.gauges if at - GAUGES_REACH <= g.minute <= at]
    gauges_at = max(kept) if kept else None
    standing = {g.task_type: g for g in b.gauges if g.minute == gauges_at}
    totals = standing.get("")
    trend_since = end - TREND_MINUTES * MINUTE
    waiting: dict[str, dict[datetime, int]] = {}
    for g in b.gauges:
        if trend_since <= g.minute < end and g.task_type:
            waiting.setdefault(g.task_type, {})[g.minute] = g.ready + g.scheduled
    trend_minutes = sorted({g.minute for g in b.gauges if trend_since <= g.minute < end})

    active = {t for t, per in b.by_type.items() if any(hour_since <= m < end for m in per)}
    names = sorted(active | {t for t in standing if t})
    types = []
    for name in names:
        per = b.by_type.get(name, {})
        stood = standing.get(name)
        known = gauges_at is not None
        types.append(
            PastType(
                name,
                (stood.ready if stood else 0) if known else None,
                (stood.scheduled if stood else 0) if known else None,
                (stood.running if stood else 0) if known else None,
                Figures.of(_span(per, at, end), 1),
                Figures.of(_span(per, flow_since, end), 5),
                Figures.of(_span(per, recent_since, end), 15),
                tuple(waiting.get(name, {}).get(m, 0) for m in trend_minutes),
            )
        )

    first_seen_since = max(b.since, end - FIRST_SEEN_SPAN)
    by_signature: dict[str, list[tuple[str, Mapping[datetime, Counts]]]] = {}
    for (t, s), per in b.by_signature.items():
        by_signature.setdefault(s, []).append((t, per))
    groups = []
    for signature, of_types in by_signature.items():
        hour = sum_counts(_span(per, hour_since, end) for _t, per in of_types)
        if not hour.failed:
            continue
        failing = sorted(
            {m for _t, per in of_types for m, c in per.items() if c.failed and m < end}
        )
        in_hour = [m for m in failing if m >= hour_since]
        seen = [m for m in failing if m >= first_seen_since]
        groups.append(
            PastGroup(
                signature,
                tuple(sorted(t for t, per in of_types if _span(per, hour_since, end).failed)),
                hour.failed_recoverable,
                hour.failed_faulted,
                hour.failed_fatal,
                hour.reaped,
                seen[0] if seen else None,
                in_hour[-1] if in_hour else None,
                (samples or {}).get(signature),
            )
        )
    groups.sort(key=lambda g: (-g.failed, g.signature))

    every = list(b.by_type.values())
    hour_totals = []
    m = hour_since
    while m < end:
        c = sum_counts(per.get(m, Counts()) for per in every)
        hour_totals.append(MinuteTotals(m, c.posted, c.ended, c.failed))
        m += MINUTE
    return Past(
        at,
        b.source,
        b.record_starts_at,
        gauges_at,
        any(g.estimated for g in standing.values()),
        totals.workers if totals is not None else None,
        tuple(types),
        tuple(groups),
        Figures.of(sum_counts(_span(per, at, end) for per in every), 1),
        Figures.of(sum_counts(_span(per, recent_since, end) for per in every), 15),
        tuple(hour_totals),
        first_seen_since,
    )


def past(conn: Conn, at: datetime, *, now: datetime) -> Past:
    """Minute ``at`` of the queue on ``conn`` (``now``: the current time, the furthest the
    record is read)."""
    return past_at(book_for(conn, at, now=now), at)


def worst_minute(b: Book) -> datetime | None:
    """The minute of ``b`` with the most failed attempts (the first of equals); None:
    none failed."""
    failed: dict[datetime, int] = {}
    for per in b.by_type.values():
        for at, c in per.items():
            if b.holds(at):
                failed[at] = failed.get(at, 0) + c.failed
    worst = max(failed.values(), default=0)
    return min(at for at, n in failed.items() if n == worst) if worst else None


def book_record(book: Book, since: datetime, until: datetime, step: timedelta) -> Record:
    """The part of ``book`` in [since, until), in steps of ``step`` from ``since``: what the
    charts draw at a past minute. Steps before the book (or the record) begins are
    unknown, not zero: the record it answers starts no earlier than the book does."""

    def binned(per: Mapping[datetime, Counts]) -> dict[datetime, Counts]:
        out: dict[datetime, Counts] = {}
        for at, counts in per.items():
            if since <= at < until:
                key = since + (at - since) // step * step
                out[key] = out.get(key, Counts()) + counts
        return out

    starts = max(t for t in (book.record_starts_at, book.since) if t is not None)
    return Record(
        since,
        until,
        step,
        book.source,
        starts,
        {t: binned(per) for t, per in book.by_type.items()},
        {k: binned(per) for k, per in book.by_signature.items()},
    )
