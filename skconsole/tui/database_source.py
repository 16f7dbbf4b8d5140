"""The console's data layer: the one module that calls ``skconsole.read`` and ``skconsole.ops``.

It gathers the read models into the console's snapshots
(:mod:`skconsole.tui.model`) and turns the console's action requests into ops
selections, previews and executions. Everything here blocks on the network,
so the app calls it only from worker threads.

Connections: one per purpose (refresh, failure groups, trends, health,
drill-down, actions, the overview of several queues), opened lazily
and kept, so the worker groups never share a connection. With a hot standby to
read from (``--read-dsn``), the views of the queue's rows read it; actions and
the health panel (the server's own sessions, locks, table statistics and xmin
horizon, which a standby does not replicate) go to the primary, ``writes``. A queue with names of
its own (``layout``, from a queues file) is read in them on every connection. A connection that
breaks is dropped and :class:`SourceUnavailable` raised; the next call
reconnects. History the console shows as trends (depth per type, metric
rates) is kept here, between refreshes.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from typing import Any, TypeVar
from uuid import UUID

import psycopg

from skconsole import ops, read
from skconsole.check import verdict as checks
from skconsole.core.errors import ConfigError, ConnectError
from skconsole.core.find_query import FindQuery
from skconsole.core.payload_terms import parse_term
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database, shown_dsn
from skconsole.db.layout import has_skconsole_objects
from skconsole.db.mapping import TableMapping
from skconsole.db.schema import check_schema
from skconsole.read import flow, health, type_settings
from skconsole.read.factors import CommonFactors, common_factors
from skconsole.tui import model
from skconsole.tui.formatting import format_age, short_id
from skconsole.tui.source import SourceUnavailable
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
SAMPLE_SHOWN = 5
#: how long one overview read of a queue may take, connecting included (check's bound)
OVERVIEW_TIMEOUT_S = checks.READ_TIMEOUT_S


class DatabaseSource:
    """The console's data source on PostgreSQL (see :class:`skconsole.tui.source.DataSource`)."""

    #: the purposes that go to the primary when the console reads a standby
    PRIMARY_PURPOSES = frozenset({"action", "health"})

    def __init__(
        self,
        db: Database,
        *,
        clock: Callable[[], float] = time.time,
        layout: TableMapping | None = None,
        writes: Database | None = None,
    ) -> None:
        # the queue's layout travels with each of its connections
        self.db = replace(db, mapping=layout) if layout is not None else db
        writes = writes or db
        self.writes = replace(writes, mapping=layout) if layout is not None else writes
        self.read_only = self.writes.read_only
        self.description = db.description
        self.connection = shown_dsn(db.dsn)
        self.clock = clock
        self._conns: dict[str, Conn | None] = {}
        self._locks: dict[str, threading.Lock] = {
            p: threading.Lock()
            for p in ("refresh", "failures", "trends", "health", "drill", "action", "overview")
        }
        self._trends: dict[str, deque[int]] = {}
        self._waiting: deque[int] = deque(maxlen=TREND_POINTS)
        self._metrics_before: tuple[read.MetricsSnapshot, float] | None = None

    # -- connections -----------------------------------------------------------------
    @contextmanager
    def _conn(self, purpose: str) -> Iterator[Conn]:
        """The purpose's connection, in the queue's layout; a broken one is dropped and
        reported as unavailable."""
        with self._locks[purpose]:
            conn = self._conns.get(purpose)
            if conn is None or conn.closed or conn.broken:
                db = self.writes if purpose in self.PRIMARY_PURPOSES else self.db
                try:
                    conn = db.connect(application_name="skconsole-console")
                except ConnectError as exc:
                    raise SourceUnavailable(str(exc)) from None
                self._conns[purpose] = conn
            try:
                yield conn
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                self._drop(purpose)
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise SourceUnavailable(first) from None

    def _drop(self, purpose: str) -> None:
        conn = self._conns.pop(purpose, None)
        if conn is not None:
            with contextlib.suppress(Exception):  # already broken: nothing more to release
                conn.close()

    def close(self) -> None:
        for purpose in list(self._conns):
            self._drop(purpose)

    # -- the refresh cycle ---------------------------------------------------------------
    def snapshot(self) -> model.Snapshot:
        """One refresh: every panel's read model but the failure groups.

        Each read stays cheap on a big queue: depth samples the queue, and a
        status with more than REFRESH_STATUS_EXACT_LIMIT rows is the planner's estimate
        (both flagged, and shown as estimates). The failure groups, which
        aggregate every failed row, are :meth:`failure_groups`, on a slower
        cadence of their own.
        """
        started = time.perf_counter()
        timings: list[tuple[str, float]] = []

        def timed(name: str, read: Callable[[], T]) -> T:
            t0 = time.perf_counter()
            value = read()
            timings.append((name, (time.perf_counter() - t0) * 1000.0))
            return value

        with self._conn("refresh") as conn:
            depth = timed("depth", lambda: read.depth(conn))
            limits = timed("limits", lambda: read.limits(conn))
            slos = timed("slos", lambda: type_settings.slos(conn))
            finished = timed("flow", lambda: flow.window_counts(conn))
            inflight = timed("inflight", lambda: read.inflight(conn, limit=INFLIGHT_SHOWN))
            times = timed("execution_stats", lambda: read.execution_stats(conn))
            metrics = timed("metrics", lambda: read.metrics(conn, taken_at=time.monotonic()))
            workers = timed("workers", lambda: read.workers(conn))
            statuses = timed(
                "status_summary",
                lambda: read.status_summary(conn, exact_limit=REFRESH_STATUS_EXACT_LIMIT),
            )
            audit = timed("audit", lambda: ops.audit.entries(conn, limit=AUDIT_SHOWN))
            schedules = timed("schedules", lambda: read.schedules(conn, queue=depth))
            replication = timed("replication", lambda: read.replication(conn))
            version = read.server_version(conn)
            degraded = not has_skconsole_objects(conn)
        read_ms = (time.perf_counter() - started) * 1000.0
        return model.Snapshot(
            taken_at=self.clock(),
            server_version=version or "",
            depth=self._depth_rows(depth, limits, slos, finished),
            inflight=tuple(inflight.jobs),
            exec_stats=tuple(times),
            metrics=self._metric_rows(metrics),
            workers=tuple(workers),
            audit=tuple(_audit_row(a) for a in audit),
            schedules=tuple(schedules),
            statuses=statuses,
            waiting=tuple(self._waiting),
            read_ms=read_ms,
            timings=tuple(timings),
            degraded=degraded,
            replication=replication,
        )

    def failure_groups(self) -> model.FailureGroups:
        """The failure groups, on their own connection (their own, slower cadence)."""
        with self._conn("failures") as conn:
            taken_at = self.clock()  # the data is as of the start of the read
            started = time.perf_counter()
            groups = read.failure_groups(conn, limit=FAILURE_GROUPS_SHOWN)
            read_ms = (time.perf_counter() - started) * 1000.0
        return model.FailureGroups(tuple(groups), taken_at=taken_at, read_ms=read_ms)

    def trends(self) -> model.Trends:
        with self._conn("trends") as conn:
            history = read.history(conn, minutes=HISTORY_MINUTES)
        return model.Trends(
            processed=tuple(history.series("processed")),
            failed=tuple(history.series("failed")),
            posted=tuple(history.series("posted")),
        )

    def health(self) -> model.QueueHealth:
        """The queue tables' health, on its own connection (its own, slower cadence): it
        reads the server's activity and lock views and sizes every hot table."""
        with self._conn("health") as conn:
            taken_at = self.clock()
            started = time.perf_counter()
            read = health.health(conn)
            read_ms = (time.perf_counter() - started) * 1000.0
        return model.QueueHealth(read, taken_at=taken_at, read_ms=read_ms)

    def overview(self) -> model.QueueOverview:
        """What ``skconsole check`` reads, judged as it judges it, and the jobs per status,
        on a connection of its own within :data:`OVERVIEW_TIMEOUT_S` (connecting
        included): a queue that does not answer is unavailable, never a stalled read."""

        def read_it(watch: checks.Watch) -> model.QueueOverview:
            with self._conn("overview") as conn:
                watch.track(conn)
                taken_at = self.clock()
                started = time.perf_counter()
                watch.at("checking the schema")
                check_schema(conn, allow_degraded=True)
                models = checks.read_models(conn, watch=watch)
                watch.at("counting the jobs per status")
                statuses = read.status_summary(conn, exact_limit=REFRESH_STATUS_EXACT_LIMIT)
                read_ms = (time.perf_counter() - started) * 1000.0
            return model.QueueOverview(models, models.evaluate(), statuses, taken_at, read_ms)

        try:
            return checks.within(OVERVIEW_TIMEOUT_S, read_it, name="skconsole-overview")
        except checks.TimedOut as exc:
            raise SourceUnavailable(str(exc)) from None

    def _depth_rows(
        self,
        depth: read.Depth,
        limits: list[read.TypeLimit],
        slos: dict[str, type_settings.TypeSlo],
        finished: dict[str, flow.TypeCounts],
    ) -> tuple[model.DepthRow, ...]:
        by_type = {t.task_type: t for t in limits}
        seen = set()
        rows = []
        for t in depth.types:
            seen.add(t.task_type)
            trend = self._trends.setdefault(t.task_type, deque(maxlen=TREND_POINTS))
            trend.append(t.ready + t.scheduled)
            slo = slos.get(t.task_type)
            done = finished.get(t.task_type)
            rows.append(
                model.DepthRow(
                    **asdict(t),
                    trend=tuple(trend),
                    estimated=depth.estimated,
                    limit=by_type.get(t.task_type),
                    slo_s=slo.max_wait_s if slo else None,
                    failed=done.failed if done else 0,
                    finished=done.finished if done else 0,
                    max_failure_rate=slo.max_failure_rate if slo else None,
                )
            )
        for gone in set(self._trends) - seen:
            del self._trends[gone]
        self._waiting.append(depth.ready + depth.scheduled)
        return tuple(rows)

    def _metric_rows(self, snap: read.MetricsSnapshot) -> tuple[model.MetricRow, ...]:
        now = snap.taken_at
        rates: dict[str, float | None] = {}
        if self._metrics_before is not None:
            before, at = self._metrics_before
            rates = read.metric_rates(before, snap, now - at)
        self._metrics_before = (snap, now)
        return metric_rows(snap, rates)

    # -- drill-down ----------------------------------------------------------------------
    def group_jobs(self, signature: str, limit: int) -> read.GroupJobs:
        with self._conn("drill") as conn:
            return read.failure_jobs(conn, signature, limit=limit)

    def job_detail(self, task_id: str) -> read.JobDetail | None:
        with self._conn("drill") as conn:
            return read.job(conn, UUID(task_id))

    def why(self, task_id: str) -> read.Why | None:
        with self._conn("drill") as conn:
            return read.why(conn, UUID(task_id))

    def jobs_by_prefix(self, text: str) -> list[read.JobMatch]:
        with self._conn("drill") as conn:
            return read.jobs_with_prefix(conn, text)

    def find_jobs(self, query: FindQuery) -> list[read.FoundJob]:
        with self._conn("drill") as conn:
            return read.find(conn, query)

    def common_factors(self, signature: str) -> CommonFactors:
        with self._conn("drill") as conn:
            return common_factors(conn, signature)

    # -- actions ---------------------------------------------------------------------------
    def preview(self, request: model.ActionRequest) -> model.PreviewInfo:
        with self._conn("action") as conn:
            got = request.action.preview(conn, _selection(request), request.params)
        sample = tuple(_sample_line(r) for r in got.sample[:SAMPLE_SHOWN])
        return model.PreviewInfo(request, int(got.count), sample, got, dict(got.details))

    def execute(self, preview: model.PreviewInfo, actor: str) -> model.OutcomeInfo:
        request = preview.request
        got = preview.handle
        if not isinstance(got, ops.Preview):
            raise ConfigError("this action was not previewed by the database source")
        who = replace(ops.Actor.current(), user=actor)
        with self._conn("action") as conn:
            result = request.action.execute(
                conn, got.selection, request.params, actor=who, ids=got.ids
            )
        return model.OutcomeInfo(
            request,
            int(result.requested),
            int(result.changed),
            int(result.skipped_changed_state),
            dict(result.details),
        )


