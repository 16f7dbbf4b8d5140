"""The console at a past minute: a data source that answers every read from the past.

``skconsole --at 02:47`` and ``skconsole --bundle incident.json`` run the same console,
its panels and cadences unchanged, on a :class:`PastSource`: the port
(:class:`~skconsole.tui.source.DataSource`) answers each request
(:mod:`skconsole.tui.reads`) with minute T as :func:`skconsole.read.past.past_at`
rebuilds it from a :class:`~skconsole.read.past.Book`, which comes from the database
(:class:`DatabaseBooks`: the record and gauges around T, read again only when T leaves
them) or from a bundle (:class:`BundleBooks`: no database at all). A panel the past
cannot rebuild says so in its title (``Snapshot.past_notes``), and a drill-down
(a job, a group's jobs, a search) is answered :class:`~skconsole.tui.source.NotKept`.
It is read-only: a write key says the past cannot be changed. The scrub keys
(``[`` ``]`` ``{`` ``}``) move T (:meth:`PastSource.move`) and read again.

Why a source rather than a screen of its own: every panel, its columns, filter, cursor,
help and snapshot layout stay the ones the present uses, and the only special cases are
the panels' notes and the status line's minute; a screen of its own would have drawn
each panel again.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, TypeVar, cast

import psycopg

from skconsole.core.errors import ConnectError, ReadOnlyError
from skconsole.core.text import printable
from skconsole.db.connect import Database, shown_dsn
from skconsole.ops import audit as ops_audit
from skconsole.read import FailureGroup, TypeTimes
from skconsole.read.flow import TypeCounts
from skconsole.read.incident import Incident
from skconsole.read.past import (
    FIRST_SEEN_SPAN,
    MINUTE,
    Book,
    Past,
    book_for,
    book_record,
    minute_of,
    past_at,
)
from skconsole.read.record import RecordSource
from skconsole.tui import model, reads
from skconsole.tui.chart_data import ChartData, Window
from skconsole.tui.chart_data import bounds as chart_bounds
from skconsole.tui.model import (
    ActionRequest,
    AuditRow,
    FailureGroups,
    OutcomeInfo,
    PreviewInfo,
    Snapshot,
    Trends,
    Windows,
)
from skconsole.tui.refresh import AUDIT_SHOWN, audit_row
from skconsole.tui.source import NotKept, SourceUnavailable
from skconsole.worker.config import RECORD_KEEP_S

T = TypeVar("T")
Conn = psycopg.Connection[Any]

#: what a drill-down of the past answers
NO_JOBS = (
    "not kept: the past keeps counts per minute, not jobs (a job, a group's jobs, a search"
    " are the present's: quit and run skconsole without --at)"
)


def when(at: datetime) -> str:
    """A minute as the status line says it: "2026-12-06 02:47 UTC"."""
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


class PastBooks(Protocol):
    """Where the past comes from: a book holding a minute, the audit rows up to it, the
    minutes one may scrub between."""

    description: str
    connection: str

    def book_around(self, at: datetime) -> Book: ...

    def audit(self, at: datetime) -> tuple[AuditRow, ...]: ...

    def samples(self) -> Mapping[str, str]: ...

    def bounds(self) -> tuple[datetime, datetime]: ...

    def bounds_text(self) -> str: ...

    def close(self) -> None: ...


class DatabaseBooks:
    """The past of a database: the record and the gauges around T (a day before it, for
    when a failure was first seen, and an hour after), read again when T leaves them."""

    def __init__(self, db: Database, *, now: Callable[[], datetime] | None = None) -> None:
        self.db = db
        self.description = db.description
        self.connection = shown_dsn(db.dsn)
        self._now = now or (lambda: datetime.now(UTC))
        self._conn: Conn | None = None
        self._lock = threading.Lock()
        self._book: Book | None = None

    def _read(self, what: Callable[[Conn], T]) -> T:
        with self._lock:
            conn = self._conn
            if conn is None or conn.closed or conn.broken:
                try:
                    conn = self.db.connect(application_name="skconsole-console")
                except ConnectError as exc:
                    raise SourceUnavailable(str(exc)) from None
                self._conn = conn
            try:
                return what(conn)
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                self.close_locked()
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise SourceUnavailable(first) from None

    def book_around(self, at: datetime) -> Book:
        kept = self._book
        if kept is not None and kept.since + FIRST_SEEN_SPAN <= at and kept.holds(at):
            return kept
        fresh = self._read(lambda conn: book_for(conn, at, now=self._now()))
        self._book = fresh
        return fresh

    def audit(self, at: datetime) -> tuple[AuditRow, ...]:
        found = self._read(
            lambda conn: ops_audit.entries_between(
                conn, since=None, until=at + MINUTE, limit=AUDIT_SHOWN
            )
        )
        return tuple(audit_row(a) for a in found)

    def samples(self) -> Mapping[str, str]:
        return {}

    def bounds(self) -> tuple[datetime, datetime]:
        now = minute_of(self._now())
        return now - timedelta(seconds=RECORD_KEEP_S), now

    def bounds_text(self) -> str:
        first, last = self.bounds()
        return f"the record, {when(first)} to {when(last)}"

    def close_locked(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def close(self) -> None:
        with self._lock:
            self.close_locked()


class BundleBooks:
    """The past an incident bundle holds: no database, no connection."""

    def __init__(self, bundle: Incident, name: str) -> None:
        self.bundle = bundle
        self.description = printable(f"bundle {name} · {bundle.queue}")
        self.connection = f"incident bundle {name} (offline)"
        self._samples = bundle.sample_of()

    def book_around(self, at: datetime) -> Book:
        return self.bundle.book

    def audit(self, at: datetime) -> tuple[AuditRow, ...]:
        shown = [a for a in self.bundle.audit if a.at < at + MINUTE]
        shown.sort(key=lambda a: (a.at, a.audit_id), reverse=True)
        return tuple(
            AuditRow(a.audit_id, a.at, a.who, a.action, a.what, a.count)
            for a in shown[:AUDIT_SHOWN]
        )

    def samples(self) -> Mapping[str, str]:
        return self._samples

    def bounds(self) -> tuple[datetime, datetime]:
        return self.bundle.since, minute_of(self.bundle.until - MINUTE)

    def bounds_text(self) -> str:
        first, last = self.bounds()
        return f"the bundle, {when(first)} to {when(last)}"

    def close(self) -> None:
        pass


class PastSource:
    """A read-only data source at minute ``at`` of ``books``; :meth:`move` scrubs."""

    read_only = True

    def __init__(self, books: PastBooks, at: datetime) -> None:
        self.books = books
        self.description = books.description
        self.connection = books.connection
        first, last = books.bounds()
        self._at = max(first, min(minute_of(at), last))
        self._lock = threading.Lock()
        self._cached: tuple[datetime, Past, tuple[AuditRow, ...]] | None = None

    # -- the minute (PastView) ---------------------------------------------------------
    def minute(self) -> datetime:
        with self._lock:
            return self._at

    def move(self, minutes: int) -> datetime:
        first, last = self.books.bounds()
        with self._lock:
            self._at = max(first, min(self._at + minutes * MINUTE, last))
            return self._at

    def bounds_text(self) -> str:
        return self.books.bounds_text()

    # -- reads ------------------------------------------------------------------------
    def past(self) -> tuple[Past, tuple[AuditRow, ...]]:
        """Minute T rebuilt (once per minute shown: every cadence reads the same)."""
        at = self.minute()
        cached = self._cached
        if cached is not None and cached[0] == at:
            return cached[1], cached[2]
        rebuilt = past_at(self.books.book_around(at), at, samples=self.books.samples())
        audit = self.books.audit(at)
        self._cached = (at, rebuilt, audit)
        return rebuilt, audit

    def read(self, request: reads.Read[T]) -> T:
        if isinstance(request, reads.SnapshotRead):
            return cast(T, past_snapshot(*self.past()))
        if isinstance(request, reads.FailureGroupsRead):
            return cast(T, past_failures(self.past()[0]))
        if isinstance(request, reads.TrendsRead):
            return cast(T, past_trends(self.past()[0]))
        if isinstance(request, reads.WindowsRead):
            return cast(T, past_windows(self.past()[0]))
        if isinstance(request, reads.ChartsRead):
            return cast(T, self._charts(request.window))
        if isinstance(request, reads.GroupCurveRead):
            return cast(T, self._curve(request))
        if isinstance(request, reads.HealthRead):
            raise NotKept("not kept: the queue tables' health is the present's")
        raise NotKept(NO_JOBS)

    def _charts(self, window: Window) -> ChartData:
        """The charts of the window that ends with minute T, from the book around T (the
        SLOs are the present's, so none is drawn across)."""
        at = self.minute()
        since, until = chart_bounds(window, at)
        book = self.books.book_around(at)
        return ChartData(window, book_record(book, since, until, window.step), {})

    def _curve(self, request: reads.GroupCurveRead) -> tuple[int, ...]:
        """A group's failures per minute over the hour up to minute T."""
        at = self.minute()
        since = at - timedelta(minutes=reads.GROUP_CURVE_MINUTES - 1)
        found = book_record(self.books.book_around(at), since, at + MINUTE, MINUTE)
        types: tuple[str | None, ...] = request.task_types or (None,)
        per = [found.signature_series(request.signature, t) for t in types]
        return tuple(sum(c.failed for c in step) for step in zip(*per, strict=True))

    def preview(self, request: ActionRequest) -> PreviewInfo:
        raise ReadOnlyError("the past cannot be changed: operator actions are off")

    def execute(self, preview: PreviewInfo, actor: str) -> OutcomeInfo:
        raise ReadOnlyError("the past cannot be changed: operator actions are off")

    def close(self) -> None:
        self.books.close()


# -- minute T as the console's models -------------------------------------------------------
def _taken_at(p: Past) -> float:
    """The console clock of minute T's data: its end (ages count from it)."""
    return (p.at + MINUTE).timestamp()


def _hhmm(at: datetime) -> str:
    return f"{at.astimezone(UTC):%H:%M}"


def past_notes(p: Past) -> dict[str, str]:
    """Per panel, what its title says of minute T instead of its summary."""
    at = _hhmm(p.at)
    if p.gauges_at is None:
        depth = "waiting and running not kept (no gauge then) · finished: 5 min up to " + at
    else:
        gauge = "" if p.gauges_at == p.at else f" (gauge of {_hhmm(p.gauges_at)})"
        depth = f"at {at}{gauge} · oldest, paused: not kept"
    alive = (
        "not kept (no gauge then)"
        if p.workers_alive is None
        else f"not kept: which ones · {p.workers_alive} alive at {at}"
    )
    failed = sum(g.failed for g in p.groups)
    if p.source is RecordSource.ROWS:
        depth = "from the job rows (no record here): latest attempts only · " + depth
    elif p.record_starts_at is None or p.at < minute_of(p.record_starts_at):
        starts = (
            "holds nothing" if p.record_starts_at is None else f"starts {when(p.record_starts_at)}"
        )
        depth = f"before the record (it {starts})"
    return {
        "depth": depth,
        "inflight": "not kept: the past keeps counts, not which job ran where",
        "failures": f"{failed:,} failed attempt(s) in the hour to {at}",
        "exec": f"the 15 min up to {at}, from the record (to its bucket) · p99, avg: not kept",
        "metrics": "not kept: the worker processes' totals are the present's",
        "workers": alive,
        "audit": f"up to {at}",
        "schedules": "not kept: schedules as they were then",
        "health": "not kept: the queue tables' health is the present's",
    }


def past_snapshot(p: Past, audit: tuple[AuditRow, ...]) -> Snapshot:
    """Minute T as one refresh: depth from the gauges, the audit up to T, the rest said."""
    rows = tuple(
        model.DepthRow(
            task_type=t.task_type,
            ready=t.ready or 0,
            scheduled=t.scheduled or 0,
            in_flight=t.running or 0,
            oldest_ready_s=None,
            paused=False,
            trend=t.trend,
            estimated=p.estimated,
            failed=t.flow.failed_for_good,
            finished=t.flow.succeeded + t.flow.failed_for_good,
        )
        for t in p.types
    )
    trends = [t.trend for t in p.types if t.trend]
    waiting = tuple(sum(points) for points in zip(*trends, strict=False)) if trends else ()
    return Snapshot(
        taken_at=_taken_at(p),
        depth=rows,
        audit=audit,
        waiting=waiting,
        past_notes=past_notes(p),
        degraded=False,
    )


def past_failures(p: Past) -> FailureGroups:
    """The failure groups of the hour up to T, by signature."""
    groups = tuple(
        FailureGroup(
            signature=g.signature,
            count=g.failed,
            statuses={4: g.failed_recoverable, 5: g.failed_faulted, 6: g.failed_fatal},
            task_types=list(g.task_types),
            first_seen=g.first_seen,
            last_seen=g.last_seen,
            sample_task_id=None,
            sample_error=g.sample_error,
        )
        for g in p.groups
    )
    return FailureGroups(groups, taken_at=_taken_at(p))


def past_trends(p: Past) -> Trends:
    """Jobs per minute over the hour up to T."""
    return Trends(
        processed=tuple(m.processed for m in p.hour),
        failed=tuple(m.failed for m in p.hour),
        posted=tuple(m.posted for m in p.hour),
    )


def past_windows(p: Past) -> Windows:
    """The run times of the 15 minutes up to T (the record's histograms) and each type's
    jobs finished within the 5 minutes up to it."""
    times = tuple(
        TypeTimes(
            task_type=t.task_type,
            cycles=0,
            total_ms=0,
            fastest_ms=None,
            longest_ms=None,
            last_ms=None,
            sample=t.recent.run.count,
            p50_ms=t.recent.run.p50_ms,
            p95_ms=t.recent.run.p95_ms,
            p99_ms=None,
            recent_longest_ms=None if t.recent.run.max_ms is None else int(t.recent.run.max_ms),
        )
        for t in p.types
        if t.recent.run.count
    )
    finished = {
        t.task_type: TypeCounts(
            t.task_type, t.flow.posted, t.flow.succeeded, t.flow.failed_for_good, t.flow.cancelled
        )
        for t in p.types
    }
    return Windows(times, finished, _taken_at(p))


__all__ = ["BundleBooks", "DatabaseBooks", "PastSource", "when"]
