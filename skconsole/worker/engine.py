"""One worker process: claim in batches, run with bounded concurrency, record results.

Connections: *control* holds the liveness advisory lock and LISTENs; *claim*
only claims; *finish* writes results, heartbeats, reaps and flushes metrics.
Any of them may drop: each is reopened with back-off and the loops carry on.
The jobs this process holds are tracked in ``_held`` until their result is
written; whatever the database says we own beyond that (a claim whose answer
was lost with its connection) is handed straight back, so no job is stranded
with a live owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import threading
import time
import traceback
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

import psycopg

from skconsole.db.connect import Database
from skconsole.db.sqlfiles import load_sql
from skconsole.errors import ConfigError, ConnectError, FatalTaskError
from skconsole.worker.metrics import MetricsBuffer
from skconsole.worker.registry import JobContext, TaskRegistry

log = logging.getLogger("skconsole.worker")

CHANNEL = "sk_task_queue_item_added"
T = TypeVar("T")

# The finish connection updates result rows by id, a batch at a time. A burst
# outruns autovacuum: planned with statistics of the table when it was nearly
# empty, those updates once scanned the whole table (or walked a status index
# over every dead entry, or paired every result with every id) for each batch,
# 8-27 s a batch. Its statements are written so that only the primary key
# serves them cheaply; without sequential scans and nested loops the planner
# has no other choice left, whatever the statistics say.
FINISH_SESSION = (
    "SELECT set_config('enable_seqscan', 'off', false), set_config('enable_nestloop', 'off', false)"
)
# results written per statement: bounded, so a plan that joins a batch
# pairwise (statistics again) stays milliseconds, not minutes
WRITE_BATCH = 500

UNPROCESSED, PROCESSING, PROCESSED, ERROR, FAULTED, FATAL, CANCELLED = 1, 2, 3, 4, 5, 6, 7


@dataclass
class WorkerConfig:
    """Knobs of one worker process; defaults suit most queues."""

    concurrency: int = 10
    batch_size: int = 100
    poll_interval: float = 1.0
    heartbeat_interval: float = 1.0
    heartbeat_stale: float = 30.0
    #: a worker whose liveness lock is free is reaped once its heartbeat is this old
    liveness_grace: float = 3.0
    reap_interval: float = 2.0
    timeout_grace: float = 10.0
    unowned_after: float = 3600.0
    grace_period: float = 10.0
    metrics_interval: float = 2.0
    burst: bool = False
    burst_horizon: float = 1.0
    reap: bool = True
    process_id: str = field(default_factory=lambda: f"skconsole-{socket.gethostname()}")

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError("concurrency must be at least 1")
        if self.batch_size < 1:
            raise ConfigError("batch size must be at least 1")


@dataclass
class Claimed:
    task_id: uuid.UUID
    task_type: str
    source: str
    payload: str | None
    priority: int
    posted_at: datetime
    attempt: int
    error_count: int


@dataclass
class Outcome:
    job: Claimed
    ms: int
    status: int  # PROCESSED, ERROR, FAULTED, FATAL, or UNPROCESSED for a hand-back
    error: str | None = None
    recoverable: bool = False
    delay_ms: float = 0.0


def _error_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)).strip()


def _storable(text: str) -> str:
    """Text PostgreSQL accepts: no NUL bytes, valid UTF-8 (lone surrogates replaced)."""
    return text.replace("\x00", "\\0").encode("utf-8", "replace").decode("utf-8")


def _is_connection_error(exc: BaseException) -> bool:
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError | OSError)


class Engine:
    """Runs the handlers of ``registry`` until :meth:`stop` (or, in burst mode, until idle)."""

    def __init__(self, db: Database, registry: TaskRegistry, config: WorkerConfig | None = None):
        if not len(registry):
            raise ConfigError("no task types to run: the task module registers none")
        self.db = db
        self.registry = registry
        self.config = config or WorkerConfig()
        self.worker_id = uuid.uuid4()
        self.types = registry.names()
        self.metrics = MetricsBuffer()
        self._held: dict[uuid.UUID, int] = {}  # claimed, result not yet written: id -> attempt
        self._running: dict[uuid.UUID, asyncio.Task[None]] = {}
        self._outcomes: list[Outcome] = []
        self._wake = asyncio.Event()
        self._outcome_ready = asyncio.Event()
        self._stopping = asyncio.Event()
        self._backlog = True
        self._lock_key: int | None = None
        self._conns: dict[str, psycopg.AsyncConnection[Any] | None] = {}
        # live sync-handler threads, timed-out ones included: a handler past its
        # timeout cannot be killed and keeps its thread until it returns
        self._threads = 0
        self._claim_unsure = False
        self.processed = 0
        self.state = "starting"
        self._crashed: BaseException | None = None

    # -- public --------------------------------------------------------------
    def stop(self) -> None:
        """Stop claiming; running jobs get the grace period, the rest go back to the queue."""
        self._stopping.set()
        self._wake.set()

    @property
    def running_count(self) -> int:
        return len(self._running)

    async def run(self) -> None:
        await self._start_control()
        await self._publish_types()
        self.state = "running"
        background = [
            asyncio.create_task(self._listen_loop(), name="sk-listen"),
            asyncio.create_task(self._finish_loop(), name="sk-finish"),
            asyncio.create_task(self._maintenance_loop(), name="sk-maintenance"),
        ]
        for t in background:
            t.add_done_callback(self._background_done)
        try:
            await self._claim_loop()
            self.state = "stopping"
            await self._drain()
        finally:
            for t in background:
                t.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            await self._final_writes()
            await self._close_all()
            self.state = "stopped"
        if self._crashed is not None:
            raise self._crashed

    def _background_done(self, task: asyncio.Task[None]) -> None:
        """A loop that dies takes the engine down (the process restarts) rather than
        leaving it claiming jobs it can no longer finish."""
        if task.cancelled() or task.exception() is None:
            return
        self._crashed = task.exception()
        log.error("%s failed: %r; stopping the engine", task.get_name(), self._crashed)
        self.stop()

    # -- connections -----------------------------------------------------------
    async def _conn(self, name: str) -> psycopg.AsyncConnection[Any]:
        """The named connection, reopened with back-off if it is gone."""
        delay = 0.1
        while True:
            conn = self._conns.get(name)
            if conn is not None and not conn.closed and not conn.broken:
                return conn
            try:
                conn = await self.db.aconnect(
                    application_name=f"skconsole-worker-{name}", prepare_threshold=0
                )
                if name == "finish":
                    await conn.execute(FINISH_SESSION)
                self._conns[name] = conn
                if name == "control":
                    await self._lock_and_listen(conn)
                    self.metrics.add("listener@reconnect-count")
                    self._wake.set()  # notifications may have been missed meanwhile
                return conn
            except Exception as exc:
                self._conns[name] = None
                if not isinstance(exc, ConnectError | psycopg.Error | OSError):
                    raise
                if name != "control" and self._stopping.is_set() and delay > 2:
                    raise
                log.warning("connection %s unavailable (%s); retrying in %.1fs", name, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    async def _retrying(
        self, name: str, op: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]]
    ) -> T:
        """Run ``op`` on connection ``name``, reconnecting and retrying on connection loss."""
        while True:
            conn = await self._conn(name)
            try:
                return await op(conn)
            except Exception as exc:
                if not _is_connection_error(exc):
                    raise
                log.warning("lost connection %s: %s", name, exc)
                with contextlib.suppress(Exception):
                    await conn.close()
                self._conns[name] = None
                if name == "claim":
                    self._claim_unsure = True

    async def _close_all(self) -> None:
        for name, conn in list(self._conns.items()):
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()
            self._conns[name] = None

    # -- liveness --------------------------------------------------------------
    async def _start_control(self) -> None:
        conn = await self.db.aconnect(application_name="skconsole-worker-control")
        cur = await conn.execute(
            load_sql("queries/register_worker"),
            {
                "worker_id": self.worker_id,
                "process_id": self.config.process_id,
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "concurrency": self.config.concurrency,
                "types": self.types,
            },
        )
        row = await cur.fetchone()
        assert row is not None
        self._lock_key = int(row[0])
        await self._lock_and_listen(conn)
        self._conns["control"] = conn

    async def _lock_and_listen(self, conn: psycopg.AsyncConnection[Any]) -> None:
        cur = await conn.execute("SELECT pg_try_advisory_lock(%s)", (self._lock_key,))
        row = await cur.fetchone()
        if not (row and row[0]):  # our previous session is not gone yet: retry shortly
            await conn.close()
            raise ConnectError("worker liveness lock is still held by an earlier session")
        await conn.execute(f"LISTEN {CHANNEL}")

    async def _listen_loop(self) -> None:
        while True:
            conn = await self._conn("control")
            try:
                async for _ in conn.notifies(timeout=1.0):
                    self.metrics.add("listener@task-notification-count")
                    self._backlog = True
                    self._wake.set()
            except Exception as exc:
                if not _is_connection_error(exc):
                    raise
                log.warning("listener connection lost: %s", exc)
                with contextlib.suppress(Exception):
                    await conn.close()
                self._conns["control"] = None

    async def _publish_types(self) -> None:
        tasks = [self.registry.get(n) for n in self.types]
        params = {
            "types": self.types,
            "timeouts": [
                float(t.options.timeout) if t and t.options.timeout else None for t in tasks
            ],
            "max_attempts": [t.options.max_attempts if t else None for t in tasks],
        }
        await self._execute("queries/upsert_task_types", params)

    # -- claiming --------------------------------------------------------------
    async def _claim_loop(self) -> None:
        cfg = self.config
        while not self._stopping.is_set():
            # a timed-out sync handler keeps its thread: at most 2 x concurrency threads;
            # and results not yet written count too, so a slow database slows the
            # claims instead of letting Processing rows (and write batches) pile up
            free = min(
                cfg.concurrency - len(self._running),
                4 * cfg.concurrency - len(self._held),
                2 * cfg.concurrency - self._threads,
            )
            if free <= 0:
                self._wake.clear()
                await self._wait_wake(cfg.poll_interval)  # a finished job or write wakes it sooner
                continue
            if self._claim_unsure:
                await self._hand_back_orphans()
            self._wake.clear()
            want = min(free, cfg.batch_size)
            started = time.perf_counter()
            rows = await self._retrying("claim", partial(self._claim, want))
            self.metrics.add("poller@dequeue-round-trips")
            self.metrics.add(
                "queue-consumer@total-dequeue-duration", int((time.perf_counter() - started) * 1000)
            )
            for job in rows:
                self._start_job(job)
            if rows:
                self.metrics.add("poller@dequeue-count", len(rows))
            self._backlog = len(rows) == want
            if self._backlog:
                continue
            idle = not rows and not self._running and not self._held
            if cfg.burst and idle and not await self._work_pending():
                log.info("burst: no eligible job left; stopping")
                return
            await self._wait_wake(cfg.poll_interval)

    async def _wait_wake(self, timeout: float | None) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout)

    async def _claim(self, want: int, conn: psycopg.AsyncConnection[Any]) -> list[Claimed]:
        cur = await conn.execute(
            load_sql("queries/claim"),
            {"types": self.types, "limit": want, "worker_id": self.worker_id},
            prepare=True,
        )
        rows = await cur.fetchall()
        out = [Claimed(*r) for r in rows]
        for job in out:
            self._held[job.task_id] = job.attempt
        return out

    async def _work_pending(self) -> bool:
        params = {"types": self.types, "horizon_s": self.config.burst_horizon}

        async def op(c: psycopg.AsyncConnection[Any]) -> bool:
            cur = await c.execute(load_sql("queries/work_pending"), params)
            row = await cur.fetchone()
            return bool(row and row[0])

        return await self._retrying("claim", op)

    async def _hand_back_orphans(self) -> None:
        """After a claim whose answer was lost: give back what we own but never received."""

        async def op(c: psycopg.AsyncConnection[Any]) -> list[tuple[uuid.UUID, int]]:
            cur = await c.execute(
                "SELECT task_id, sk_attempt FROM sk_task_results_t "
                "WHERE task_status = 2 AND sk_owner_worker_id = %s",
                (self.worker_id,),
            )
            return [(r[0], r[1]) for r in await cur.fetchall()]

        owned = await self._retrying("claim", op)
        orphans = [(i, a) for i, a in owned if i not in self._held]
        if orphans:
            log.warning("handing back %d job(s) claimed over a lost connection", len(orphans))
            await self._write_hand_backs(orphans)
        self._claim_unsure = False

    # -- running ---------------------------------------------------------------
    def _start_job(self, job: Claimed) -> None:
        task = asyncio.create_task(self._run_job(job))
        self._running[job.task_id] = task

    async def _run_job(self, job: Claimed) -> None:
        task = self.registry.get(job.task_type)
        started = time.perf_counter()
        outcome: Outcome
        try:
            if task is None:  # not claimable by construction; kept as a last guard
                raise FatalTaskError(f"UnknownTaskType: no handler for task type {job.task_type!r}")
            try:
                payload = json.loads(job.payload) if job.payload is not None else None
            except ValueError as exc:
                raise FatalTaskError(
                    f"InvalidPayload: payload is not valid JSON ({exc}): {job.payload[:200]!r}"  # type: ignore[index]
                ) from None
            ctx = JobContext(
                task_id=job.task_id,
                task_type=job.task_type,
                source=job.source,
                priority=job.priority,
                attempt=job.attempt,
                error_count=job.error_count,
                posted_at=job.posted_at,
            )
            args = (payload, ctx) if task.wants_context else (payload,)
            if task.is_async:
                await asyncio.wait_for(task.handler(*args), task.options.timeout)
            else:
                await asyncio.wait_for(self._in_thread(task.handler, args), task.options.timeout)
            outcome = Outcome(job, self._ms(started), PROCESSED)
        except asyncio.CancelledError:
            outcome = Outcome(job, self._ms(started), UNPROCESSED)
            self._record(outcome)
            raise
        except TimeoutError:
            timeout = task.options.timeout if task else None
            outcome = self._failure(
                job, started, f"TimeoutError: job exceeded its timeout of {timeout:g}s", True
            )
        except FatalTaskError as exc:
            text = (
                str(exc)
                if str(exc).startswith(("InvalidPayload", "UnknownTaskType"))
                else _error_text(exc)
            )
            outcome = self._failure(job, started, text, False)
        except Exception as exc:
            outcome = self._failure(job, started, _error_text(exc), True)
        self._record(outcome)

    def _in_thread(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> asyncio.Future[Any]:
        """Run a sync handler on a daemon thread of its own. It starts at once (so its
        timeout measures its own run time only); one past its timeout cannot be
        killed, keeps its thread, and counts against capacity until it returns;
        being a daemon it never holds up the process's exit."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()

        def settle(result: Any, exc: BaseException | None) -> None:
            self._threads -= 1
            self._wake.set()
            if not fut.done():
                if exc is not None:
                    fut.set_exception(exc)
                else:
                    fut.set_result(result)

        def target() -> None:
            result, error = None, None
            try:
                result = fn(*args)
            except BaseException as exc:  # handed to the awaiting coroutine
                error = exc
            with contextlib.suppress(RuntimeError):  # the loop is gone: we are exiting
                loop.call_soon_threadsafe(settle, result, error)

        self._threads += 1
        threading.Thread(target=target, name="sk-task", daemon=True).start()
        return fut

    def _failure(self, job: Claimed, started: float, error: str, recoverable: bool) -> Outcome:
        task = self.registry.get(job.task_type)
        errors = job.error_count + 1
        if not recoverable:
            status, delay = FATAL, 0.0
        elif task is not None and errors < task.options.max_attempts:
            status, delay = ERROR, task.options.retry_delay(errors) * 1000.0
        else:
            status, delay = FAULTED, 0.0
        return Outcome(job, self._ms(started), status, _storable(error), recoverable, delay)

    @staticmethod
    def _ms(started: float) -> int:
        return int((time.perf_counter() - started) * 1000)

    def _record(self, outcome: Outcome) -> None:
        self._running.pop(outcome.job.task_id, None)
        self._outcomes.append(outcome)
        self._outcome_ready.set()
        if self._backlog:
            self._wake.set()

    # -- recording results -------------------------------------------------------
    async def _finish_loop(self) -> None:
        while True:
            await self._outcome_ready.wait()
            self._outcome_ready.clear()
            await self._flush_outcomes()

    async def _flush_outcomes(self) -> None:
        # outcomes leave the list only once written: a write cut off by
        # shutdown is simply written again (fencing makes that harmless)
        while self._outcomes:
            batch = self._outcomes[:WRITE_BATCH]
            await self._write_outcomes(batch)
            del self._outcomes[: len(batch)]

    async def _write_outcomes(self, batch: list[Outcome]) -> None:
        wid = self.worker_id
        ok = [o for o in batch if o.status == PROCESSED]
        failed = [o for o in batch if o.status in (ERROR, FAULTED, FATAL)]
        back = [(o.job.task_id, o.job.attempt) for o in batch if o.status == UNPROCESSED]
        written = 0
        if ok:
            params = {
                "worker_id": wid,
                "ids": [o.job.task_id for o in ok],
                "attempts": [o.job.attempt for o in ok],
                "ms": [o.ms for o in ok],
            }
            rows = await self._retrying(
                "finish", partial(self._fetch, "queries/finish_success", params)
            )
            written += len(rows)
            if any(r[1] for r in rows):
                self._wake.set()
            self.metrics.add("worker@successful-processed-payload-count", len(rows))
        if failed:
            params = {
                "worker_id": wid,
                "ids": [o.job.task_id for o in failed],
                "attempts": [o.job.attempt for o in failed],
                "ms": [o.ms for o in failed],
                "statuses": [o.status for o in failed],
                "errors": [o.error for o in failed],
                "recoverable": [o.recoverable for o in failed],
                "delays_ms": [o.delay_ms for o in failed],
            }
            rows = await self._retrying(
                "finish", partial(self._fetch, "queries/finish_failure", params)
            )
            written += len(rows)
            self.metrics.add("worker@failed-processed-payload-count", len(rows))
            if any(r[2] for r in rows):
                self._backlog = True
                self._wake.set()
        if back:
            await self._write_hand_backs(back)
        done = ok + failed
        fenced = len(done) - written
        if fenced:
            log.warning("%d result(s) ignored: the job was reaped or changed while it ran", fenced)
            self.metrics.add("worker@fenced-result-count", fenced)
        for o in done:
            self.metrics.execution_time(o.job.task_type, o.ms)
        if done:
            self.metrics.add("worker@processed-payload-count", len(done))
            self.metrics.add("worker@total-processing-time", sum(o.ms for o in done))
            self.metrics.add("result-queue@result-writes-count", len(done))
            self.processed += len(done)
        for o in batch:
            self._held.pop(o.job.task_id, None)
        if self._backlog:  # the claim loop may be waiting for these slots
            self._wake.set()

    async def _write_hand_backs(self, jobs: list[tuple[uuid.UUID, int]]) -> None:
        params = {
            "worker_id": self.worker_id,
            "ids": [j[0] for j in jobs],
            "attempts": [j[1] for j in jobs],
        }
        rows = await self._retrying("finish", partial(self._fetch, "queries/hand_back", params))
        self.metrics.add("worker@handed-back-count", int(rows[0][0]) if rows else 0)
        for task_id, _ in jobs:
            self._held.pop(task_id, None)

    async def _execute(self, name: str, params: dict[str, Any]) -> None:
        """Run a statement on the finish connection, surviving connection loss."""

        async def op(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(load_sql(name), params)

        await self._retrying("finish", op)

    @staticmethod
    async def _fetch(
        name: str, params: dict[str, Any], conn: psycopg.AsyncConnection[Any]
    ) -> list[Any]:
        cur = await conn.execute(load_sql(name), params)
        return await cur.fetchall()

    # -- upkeep --------------------------------------------------------------------
    async def _maintenance_loop(self) -> None:
        cfg = self.config
        last = {"heartbeat": 0.0, "reap": 0.0, "metrics": 0.0, "forget": 0.0}
        while True:
            now = time.monotonic()
            if now - last["heartbeat"] >= cfg.heartbeat_interval:
                await self._execute("queries/heartbeat", {"worker_id": self.worker_id})
                last["heartbeat"] = now
            if cfg.reap and now - last["reap"] >= cfg.reap_interval:
                await self.reap_once()
                last["reap"] = now
            if now - last["metrics"] >= cfg.metrics_interval:
                await self.flush_metrics()
                last["metrics"] = now
            if now - last["forget"] >= 60:
                await self._execute("queries/forget_old_workers", {"after_s": 86400})
                last["forget"] = now
            await asyncio.sleep(min(cfg.heartbeat_interval, cfg.reap_interval, 1.0))

    async def reap_once(self) -> int:
        cfg = self.config
        params = {
            "stale_s": cfg.heartbeat_stale,
            "liveness_grace_s": cfg.liveness_grace,
            "grace_s": cfg.timeout_grace,
            "unowned_s": cfg.unowned_after,
            "default_max_attempts": self.registry.defaults.max_attempts,
            "ids": None,
            "limit": 1000,
            "exclude_owner": self.worker_id,
        }
        rows = await self._retrying("finish", partial(self._fetch, "queries/reap", params))
        if rows:
            log.warning("reaped %d hung job(s): %s", len(rows), rows[0][3])
            self.metrics.add("reaper@reaped-count", len(rows))
            self._backlog = True
            self._wake.set()
        return len(rows)

    async def flush_metrics(self) -> None:
        taken = self.metrics.take()
        owner = self.config.process_id
        try:
            for name, params in (
                ("queries/add_metrics", taken.metric_params(owner)),
                ("queries/add_execution_times", taken.time_params(owner)),
            ):
                if params is not None:
                    await self._execute(name, params)
        except BaseException:
            self.metrics.merge(taken)
            raise

    # -- shutdown ------------------------------------------------------------------
    async def _drain(self) -> None:
        """Let running jobs finish within the grace period; hand the rest back at once."""
        if self._running:
            log.info(
                "waiting up to %.0fs for %d running job(s)",
                self.config.grace_period,
                len(self._running),
            )
            _done, pending = await asyncio.wait(
                list(self._running.values()), timeout=self.config.grace_period
            )
            for t in pending:
                t.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def _final_writes(self) -> None:
        try:
            await asyncio.wait_for(self._final_writes_inner(), timeout=30)
        except Exception as exc:  # the reaper of another worker will recover what is left
            log.error(
                "could not write final results (%s); other workers will reap %d job(s)",
                exc,
                len(self._held),
            )

    async def _final_writes_inner(self) -> None:
        await self._flush_outcomes()
        leftovers = [(i, a) for i, a in self._held.items() if i not in self._running]
        if leftovers:
            await self._write_hand_backs(leftovers)
        await self.flush_metrics()
        await self._execute("queries/worker_stopped", {"worker_id": self.worker_id})