# -- conversions --------------------------------------------------------------------------
def _selection(request: model.ActionRequest) -> ops.Selection:
    t = request.target
    return ops.Selection(
        ids=tuple(UUID(i) for i in t.ids),
        group=t.group,
        task_type=t.task_type,
        older_than_seconds=t.older_than_s,
    )


def _sample_line(row: ops.JobRow) -> str:
    note = f"  {row.note}" if row.note else ""
    return f"{short_id(str(row.task_id))}  {row.task_type}  {JobStatus.label_of(row.status)}{note}"


def _audit_row(a: ops.AuditEntry) -> model.AuditRow:
    return model.AuditRow(
        a.audit_id,
        a.at,
        a.user,
        a.host,
        a.action,
        describe_selection(a.selection),
        a.count,
        audited_jobs(a.selection),
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


def describe_selection(sel: dict[str, Any]) -> str:
    """An audit row's selection in words: "group `X` · 12 ids" ."""
    parts = []
    if sel.get("group"):
        parts.append(f"group `{sel['group']}`")
    if sel.get("task_type"):
        parts.append(f"type {sel['task_type']}")
    if sel.get("statuses"):
        parts.append("status " + ", ".join(JobStatus.label_of(int(s)) for s in sel["statuses"]))
    if sel.get("ids"):
        n = sel.get("ids_count", len(sel["ids"]))
        parts.append(f"{n:,} ids" if n > 1 else f"job {str(sel['ids'][0])[:8]}")
    if sel.get("older_than_seconds") is not None:
        parts.append(f"older than {format_age(float(sel['older_than_seconds']))}")
    return " · ".join(parts) or "all"
