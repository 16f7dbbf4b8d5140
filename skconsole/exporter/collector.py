"""One query cycle per interval, whatever the number of scrapers.

A background thread runs every source of :data:`~skconsole.exporter.sources.SOURCES`
once per interval, in one read-only transaction (one consistent view of the
queue), and publishes the result as an immutable :class:`Snapshot`. A scrape
only renders the latest snapshot (:meth:`Exporter.collect`): it never touches
the database, so scrapers, however many and however often, add no load.

A failed cycle (server down, schema missing, a statement timing out) logs one
line (a failure repeating itself is logged once), publishes a snapshot with ``skconsole_exporter_up 0`` and no queue
metrics (stale figures would keep alerts quiet), drops the connection and
tries again at the next interval; serving never stops.

Every cycle is bounded end to end (``timeout_s``, connecting included) by
:func:`skconsole.check.verdict.within`: a server that hangs, or a network path that goes
silent without a reset (no TCP timeout notices a path that acknowledges and
then says nothing), makes the cycle fail at its bound like any other failure,
naming what it was waiting for; its connection is shut down, and the next cycle
connects again. A scrape never serves figures older than one interval plus one
bound: past that it gets ``up 0`` and no queue metrics, whatever the cycle
thread is doing.

Several queues (:class:`QueueExporters`): one :class:`Exporter` each, on its own
thread with its own connection and layout, so a queue that cannot be reached only
turns its own ``skconsole_exporter_up`` to 0; a scrape renders every queue's latest
snapshot with a ``queue`` label on each sample.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import psycopg
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from skconsole.check.verdict import READ_TIMEOUT_S, TimedOut, Watch, bounded_session, within
from skconsole.db.connect import Database
from skconsole.db.mapping import TableMapping
from skconsole.db.schema import check_schema
from skconsole.exporter.sources import SOURCES, Source

log = logging.getLogger("skconsole.exporter")

APPLICATION_NAME = "skconsole-exporter"
#: how long a scrape made before the first cycle ended waits for it
FIRST_CYCLE_WAIT_S = 5.0
#: how long one cycle may take, end to end, unless told (``--timeout``)
DEFAULT_TIMEOUT_S = READ_TIMEOUT_S


@dataclass(frozen=True)
class Snapshot:
    """What the latest cycle read, and the exporter's own counts; replaced whole, never changed.

    ``families`` is empty when the cycle failed. ``finished_at`` is wall-clock
    time (None: no cycle has finished yet); ``finished_mono`` the same moment on
    the monotonic clock, which tells a scrape how old the figures are.
    """

    families: tuple[Metric, ...] = ()
    up: bool = False
    finished_at: float | None = None
    duration_s: float | None = None
    cycles_ok: int = 0
    cycles_failed: int = 0
    finished_mono: float | None = None

    def aged(self, now_mono: float, max_age_s: float) -> Snapshot:
        """This snapshot as a scrape at ``now_mono`` may serve it: a working one older
        than ``max_age_s`` loses its figures and reads ``up 0`` (the cycles stopped
        arriving, so nothing says the figures are still true)."""
        if not self.up or self.finished_mono is None:
            return self
        if now_mono - self.finished_mono <= max_age_s:
            return self
        return replace(self, families=(), up=False)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class Exporter:
    """Reads the sources every ``interval_s`` on its own thread; a Collector for a registry.

    The sessions are read-only on the server whatever the options say
    (``default_transaction_read_only``, and each cycle's transaction is
    READ ONLY): the exporter never writes, not even the schema. ``layout``: the
    queue's own names (None: the process's); ``name``: the queue's, in its log lines.
    """

    def __init__(
        self,
        db: Database,
        interval_s: float,
        sources: Sequence[Source] = SOURCES,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        *,
        layout: TableMapping | None = None,
        name: str | None = None,
    ) -> None:
        self.db = Database(
            db.dsn,
            read_only=True,
            application_name=APPLICATION_NAME,
            description=db.description,
            keepalive=db.keepalive,
            mapping=layout or db.mapping,
        )
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.sources = tuple(sources)
        self.name = name
        self._snapshot = Snapshot()
        #: the connection cycles reuse; only the thread of the cycle in progress uses it
        self._conn: psycopg.Connection[Any] | None = None
        self._conn_lock = threading.Lock()
        #: the failure last logged, until a cycle works again (each new failure is logged)
        self._logged_error: str | None = None
        self._first = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    # -- the cycle ---------------------------------------------------------------------
    def _connection(self, watch: Watch) -> psycopg.Connection[Any]:
        with self._conn_lock:
            conn = self._conn
        if conn is not None and not (conn.closed or conn.broken):
            return watch.track(conn)
        conn = watch.track(self.db.connect(**bounded_session(self.timeout_s)))
        try:
            watch.at("checking the schema")
            check_schema(conn)
            conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            conn.read_only = True
        except BaseException:
            conn.close()
            raise
        with self._conn_lock:
            if watch.was_cut:  # the cycle was given up meanwhile: keep nothing of it
                conn.close()
                raise TimedOut(watch.message())
            self._conn = conn
        return conn

    def _drop_connection(self) -> None:
        with self._conn_lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def _forget_connection(self) -> None:
        """Let go of a connection a given-up cycle's thread may still hold: it was shut
        down under that thread (:meth:`Watch.cut`), which closes it on its way out."""
        with self._conn_lock:
            self._conn = None

    def _read(self, watch: Watch) -> list[Metric]:
        """One cycle's reads, on the bounded thread (its connection in the queue's layout)."""
        return self._read_sources(watch)

    def _read_sources(self, watch: Watch) -> list[Metric]:
        """Every source in one transaction."""
        conn = self._connection(watch)
        families: list[Metric] = []
        try:
            watch.at("opening the cycle's transaction")
            with conn.transaction():
                for source in self.sources:
                    watch.at(f"reading {getattr(source, '__name__', 'a source')}")
                    families.extend(source(conn))
        except BaseException:
            if watch.was_cut:
                conn.close()  # shut down under it: no other thread will close it
            raise
        return families

    def cycle(self) -> Snapshot:
        """Read every source once, within ``timeout_s``, and publish the result; never
        raises (but for interrupts)."""
        started = time.monotonic()
        previous = self._snapshot
        try:
            families = within(self.timeout_s, self._read, name="skconsole-exporter-cycle")
        except Exception as exc:  # whatever failed, the exporter keeps serving
            if isinstance(exc, TimedOut):
                self._forget_connection()
            else:
                self._drop_connection()
            error = _first_line(exc)
            if error != self._logged_error:  # a server down for an hour: one line, not 240
                log.warning("%scycle failed, skconsole_exporter_up is 0: %s", self._who, error)
                self._logged_error = error
            snapshot = Snapshot(
                up=False,
                finished_at=time.time(),
                duration_s=time.monotonic() - started,
                cycles_ok=previous.cycles_ok,
                cycles_failed=previous.cycles_failed + 1,
                finished_mono=time.monotonic(),
            )
        else:
            if self._logged_error is not None:
                log.warning("%scycle succeeded again, skconsole_exporter_up is 1", self._who)
                self._logged_error = None
            snapshot = Snapshot(
                families=tuple(families),
                up=True,
                finished_at=time.time(),
                duration_s=time.monotonic() - started,
                cycles_ok=previous.cycles_ok + 1,
                cycles_failed=previous.cycles_failed,
                finished_mono=time.monotonic(),
            )
        self._snapshot = snapshot  # one reference assignment: a scrape sees all or nothing
        self._first.set()
        return snapshot

    @property
    def _who(self) -> str:
        return "" if self.name is None else f"queue {self.name!r}: "

    # -- the thread --------------------------------------------------------------------
    def _run(self) -> None:
        next_at = time.monotonic()
        while not self._stop.is_set():
            self.cycle()
            # a cycle longer than the interval: the next one starts at once, none piles up
            next_at = max(next_at + self.interval_s, time.monotonic())
            self._stop.wait(next_at - time.monotonic())
        self._drop_connection()

    def start(self) -> None:
        """Start the cycles on a daemon thread (the first one at once)."""
        thread_name = "skconsole-exporter" + ("" if self.name is None else f"-{self.name}")
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Stop the cycles: the current one finishes first (within its bound); the
        connection is closed."""
        self.request_stop()
        if self._thread is not None:
            self._thread.join(timeout)

    def request_stop(self) -> None:
        """Stop the cycles without waiting: the current one finishes first."""
        self._stop.set()

    # -- the scrape --------------------------------------------------------------------
    @property
    def max_age_s(self) -> float:
        """The oldest figures a scrape serves: one interval and one cycle's bound (and a
        second of slack), the most a working exporter ever leaves between two cycles."""
        return self.interval_s + self.timeout_s + 1.0

    def collect(self) -> Iterable[Metric]:
        """The latest snapshot and the exporter's own metrics (prometheus_client's Collector).

        A scrape before the first cycle ended waits for it, at most
        FIRST_CYCLE_WAIT_S; then it serves what there is (up 0). Figures older than
        :attr:`max_age_s` are never served (:meth:`Snapshot.aged`).
        """
        return self.families(FIRST_CYCLE_WAIT_S)

    def families(self, wait_s: float) -> list[Metric]:
        """What a scrape serves now, once the first cycle ended or ``wait_s`` passed."""
        self._first.wait(max(wait_s, 0.0))
        return snapshot_families(self._snapshot.aged(time.monotonic(), self.max_age_s))


