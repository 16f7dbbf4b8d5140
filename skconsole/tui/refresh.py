"""One refresh of the console on PostgreSQL: the read models a snapshot holds, read in
turn on one connection, and what the console keeps between refreshes.

Each read stays cheap on a big queue: depth samples the queue, and a status with
more than :data:`REFRESH_STATUS_EXACT_LIMIT` rows is the planner's estimate (both
flagged, and shown as estimates). The failure groups, which aggregate every failed
row, are read on a slower cadence of their own (:mod:`skconsole.tui.reads`).
History the console shows as trends (depth per type, metric rates) lives in a
:class:`Memory`, which the source keeps.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

import psycopg

from skconsole import ops, read
from skconsole.core.find_query import FindQuery
from skconsole.core.payload_terms import parse_term
from skconsole.core.states import BreakerState
from skconsole.db.layout import has_skconsole_objects
from skconsole.ops.audit_line import what
from skconsole.read import flow, type_settings
from skconsole.tui import model
from skconsole.tui.model import REAPED_SHOWN_S
from skconsole.views.metrics import metric_rows

Conn = psycopg.Connection[Any]
T = TypeVar("T")

TREND_POINTS = 30  # refreshes of history kept per type
HISTORY_MINUTES = 60
FAILURE_GROUPS_SHOWN = 200
#: The console counts a status exactly only up to this many rows (planner
#: estimate) on each refresh; a bigger one is the planner's estimate, shown as such.
REFRESH_STATUS_EXACT_LIMIT = 10_000
INFLIGHT_SHOWN = 500
AUDIT_SHOWN = 50


@dataclass
class Took:
    """How long a timed read took, once it is over."""

    ms: float = 0.0


@dataclass
class Memory:
    """What a source keeps between refreshes (the trends of depth per type and of the
    waiting jobs, the last metrics for their rates) and the console's clock."""

    clock: Callable[[], float] = time.time
    trends: dict[str, deque[int]] = field(default_factory=dict)
    waiting: deque[int] = field(default_factory=lambda: deque(maxlen=TREND_POINTS))
    metrics_before: tuple[read.MetricsSnapshot, float] | None = None
    #: the jobs the last read listed in flight (those that leave are asked whether a
    #: reap put them back) and the reaps found so, by job and instant
    inflight_ids: frozenset[UUID] = frozenset()
    reaped: dict[tuple[UUID, float], read.ReapedAttempt] = field(default_factory=dict)
    #: when the record first saw each failure signature asked about (None: never), asked
    #: once per signature: a signature's first failure does not move (a later one never
    #: lowers it below the rows' own), and the read scans the record's minutes
    first_seen: dict[str, datetime | None] = field(default_factory=dict)
    #: one refresh at a time updates what is kept
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def stopwatch() -> Iterator[Took]:
    """Times the block: its ``ms`` once it is over."""
    took = Took()
    started = time.perf_counter()
    try:
        yield took
    finally:
        took.ms = (time.perf_counter() - started) * 1000.0


def snapshot(conn: Conn, memory: Memory) -> model.Snapshot:
    """Every panel's read model but the failure groups, the health and the windows (each
    on a cadence of its own), each read timed by its name."""
    timings: list[tuple[str, float]] = []

    def timed(name: str, read_it: Callable[[], T]) -> T:
        with stopwatch() as took:
            value = read_it()
        timings.append((name, took.ms))
        return value

    with stopwatch() as took:
        depth = timed("depth", lambda: read.depth(conn))
        limits = timed("limits", lambda: read.limits(conn))
        slos = timed("slos", lambda: type_settings.slos(conn))
        inflight = timed("inflight", lambda: read.inflight(conn, limit=INFLIGHT_SHOWN))
        metrics = timed("metrics", lambda: read.metrics(conn, taken_at=time.monotonic()))
        workers = timed("workers", lambda: read.workers(conn))
        statuses = timed(
            "status_summary",
            lambda: read.status_summary(conn, exact_limit=REFRESH_STATUS_EXACT_LIMIT),
        )
        audit = timed("audit", lambda: ops.audit.entries(conn, limit=AUDIT_SHOWN))
        schedules = timed("schedules", lambda: read.schedules(conn, queue=depth))
        breakers = timed("breakers", lambda: read.breakers(conn))
        replication = timed("replication", lambda: read.replication(conn))
        version = read.server_version(conn)
        degraded = not has_skconsole_objects(conn)
        reaped = timed("reaped", lambda: _reaped(conn, memory, inflight.jobs))
    with memory.lock:
        depth_rows = _depth_rows(memory, depth, limits, slos, breakers)
        metric_rows_ = _metric_rows(memory, metrics)
        waiting = tuple(memory.waiting)
    return model.Snapshot(
        taken_at=memory.clock(),
        server_version=version or "",
        depth=depth_rows,
        inflight=tuple(inflight.jobs),
        metrics=metric_rows_,
        workers=tuple(workers),
        audit=tuple(audit_row(a) for a in audit),
        schedules=tuple(schedules),
        statuses=statuses,
        waiting=waiting,
        read_ms=took.ms,
        timings=tuple(timings),
        degraded=degraded,
        replication=replication,
        reaped=reaped,
    )


