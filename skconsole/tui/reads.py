"""What the console asks its data source: each question one request, typed by its answer.

The console's port (:class:`skconsole.tui.source.DataSource`) is narrow: ``read`` a
request, ``preview`` and ``execute`` an action, ``close``. A request names what it
reads, on which of the source's connections (its :class:`Purpose`), and how the
read models answer it on PostgreSQL (``on_database``); the database source runs
any request the same way, so a new read is a request here and its fixed answer
(``showcase/fake_source.py``), never a new method on every source.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Generic, TypeVar
from uuid import UUID

import psycopg

from skconsole import read
from skconsole.check import verdict as checks
from skconsole.core.find_query import FindQuery
from skconsole.db.schema import check_schema
from skconsole.read import health
from skconsole.read.breakers import with_breakers
from skconsole.read.factors import CommonFactors, common_factors
from skconsole.read.first_seen import first_seen, with_first_seen
from skconsole.read.record import record
from skconsole.read.type_settings import slos
from skconsole.tui import model
from skconsole.tui.chart_data import ChartData, Window, bounds
from skconsole.tui.refresh import (
    FAILURE_GROUPS_SHOWN,
    HISTORY_MINUTES,
    REFRESH_STATUS_EXACT_LIMIT,
    Memory,
    snapshot,
    stopwatch,
    windows,
)

Conn = psycopg.Connection[Any]
T = TypeVar("T", covariant=True)


class Purpose(enum.Enum):
    """Which of a source's connections a read goes on: the cadences and the drill-downs
    never wait for one another. ``primary``: it reads the server's own state (sessions,
    locks, table statistics), which a hot standby does not replicate."""

    REFRESH = "refresh"
    FAILURES = "failures"
    TRENDS = "trends"
    WINDOWS = "windows"
    HEALTH = "health"
    DRILL = "drill"
    OVERVIEW = "overview"

    @property
    def primary(self) -> bool:
        return self is Purpose.HEALTH


class Read(Generic[T]):
    """A question the console asks its source; ``T`` is its answer."""

    purpose: ClassVar[Purpose] = Purpose.DRILL

    def on_database(self, conn: Conn, memory: Memory) -> T:
        """The answer on PostgreSQL, through the read models (``memory``: what the source
        keeps between refreshes, and its clock)."""
        raise NotImplementedError


# -- the cadences -------------------------------------------------------------------------
@dataclass(frozen=True)
class SnapshotRead(Read[model.Snapshot]):
    """One refresh: every panel's read model but the failure groups."""

    purpose: ClassVar[Purpose] = Purpose.REFRESH

    def on_database(self, conn: Conn, memory: Memory) -> model.Snapshot:
        return snapshot(conn, memory)


@dataclass(frozen=True)
class FailureGroupsRead(Read[model.FailureGroups]):
    """The failed jobs grouped by error signature (a slower cadence: it aggregates every
    failed row)."""

    purpose: ClassVar[Purpose] = Purpose.FAILURES

    def on_database(self, conn: Conn, memory: Memory) -> model.FailureGroups:
        taken_at = memory.clock()  # the data is as of the start of the read
        with stopwatch() as took:
            groups = read.failure_groups(conn, limit=FAILURE_GROUPS_SHOWN)
            groups = with_first_seen(groups, _first_seen(conn, memory, groups))
            groups = with_breakers(groups, read.breakers(conn))
        return model.FailureGroups(tuple(groups), taken_at=taken_at, read_ms=took.ms)


def _first_seen(
    conn: Conn, memory: Memory, groups: list[read.FailureGroup]
) -> dict[str, datetime | None]:
    """When the record first saw each group's signature, read once per signature (the
    read scans the record's minutes; the answer does not move)."""
    with memory.lock:
        missing = [g.signature for g in groups if g.signature not in memory.first_seen]
    found = first_seen(conn, missing) if missing else {}
    with memory.lock:
        memory.first_seen.update({s: found.get(s) for s in missing})
        return dict(memory.first_seen)


@dataclass(frozen=True)
class TrendsRead(Read[model.Trends]):
    """Jobs per minute over the last hour, from the per-minute record."""

    purpose: ClassVar[Purpose] = Purpose.TRENDS

    def on_database(self, conn: Conn, memory: Memory) -> model.Trends:
        history = read.history(conn, minutes=HISTORY_MINUTES)
        return model.Trends(
            processed=tuple(history.series("processed")),
            failed=tuple(history.series("failed")),
            posted=tuple(history.series("posted")),
        )


@dataclass(frozen=True)
class WindowsRead(Read[model.Windows]):
    """The execution times and each type's finished jobs within the flow window (a
    slower cadence than the refresh: they move slowly and cost the most at scale)."""

    purpose: ClassVar[Purpose] = Purpose.WINDOWS

    def on_database(self, conn: Conn, memory: Memory) -> model.Windows:
        return windows(conn, memory)