class QueueExporters:
    """An :class:`Exporter` per queue, named; a Collector whose scrape serves every
    queue's latest snapshot, each sample labelled with its ``queue``. Each queue reads
    on its own thread: one that cannot be reached (or hangs) is its own ``up 0``."""

    def __init__(self, exporters: Sequence[tuple[str, Exporter]]) -> None:
        self.exporters = tuple(exporters)

    def start(self) -> None:
        for _, exporter in self.exporters:
            exporter.start()

    def stop(self, timeout: float | None = None) -> None:
        for _, exporter in self.exporters:
            exporter.request_stop()  # every queue's cycles stop at once, then each is joined
        for _, exporter in self.exporters:
            exporter.stop(timeout)

    def collect(self) -> Iterable[Metric]:
        """Every queue's families merged by name (a family is exposed once), a ``queue``
        label first on each sample. A scrape before a queue's first cycle ended waits
        for it, all of them within one FIRST_CYCLE_WAIT_S."""
        deadline = time.monotonic() + FIRST_CYCLE_WAIT_S
        merged: dict[str, Metric] = {}
        for name, exporter in self.exporters:
            for family in exporter.families(deadline - time.monotonic()):
                into = merged.get(family.name)
                if into is None:
                    into = merged[family.name] = Metric(
                        family.name, family.documentation, family.type, family.unit
                    )
                into.samples += [
                    s._replace(labels={"queue": name, **s.labels}) for s in family.samples
                ]
        return list(merged.values())