def _reaped(
    conn: Conn, memory: Memory, inflight: list[read.InflightJob]
) -> tuple[read.ReapedAttempt, ...]:
    """The reaps of the last :data:`REAPED_SHOWN_S` seconds that put back jobs this console
    listed in flight, newest first: the jobs listed last time and not now are asked
    (by their ids) whether a reap is why they left."""
    now = {j.task_id for j in inflight}
    with memory.lock:
        left = memory.inflight_ids - now
        memory.inflight_ids = frozenset(now)
    found = read.reaped(conn, sorted(left), REAPED_SHOWN_S) if left else []
    with memory.lock:
        for r in found:
            memory.reaped[(r.task_id, r.reaped_at.timestamp())] = r
        cutoff = memory.clock() - REAPED_SHOWN_S
        for key in [k for k in memory.reaped if k[1] < cutoff]:
            del memory.reaped[key]
        kept = sorted(memory.reaped.values(), key=lambda r: (r.reaped_at, str(r.task_id)))
    return tuple(reversed(kept))


def windows(conn: Conn, memory: Memory) -> model.Windows:
    """The execution times and each type's finished jobs within the flow window."""
    taken_at = memory.clock()
    with stopwatch() as took:
        times = read.execution_stats(conn)
        finished = flow.window_counts(conn)
    return model.Windows(tuple(times), finished, taken_at, took.ms)


def _depth_rows(
    memory: Memory,
    depth: read.Depth,
    limits: list[read.TypeLimit],
    slos: dict[str, type_settings.TypeSlo],
    breakers: list[read.Breaker],
) -> tuple[model.DepthRow, ...]:
    """The depth rows with their trends, limits and SLOs; their finished and failed jobs
    come from the windows' own cadence (:meth:`model.Snapshot.with_windows`)."""
    by_type = {t.task_type: t for t in limits}
    held: dict[str, list[read.Breaker]] = {}
    for b in breakers:
        if b.state.holds:
            held.setdefault(b.task_type, []).append(b)
    seen = set()
    rows = []
    for t in depth.types:
        seen.add(t.task_type)
        trend = memory.trends.setdefault(t.task_type, deque(maxlen=TREND_POINTS))
        trend.append(t.ready + t.scheduled)
        slo = slos.get(t.task_type)
        rows.append(
            model.DepthRow(
                **asdict(t),
                trend=tuple(trend),
                estimated=depth.estimated,
                limit=by_type.get(t.task_type),
                slo_s=slo.max_wait_s if slo else None,
                max_failure_rate=slo.max_failure_rate if slo else None,
                breaker=_breaker_state(held.get(t.task_type, [])),
                breaker_open=any(b.state is BreakerState.OPEN for b in held.get(t.task_type, [])),
            )
        )
    for gone in set(memory.trends) - seen:
        del memory.trends[gone]
    memory.waiting.append(depth.ready + depth.scheduled)
    return tuple(rows)


def _breaker_state(held: list[read.Breaker]) -> str | None:
    """A type's breakers holding jobs back, short enough for the state column: "breaker
    open 1,204" (the jobs held)."""
    if not held:
        return None
    states = "/".join(dict.fromkeys(b.state.word for b in held))
    return f"breaker {states} {sum(b.held for b in held):,}"


def _metric_rows(memory: Memory, snap: read.MetricsSnapshot) -> tuple[model.MetricRow, ...]:
    now = snap.taken_at
    rates: dict[str, float | None] = {}
    if memory.metrics_before is not None:
        before, at = memory.metrics_before
        rates = read.metric_rates(before, snap, now - at)
    memory.metrics_before = (snap, now)
    return metric_rows(snap, rates)


def audit_row(a: ops.AuditEntry) -> model.AuditRow:
    return model.AuditRow(
        a.audit_id, a.at, a.who, a.action, what(a), a.count, audited_jobs(a.selection)
    )


def audited_jobs(sel: dict[str, Any]) -> FindQuery | None:
    """The search that lists the jobs an audited action was on: its ids (the first 100 of a
    big selection), else its filters; None when it names none (a purge by age, a vacuum)."""
    ids = sel.get("ids")
    if isinstance(ids, list) and ids:
        return FindQuery(ids=tuple(UUID(str(i)) for i in ids), limit=len(ids))
    where = sel.get("where")
    listed = where if isinstance(where, list) else []
    terms = tuple(parse_term(f"{t['path']}={t['value']}") for t in listed if isinstance(t, dict))
    statuses = sel.get("statuses")
    query = FindQuery(
        where=terms,
        task_type=sel.get("task_type") or None,
        statuses=tuple(int(s) for s in statuses) if isinstance(statuses, list) else (),
        group=sel.get("group") or None,
    )
    return None if query == FindQuery() else query
