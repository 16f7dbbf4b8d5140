"""The console's data source on PostgreSQL: the one module that opens the console's
connections and calls ``skconsole.ops``.

It answers any :class:`skconsole.tui.reads.Read` the same way (on the connection of
the request's purpose, through the read models) and turns the console's action
requests into ops selections, previews and executions. Everything here blocks on
the network, so the app calls it only from worker threads.

Connections: one per purpose (refresh, failure groups, trends, health,
drill-down, actions, the overview of several queues), opened lazily
and kept, so the worker groups never share a connection. With a hot standby to
read from (``--read-dsn``), the views of the queue's rows read it; actions and
the health panel (the server's own sessions, locks, table statistics and xmin
horizon, which a standby does not replicate) go to the primary, ``writes``. A queue with names of
its own (``layout``, from a queues file) is read in them on every connection. A connection that
breaks is dropped and :class:`SourceUnavailable` raised; the next call
reconnects. What the console keeps between refreshes (trends) is the source's
:class:`skconsole.tui.refresh.Memory`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, TypeVar
from uuid import UUID

import psycopg

from skconsole import ops
from skconsole.check import verdict as checks
from skconsole.core.actor import Origin
from skconsole.core.errors import ConfigError, ConnectError
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database, shown_dsn
from skconsole.db.mapping import TableMapping
from skconsole.tui import model
from skconsole.tui.formatting import short_id
from skconsole.tui.reads import BoundedRead, Purpose, Read
from skconsole.tui.refresh import Memory
from skconsole.tui.source import SourceUnavailable

Conn = psycopg.Connection[Any]
T = TypeVar("T")

SAMPLE_SHOWN = 5
#: the connection an action goes on (the primary's)
ACTION = "action"


class DatabaseSource:
    """The console's data source on PostgreSQL (see :class:`skconsole.tui.source.DataSource`)."""

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
        self.memory = Memory(clock=clock)
        self._conns: dict[str, Conn | None] = {}
        self._locks: dict[str, threading.Lock] = {
            p: threading.Lock() for p in [*(p.value for p in Purpose), ACTION]
        }

    # -- connections -----------------------------------------------------------------
    @contextmanager
    def _conn(self, purpose: str, *, primary: bool = False) -> Iterator[Conn]:
        """The purpose's connection, in the queue's layout; a broken one is dropped and
        reported as unavailable."""
        with self._locks[purpose]:
            conn = self._conns.get(purpose)
            if conn is None or conn.closed or conn.broken:
                db = self.writes if primary else self.db
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

    # -- reads -------------------------------------------------------------------------
    def read(self, request: Read[T]) -> T:
        """Any request, on the connection of its purpose (the primary's where it reads the
        server's own state); a bounded one within its bound, connecting included."""
        purpose = request.purpose
        if isinstance(request, BoundedRead):
            bounded: BoundedRead[T] = request

            def watched(watch: checks.Watch) -> T:
                with self._conn(purpose.value, primary=purpose.primary) as conn:
                    watch.track(conn)
                    return bounded.on_watched(conn, self.memory, watch)

            try:
                return checks.within(request.bound_s, watched, name=f"skconsole-{purpose.value}")
            except checks.TimedOut as exc:
                raise SourceUnavailable(str(exc)) from None
        with self._conn(purpose.value, primary=purpose.primary) as conn:
            return request.on_database(conn, self.memory)

    # -- actions ---------------------------------------------------------------------------
    def preview(self, request: model.ActionRequest) -> model.PreviewInfo:
        with self._conn(ACTION, primary=True) as conn:
            got = request.action.preview(conn, _selection(request), request.params)
        sample = tuple(_sample_line(r) for r in got.sample[:SAMPLE_SHOWN])
        forecast = got.forecast.text if got.forecast is not None else ""
        return model.PreviewInfo(request, int(got.count), sample, got, dict(got.details), forecast)

    def execute(self, preview: model.PreviewInfo, actor: str) -> model.OutcomeInfo:
        request = preview.request
        got = preview.handle
        if not isinstance(got, ops.Preview):
            raise ConfigError("this action was not previewed by the database source")
        who = replace(ops.Actor.current(origin=Origin.CONSOLE), user=actor)
        with self._conn(ACTION, primary=True) as conn:
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