def snapshot_families(snap: Snapshot) -> list[Metric]:
    """Everything a scrape serves from ``snap``: its families, then the exporter's own."""
    return [*snap.families, *own_families(snap)]


def own_families(snap: Snapshot) -> list[Metric]:
    """The exporter's own metrics: whether the last cycle worked, when, how long it took."""
    families: list[Metric] = [
        GaugeMetricFamily(
            "skconsole_exporter_up",
            "1 when the last cycle read the database, 0 when it failed (or none has ended yet).",
            value=float(snap.up),
        )
    ]
    if snap.finished_at is not None and snap.duration_s is not None:
        families.append(
            GaugeMetricFamily(
                "skconsole_exporter_last_cycle_timestamp_seconds",
                "When the last cycle ended (Unix time), whether it worked or not.",
                value=snap.finished_at,
            )
        )
        families.append(
            GaugeMetricFamily(
                "skconsole_exporter_cycle_duration_seconds",
                "How long the last cycle took.",
                value=snap.duration_s,
            )
        )
    cycles = CounterMetricFamily(
        "skconsole_exporter_cycles",
        "Cycles run since the exporter started, by result (ok, failed).",
        labels=["result"],
    )
    cycles.add_metric(["ok"], snap.cycles_ok)
    cycles.add_metric(["failed"], snap.cycles_failed)
    families.append(cycles)
    return families