@dataclass(frozen=True)
class HealthRead(Read[model.QueueHealth]):
    """The queue tables' health, the xmin horizon and lock waits (the server's own state:
    on the primary)."""

    purpose: ClassVar[Purpose] = Purpose.HEALTH

    def on_database(self, conn: Conn, memory: Memory) -> model.QueueHealth:
        taken_at = memory.clock()
        with stopwatch() as took:
            found = health.health(conn)
        return model.QueueHealth(found, taken_at=taken_at, read_ms=took.ms)


class BoundedRead(Read[T]):
    """A read bounded in time, connecting included (``bound_s``): the database source
    runs it under a :class:`skconsole.check.verdict.Watch`, and a read that does not
    answer in time is unavailable, never a stalled read."""

    bound_s: ClassVar[float] = checks.READ_TIMEOUT_S

    def on_watched(self, conn: Conn, memory: Memory, watch: checks.Watch) -> T:
        raise NotImplementedError


@dataclass(frozen=True)
class OverviewRead(BoundedRead[model.QueueOverview]):
    """The queue as the overview of several shows it: what ``skconsole check`` reads and
    its verdict, and the jobs per status (within check's own bound)."""

    purpose: ClassVar[Purpose] = Purpose.OVERVIEW

    def on_watched(self, conn: Conn, memory: Memory, watch: checks.Watch) -> model.QueueOverview:
        taken_at = memory.clock()
        with stopwatch() as took:
            watch.at("checking the schema")
            check_schema(conn, allow_degraded=True)
            models = checks.read_models(conn, watch=watch)
            watch.at("counting the jobs per status")
            statuses = read.status_summary(conn, exact_limit=REFRESH_STATUS_EXACT_LIMIT)
        return model.QueueOverview(models, models.evaluate(), statuses, taken_at, took.ms)


SNAPSHOT = SnapshotRead()
FAILURE_GROUPS = FailureGroupsRead()
TRENDS = TrendsRead()
WINDOWS = WindowsRead()
HEALTH = HealthRead()
OVERVIEW = OverviewRead()


# -- the drill-downs ----------------------------------------------------------------------
@dataclass(frozen=True)
class GroupJobsRead(Read[read.GroupJobs]):
    """The jobs of one failure group, most recent first."""

    signature: str
    limit: int

    def on_database(self, conn: Conn, memory: Memory) -> read.GroupJobs:
        return read.failure_jobs(conn, self.signature, limit=self.limit)


@dataclass(frozen=True)
class JobRead(Read[read.JobDetail | None]):
    """One job with its full error and payload; None once it no longer exists."""

    task_id: str

    def on_database(self, conn: Conn, memory: Memory) -> read.JobDetail | None:
        return read.job(conn, UUID(self.task_id))


@dataclass(frozen=True)
class WhyRead(Read[read.Why | None]):
    """Why a job waits, most likely cause first; None once it no longer exists."""

    task_id: str

    def on_database(self, conn: Conn, memory: Memory) -> read.Why | None:
        return read.why(conn, UUID(self.task_id))


@dataclass(frozen=True)
class PrefixRead(Read[list[read.JobMatch]]):
    """The first few jobs whose id starts with ``text`` (a ConfigError when it is no id
    or prefix)."""

    text: str

    def on_database(self, conn: Conn, memory: Memory) -> list[read.JobMatch]:
        return read.jobs_with_prefix(conn, self.text)


@dataclass(frozen=True)
class FindRead(Read[list[read.FoundJob]]):
    """The jobs a search finds, most recently active first, at most ``query.limit``."""

    query: FindQuery

    def on_database(self, conn: Conn, memory: Memory) -> list[read.FoundJob]:
        return read.find(conn, self.query)


@dataclass(frozen=True)
class FactorsRead(Read[CommonFactors]):
    """What one failure group's jobs share (its drill-down's header)."""

    signature: str

    def on_database(self, conn: Conn, memory: Memory) -> CommonFactors:
        return common_factors(conn, self.signature)


@dataclass(frozen=True)
class ChartsRead(Read[ChartData]):
    """The per-minute record over one window of the charts screen, every type (cycling
    through the types reads nothing again), and each type's wait SLO."""

    window: Window

    def on_database(self, conn: Conn, memory: Memory) -> ChartData:
        now = datetime.fromtimestamp(memory.clock(), tz=UTC)
        since, until = bounds(self.window, now)
        found = record(conn, since=since, until=until, step=self.window.step)
        waits = {t: s.max_wait_s for t, s in slos(conn).items() if s.max_wait_s is not None}
        return ChartData(self.window, found, waits)


#: a failure group's curve: failures per minute over this many minutes
GROUP_CURVE_MINUTES = 60


@dataclass(frozen=True)
class GroupCurveRead(Read[tuple[int, ...]]):
    """One failure group's failed attempts per minute over the last hour, oldest first,
    from the per-minute record (of its types: the record is per type and signature)."""

    signature: str
    task_types: tuple[str, ...]

    def on_database(self, conn: Conn, memory: Memory) -> tuple[int, ...]:
        now = datetime.fromtimestamp(memory.clock(), tz=UTC)
        found = record(
            conn,
            since=now - timedelta(minutes=GROUP_CURVE_MINUTES - 1),
            until=now,
            types=list(self.task_types) or None,
        )
        return tuple(c.failed for c in found.signature_series(self.signature))
