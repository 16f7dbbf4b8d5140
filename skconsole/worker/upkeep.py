"""A worker's housekeeping: reaping other workers' hung jobs, writing its
metrics, forgetting long-gone workers, posting the ticks of its periodic
types (:mod:`~skconsole.worker.schedules`), purging results past their
retention (:mod:`~skconsole.worker.retention`), sweeping fan-in jobs (``after=``)
whose last parent finished where no finish statement released them, carrying on the
stored waves requeues (:mod:`skconsole.db.waves`: the next wave once the last one's
jobs finished and passed its gate, so a plan outlives the command that made it). On a connection of its own with a
short lock timeout: a stats row locked for a minute, or a reap waiting on an
operator's transaction, delays only the next round of this loop, never a
result write or a lease renewal.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, LiteralString

import psycopg
from psycopg.abc import Params

from skconsole.core.actor import Origin
from skconsole.core.breakers import BREAKER_TICK_S, PARK_SCAN
from skconsole.core.record_grains import RECORD_GRAINS
from skconsole.core.states import BreakerState
from skconsole.core.text import printable
from skconsole.core.waves import OPEN, PlanState
from skconsole.db.rows import aone, arows
from skconsole.db.schema import RETIRED_METRICS_OWNER
from skconsole.db.sqlfiles import query
from skconsole.db.waves import Driver, Stepped, aopen_plans, arun, step
from skconsole.worker.config import WorkerConfig
from skconsole.worker.gauges import Gauged, write_gauges
from skconsole.worker.links import Link, Throttle, guarded, is_transient
from skconsole.worker.metrics import MetricsBuffer
from skconsole.worker.retention import Retention
from skconsole.worker.schedules import Scheduler

log = logging.getLogger("skconsole.worker")

UPKEEP_SETTINGS = {"lock_timeout": "2s"}
FORGET_AFTER_S = 86_400
#: How often the fan-in sweep runs (after_sweep.sql): the longest a job posted
#: after= waits past its last parent's success when its release was missed (a
#: post racing that parent's finish, a Stakhanovise.NET finisher).
AFTER_SWEEP_S = 2.0
#: The most hung jobs one reap statement re-posts.
REAP_BATCH = 1000
#: The most parents (jobs others wait for) one sweep looks at.
AFTER_SWEEP_SCAN = 10_000
#: How often the per-minute record is rolled and trimmed (record_roll.sql): a
#: read adds what is not rolled yet, so this bounds only how much it adds.
RECORD_ROLL_S = 10.0
#: The most record rows one roll statement takes, and trims: short statements, so a
#: stopping worker's last writes (on this connection) never wait long behind one
RECORD_ROLL_BATCH = 5_000
#: The most roll statements one round runs, while each finds a full batch
RECORD_ROLL_STATEMENTS = 20
#: How often upkeep asks whether this minute's gauges are written (gauges_due.sql, one
#: index probe); the first worker to find them missing counts and writes them.
GAUGES_CHECK_S = 15.0
#: How often upkeep looks for open waves requeues (waves_open.sql, one index probe) and
#: advances them: how long a wave whose jobs all finished waits for its verdict. A plan
#: waiting for its wave is read by one worker of the fleet per interval (waves_checked.sql).
WAVES_CHECK_S = 2.0
#: The most steps (a batch of a wave, a verdict) one round takes of one plan.
WAVES_STEPS = 25


@dataclass(eq=False)
class Upkeep:
    """Housekeeping on a connection of its own (reaping others' hung jobs, metrics,
    forgetting old workers), so none of it can hold up liveness or result writes."""

    link: Link
    _: KW_ONLY
    worker_id: uuid.UUID
    #: the worker's knobs: whether and how often it reaps, flushes metrics
    config: WorkerConfig
    #: the owner id of this process's metric rows: unique to it (a total is its own)
    metrics_owner: str
    metrics: MetricsBuffer
    default_max_attempts: int
    scheduler: Scheduler | None = None
    retention: Retention | None = None
    reaped: int = field(default=0, init=False)
    #: set when the engine stops: no roll or gauge starts any more, so the last writes,
    #: on this loop's connection, never queue behind one
    stopping: bool = field(default=False, init=False)
    #: where the next fan-in sweep starts (None: from the first parent)
    _after_from: uuid.UUID | None = field(default=None, init=False)
    _throttle: Throttle = field(default_factory=Throttle, init=False)

    async def run(self) -> None:
        last = {"reap": 0.0, "metrics": 0.0, "forget": 0.0, "after": 0.0, "record": 0.0}
        last["gauges"] = 0.0
        last["breakers"] = 0.0
        last["waves"] = 0.0
        while True:
            now = time.monotonic()
            if self.config.reap and now - last["reap"] >= self.config.reap_interval:
                last["reap"] = now
                await self._guarded("reap", self.reap_once)
            if now - last["metrics"] >= self.config.metrics_interval:
                last["metrics"] = now
                await self._guarded("metrics", self.flush_metrics)
            if now - last["after"] >= AFTER_SWEEP_S:
                last["after"] = now
                await self._guarded("after sweep", self.sweep_after)
            if not self.stopping and now - last["record"] >= RECORD_ROLL_S:
                last["record"] = now
                await self._guarded("record", self.roll_record)
            if not self.stopping and now - last["gauges"] >= GAUGES_CHECK_S:
                last["gauges"] = now
                await self._guarded("gauges", self.take_gauges)
            if not self.stopping and now - last["breakers"] >= BREAKER_TICK_S:
                last["breakers"] = now
                await self._guarded("breakers", self.tick_breakers)
            if not self.stopping and now - last["waves"] >= WAVES_CHECK_S:
                last["waves"] = now
                await self._guarded("waves", self.advance_waves)
            if now - last["forget"] >= 60:
                last["forget"] = now
                await self._guarded("forget", self._forget)
            if self.retention is not None and now >= self.retention.due_at:
                await self._guarded("retention", self.retention.run_once)
            wait = min(self.config.reap_interval, self.config.metrics_interval, 1.0)
            if self.scheduler is not None:
                if time.monotonic() >= self.scheduler.due_at:
                    await self._guarded("schedules", self.scheduler.run_once)
                wait = min(wait, self.scheduler.due_at - time.monotonic())
            await asyncio.sleep(max(wait, 0.0))

    async def _guarded(self, what: str, step: Callable[[], Awaitable[object]]) -> None:
        await guarded(self._throttle, what, step)

    async def reap_once(self) -> int:
        params = {
            "unowned_s": self.config.unowned_after,
            "default_max_attempts": self.default_max_attempts,
            "ids": None,
            "limit": REAP_BATCH,
            "exclude_owner": self.worker_id,
        }
        try:
            reaped = await self.link.run(_reap(params), retry=False)
        except psycopg.Error as exc:
            if is_transient(exc):
                raise
            reaped = await self._reap_each(params, exc)
        if reaped:
            log.warning("reaped %d hung job(s): %s", len(reaped), reaped[0].hung_reason)
            self.metrics.add("reaper@reaped-count", len(reaped))
            self.reaped += len(reaped)
        return len(reaped)

    async def _reap_each(self, params: dict[str, Any], failed: psycopg.Error) -> list[Reaped]:
        """The batch failed on a row the server refuses (its re-post broke a constraint,
        an index, a trigger of the application's): reap each hung job alone, so that
        one job never keeps the others hung. The ones refused stay hung, counted and
        logged (throttled), and are tried again next round."""

        async def hung(conn: psycopg.AsyncConnection[Any]) -> list[uuid.UUID]:
            return [r.task_id for r in await arows(conn, query("hung_ids"), _HungId, params)]

        reaped: list[Reaped] = []
        refused: list[tuple[uuid.UUID, str]] = []
        for task_id in await self.link.run(hung, retry=False):
            try:
                reaped += await self.link.run(_reap({**params, "ids": [task_id]}), retry=False)
            except psycopg.Error as exc:
                if is_transient(exc):
                    raise
                refused.append((task_id, _first_line(exc)))
        if refused:
            self.metrics.add("reaper@refused-count", len(refused))
            task_id, why = refused[0]
            self._throttle.warning(
                "reap-refused",
                "%d hung job(s) could not be reaped, the server refused them (job %s: %s);"
                " the other %d were",
                len(refused),
                task_id,
                why,
                len(reaped),
            )
        elif not reaped:
            raise failed
        return reaped

    async def sweep_after(self) -> int:
        """Release or cancel the fan-in jobs whose parents ended without their
        finish deciding them (after_sweep.sql: one worker at a time, at most
        AFTER_SWEEP_SCAN parents a round, going on where the last round stopped);
        returns how many jobs it decided."""
        params = {"scan": AFTER_SWEEP_SCAN, "from": self._after_from}

        async def op(conn: psycopg.AsyncConnection[Any]) -> Swept | None:
            return await aone(conn, query("after_sweep"), Swept, params)

        done = await self.link.run(op, retry=False)
        if done is None:
            return 0
        self._after_from = done.last_seen if done.seen >= AFTER_SWEEP_SCAN else None
        if done.changed:
            log.info("the fan-in sweep released or cancelled %d waiting job(s)", done.changed)
        return done.changed

    async def roll_record(self) -> Rolled:
        """Roll the per-minute record's finished minutes into one row each and trim
        what is older than it keeps (record_roll.sql: any worker, at any time), a
        batch a statement, while full batches come back (and the engine runs)."""
        params = {
            "keep_s": self.config.record_keep,
            "batch": RECORD_ROLL_BATCH,
            "grains": list(RECORD_GRAINS),
        }

        async def op(conn: psycopg.AsyncConnection[Any]) -> Rolled:
            done = await aone(conn, query("record_roll"), Rolled, params)
            assert done is not None
            return done

        total = Rolled(0, 0, 0)
        for _ in range(RECORD_ROLL_STATEMENTS):
            done = await self.link.run(op, retry=False)
            total = Rolled(
                total.rolled + done.rolled, total.spans + done.spans, total.trimmed + done.trimmed
            )
            if self.stopping or max(done.rolled, done.trimmed) < RECORD_ROLL_BATCH:
                break
        return total

    async def tick_breakers(self) -> list[BreakerMove]:
        """Move the circuit breakers on (breaker_tick.sql: any worker, each breaker taken
        by one at a time): open an armed one past its threshold, park what an open one
        holds back, half-open one past its cool-down and release its canaries, close or
        reopen one whose canaries ended."""

        async def op(conn: psycopg.AsyncConnection[Any]) -> list[BreakerMove]:
            return await arows(conn, query("breaker_tick"), BreakerMove, {"scan": PARK_SCAN})

        moves = await self.link.run(op, retry=False)
        for m in moves:
            if m.state != m.was:
                log.warning(
                    "breaker #%d on %s: %s -> %s (%s)",
                    m.breaker_id,
                    printable(m.task_type),
                    BreakerState(m.was).word,
                    BreakerState(m.state).word,
                    printable(m.reason or ""),
                )
        return moves

    async def take_gauges(self) -> Gauged:
        """This minute's gauges (jobs waiting and running per type, workers alive), unless
        another worker wrote them first; trims them with the record's keep (gauges.py)."""

        async def op(conn: psycopg.AsyncConnection[Any]) -> Gauged:
            return await write_gauges(conn, keep_s=self.config.record_keep)

        return await self.link.run(op, retry=False)

    async def advance_waves(self) -> int:
        """Carry on every open waves requeue as far as it goes now (db/waves.py: each
        step takes the plan's row with SKIP LOCKED, so a plan another process advances
        is left to it); returns how many steps changed something."""
        plans = await self.link.run(
            functools.partial(aopen_plans, every_s=WAVES_CHECK_S), retry=False
        )
        driver = Driver(Origin.WORKER, by=self.config.process_id)
        moved = 0
        for plan_id in plans:
            for _ in range(WAVES_STEPS):
                if self.stopping:
                    return moved
                stepped = await self.link.run(_wave_step(plan_id, driver), retry=False)
                if stepped.moved:
                    moved += 1
                    if stepped.state is PlanState.STOPPED:
                        log.warning("waves requeue #%d stopped: %s", plan_id, stepped.said)
                    elif stepped.said:
                        log.info("waves requeue #%d: %s", plan_id, stepped.said)
                if not (stepped.moved and stepped.state in OPEN):
                    break
        return moved

    async def flush_metrics(self) -> None:
        """Write this process's totals, if they changed since the last write."""
        metrics = self.metrics
        if not metrics.dirty:
            return
        metrics.dirty = False
        try:
            for name, params in (
                (query("add_metrics"), metrics.metric_params(self.metrics_owner)),
                (query("add_execution_times"), metrics.time_params(self.metrics_owner)),
            ):
                if params is not None:
                    await self.link.run(_statement(name, params), retry=False)
        except BaseException:
            metrics.dirty = True  # written again next time: a total is idempotent
            raise

    async def flush_metrics_now(self) -> None:
        """The last metrics of a stopping worker: written if the database lets us."""
        await self._guarded("metrics", self.flush_metrics)

    async def _forget(self) -> None:
        params = {"after_s": FORGET_AFTER_S, "retired": RETIRED_METRICS_OWNER}

        async def op(conn: psycopg.AsyncConnection[Any]) -> Forgotten:
            done = await aone(conn, query("forget_old_workers"), Forgotten, params)
            assert done is not None
            return done

        done = await self.link.run(op, retry=False)
        if done.forgotten:
            log.info(
                "forgot %d long-gone worker(s); folded %d row(s) of the %d that stopped cleanly "
                "into the retired totals",
                done.forgotten,
                done.folded,
                done.stopped,
            )


def _reap(params: dict[str, Any]) -> Callable[[psycopg.AsyncConnection[Any]], Awaitable[Any]]:
    """reap.sql with ``params``, as a link's operation."""

    async def op(conn: psycopg.AsyncConnection[Any]) -> list[Reaped]:
        return await arows(conn, query("reap"), Reaped, params)

    return op


def _wave_step(
    plan_id: int, driver: Driver
) -> Callable[[psycopg.AsyncConnection[Any]], Awaitable[Stepped]]:
    """One step of a waves requeue, as a link's operation."""

    async def op(conn: psycopg.AsyncConnection[Any]) -> Stepped:
        return await arun(conn, step(plan_id, driver))

    return op


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


@dataclass(frozen=True)
class _HungId:
    task_id: uuid.UUID


@dataclass(frozen=True)
class Reaped:
    """A hung job reap.sql ended (failed, or handed back), and why it was hung."""

    task_id: uuid.UUID
    task_type: str
    task_status: int
    hung_reason: str


@dataclass(frozen=True)
class Swept:
    """What after_sweep.sql did: fan-in jobs released or cancelled, the last parent
    it looked at and how many it looked at."""

    changed: int
    last_seen: uuid.UUID | None
    seen: int


@dataclass(frozen=True)
class Rolled:
    """What record_roll.sql did: record rows rolled, the rows (of every grain) they were
    added into, and rows trimmed."""

    rolled: int
    spans: int
    trimmed: int


@dataclass(frozen=True)
class BreakerMove:
    """What a tick did to one breaker (breaker_tick.sql): its state before and after
    (150_skconsole_breakers.sql's numbers), jobs parked and canaries released, and why."""

    breaker_id: int
    task_type: str
    was: int
    state: int
    parked: int
    released: int
    reason: str | None


@dataclass(frozen=True)
class Forgotten:
    """What forget_old_workers.sql did: workers forgotten, how many of them had
    stopped cleanly, and the metric rows of those folded into the retired totals."""

    forgotten: int
    stopped: int
    folded: int


def _statement(sql: LiteralString, params: Params) -> Any:
    async def op(conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute(sql, params)

    return op
