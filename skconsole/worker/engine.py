"""One worker process: claim in batches, run with bounded concurrency, record results.

The engine keeps five connections, one per loop, so none can hold up another
(:mod:`skconsole.worker.links`): *control* renews the lease and holds the
liveness lock (:mod:`~skconsole.worker.lease`), *listen* waits for
notifications, *claim* claims, *finish* writes results
(:mod:`~skconsole.worker.results`), *upkeep* reaps and writes metrics
(:mod:`~skconsole.worker.upkeep`). Handlers run in :mod:`~skconsole.worker.execution`.

Every claimed attempt is tracked by its claim id (the fencing token) in
``held`` until its result is written or found fenced; whatever the database
says this worker owns beyond that (a claim whose answer was lost) is handed
straight back, once the session that ran the claim is known to be gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, LiteralString

import psycopg
from psycopg import sql

from skconsole.core.errors import ConfigError
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import active_mapping, query
from skconsole.worker.execution import Executor, Threads
from skconsole.worker.jobs import Claimed, Ending, JobRun, Outcome
from skconsole.worker.lease import Lease, LeaseKeeper, registration
from skconsole.worker.links import Backoff, Link, LinkLost, Throttle
from skconsole.worker.metrics import MetricsBuffer
from skconsole.worker.registry import JobContext, TaskRegistry
from skconsole.worker.results import FINISH_SETTINGS, ResultWriter
from skconsole.worker.retention import Retention
from skconsole.worker.schedules import Scheduler
from skconsole.worker.upkeep import UPKEEP_SETTINGS, Upkeep

log = logging.getLogger("skconsole.worker")

#: how often a worker reads its cancel requests when no notification came (one
#: may have been lost with the listen connection); the in-flight view calls a
#: request "still running" only after sk_cancel_deadline_seconds(), longer than this
CANCEL_POLL = 5.0
#: exit code of a worker process that ended itself because a handler would not
#: stop before its lease lapsed (see WorkerConfig.own_process)
EXIT_FENCED = 75
#: how often a worker checks that the database agrees with it on what it runs
RECONCILE_EVERY = 30.0
#: The claim's plan must not depend on statistics: on a never-analyzed queue
#: (autovacuum off, or a burst before it runs) the planner believes a type has
#: a few rows and reads all of them through a bitmap scan to sort them (15 ms
#: for 30,000); without bitmap and sequential scans it walks the claim-order
#: index and stops after the batch (1.3 ms).
CLAIM_SETTINGS = {"lock_timeout": "5s", "enable_bitmapscan": "off", "enable_seqscan": "off"}
#: statements of the claim loop get this long before the link gives up on them
CLAIM_TIMEOUT = 40.0
#: a claim lost with no known server session: reconcile once it surely ended
UNKNOWN_SESSION_WAIT = 45.0
#: the lease margin as a share of the lease, when only the lease is given (--lease)
LEASE_MARGIN_SHARE = 0.2


@dataclass
class WorkerConfig:
    """Knobs of one worker process; defaults suit most queues."""

    #: jobs run at once: 50 lets 10 ms handlers run 2.5-3.6k jobs/s a process
    #: and a no-op drain reach its plateau (python -m skconsole.bench.defaults;
    #: README, "Sizing a worker")
    concurrency: int = 50
    #: most jobs a claim takes (it takes no more than the free slots): below
    #: 25 it caps the drain, above the concurrency it changes nothing
    batch_size: int = 100
    poll_interval: float = 1.0
    heartbeat_interval: float = 1.0
    #: the liveness lease: a worker that cannot renew it for ``lease - lease_margin``
    #: seconds stops its own jobs; others reap them after ``lease + lease_margin``
    lease: float = 10.0
    lease_margin: float = 2.0
    reap_interval: float = 2.0
    #: reap jobs with no owner recorded (a Stakhanovise.NET consumer's) processing for
    #: longer than this; None: never (a claim we did not make is not ours to judge)
    unowned_after: float | None = None
    grace_period: float = 10.0
    metrics_interval: float = 2.0
    burst: bool = False
    burst_horizon: float = 1.0
    reap: bool = True
    #: the engine has its process to itself (``skconsole worker``), so it may end
    #: the process to end a handler that will not stop: when a fenced worker's
    #: lease is about to lapse and a handler still runs (a sync handler that
    #: ignores JobContext.stop, an async one that swallows its cancellation),
    #: and at shutdown, once the jobs of sync handlers still running after the
    #: grace period are handed back (claimable after lease + margin). An engine
    #: sharing its process (the console's) waits for such threads instead.
    own_process: bool = False
    process_id: str = field(default_factory=lambda: f"skconsole-{socket.gethostname()}")

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError("concurrency must be at least 1")
        if self.batch_size < 1:
            raise ConfigError("batch size must be at least 1")
        if not 0 < self.lease_margin < self.lease / 2:
            raise ConfigError("the lease margin must be positive and less than half the lease")
        if not 0 < self.heartbeat_interval <= (self.lease - self.lease_margin) / 4:
            raise ConfigError(
                "the heartbeat interval must be positive and at most a quarter of lease - margin"
            )


class Engine:
    """Runs the handlers of ``registry`` until :meth:`stop` (or, in burst mode, until idle)."""

    def __init__(self, db: Database, registry: TaskRegistry, config: WorkerConfig | None = None):
        if not len(registry):
            raise ConfigError("no task types to run: the task module registers none")
        self.db = db
        self.registry = registry
        self.config = cfg = config or WorkerConfig()
        self.worker_id = uuid.uuid4()
        #: whose metric rows this process writes: its process id, pid and worker id, so
        #: no other process (a restart with the same pid included) writes them.
        #: forget_old_workers.sql names them the same way from the worker's row.
        self.metrics_owner = f"{cfg.process_id}:{os.getpid()}:{self.worker_id.hex[:8]}"[-250:]
        self.types = registry.names()
        self.metrics = MetricsBuffer()
        self.lease = Lease(cfg.lease, cfg.lease_margin)
        write_timeout = 35.0  # above the server's statement_timeout (30 s)
        self.links = {
            "control": Link(
                db,
                "control",
                settings={"statement_timeout": "2s", "lock_timeout": "1s"},
                timeout=min(3.0, self.lease.fence_after / 2),
            ),
            "listen": Link(db, "listen", settings={}, timeout=10.0, on_connect=self._on_listen),
            "claim": Link(
                db,
                "claim",
                settings=CLAIM_SETTINGS,
                timeout=CLAIM_TIMEOUT,
                track_identity=True,
            ),
            "finish": Link(db, "finish", settings=FINISH_SETTINGS, timeout=write_timeout),
            "upkeep": Link(db, "upkeep", settings=UPKEEP_SETTINGS, timeout=write_timeout),
        }
        #: claimed attempts whose result is not written yet, by claim id
        self.held: dict[int, Claimed] = {}
        #: attempts whose handler runs (a timed-out sync one until its thread ends)
        self.runs: dict[int, JobRun] = {}
        self.threads = Threads(on_exit=self._nudge)
        self.executor = Executor(self.threads, on_linger=lambda _run: self._nudge())
        self.results = ResultWriter(
            self.links["finish"], self.worker_id, self.metrics, self._settled
        )
        self.upkeep = Upkeep(
            self.links["upkeep"],
            worker_id=self.worker_id,
            process_id=cfg.process_id,
            metrics_owner=self.metrics_owner,
            metrics=self.metrics,
            reap=cfg.reap,
            reap_interval=cfg.reap_interval,
            metrics_interval=cfg.metrics_interval,
            unowned_after=cfg.unowned_after,
            default_max_attempts=registry.defaults.max_attempts,
            scheduler=(
                Scheduler(
                    self.links["upkeep"], schedules, source=f"schedule@{cfg.process_id}"[:250]
                )
                if (schedules := registry.schedules())
                else None
            ),
            retention=Retention(self.links["upkeep"], self.metrics, cfg.process_id)
            if cfg.reap
            else None,
        )
        self.keeper = LeaseKeeper(
            self.links["control"],
            self.lease,
            worker_id=self.worker_id,
            registration=registration(
                self.worker_id,
                cfg.process_id,
                cfg.concurrency,
                self.types,
                self.lease,
                sorted(registry.schedules()),
            ),
            interval=cfg.heartbeat_interval,
            on_expired=self._fence,
            on_renewed=self._unfence,
        )
        self.processed = 0
        self.state = "starting"
        self._wake = asyncio.Event()
        self._stopping = False
        self._stop_now = False
        self._fenced = False
        self._fence_exit: asyncio.TimerHandle | None = None
        self._backlog = True
        #: a claim whose answer was lost: (its server session if known, when)
        self._unsure: tuple[tuple[int, datetime] | None, float] | None = None
        self._last_reconcile = time.monotonic()
        self._throttle = Throttle()
        self._crashed: BaseException | None = None
        #: this worker's own channel (cancel requests), named by the database
        self._own_channel: str | None = None
        self._cancels_due = True

    # -- public --------------------------------------------------------------
    def stop(self, *, now: bool = False) -> None:
        """Stop claiming; running jobs get the grace period (``now``: none), the rest
        go back to the queue. Call it on the engine's loop."""
        self._stopping = True
        if now:
            self._stop_now = True
        if self.upkeep.scheduler is not None:
            self.upkeep.scheduler.active = False
        self._nudge()

    @property
    def running_count(self) -> int:
        return sum(1 for r in self.runs.values() if not r.lingering)

    async def run(self) -> None:
        await self.keeper.register()
        await self.links["upkeep"].run(self._publish_types)
        self.state = "running"
        loops = {
            "renew": self.keeper.renew_forever(),
            "watch": self.keeper.watch(),
            "listen": self._listen_loop(),
            "results": self.results.run(),
            "upkeep": self.upkeep.run(),
        }
        background = {n: asyncio.create_task(c, name=f"sk-{n}") for n, c in loops.items()}
        for t in background.values():
            t.add_done_callback(self._background_done)
        try:
            await self._claim_loop()
            self.state = "stopping"
            background["listen"].cancel()
            await self._drain()
            await self.results.stop()
            await self._final_writes()
            if self.config.own_process and self.threads.busy:
                log.warning(
                    "ending the process: %d sync handler thread(s) still run and end with it",
                    self.threads.busy,
                )
                logging.shutdown()
                os._exit(0)
        finally:
            for t in background.values():
                await _cancel(t)
            if self._fence_exit is not None:
                self._fence_exit.cancel()
            for link in self.links.values():
                await link.close()
            self.threads.close()
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

    def _nudge(self) -> None:
        self._wake.set()

    async def _wait_wake(self, timeout: float | None) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout)
        self._wake.clear()

    async def _publish_types(self, conn: psycopg.AsyncConnection[Any]) -> None:
        tasks = [self.registry.get(n) for n in self.types]
        params = {
            "types": self.types,
            "timeouts": [
                float(t.options.timeout) if t and t.options.timeout else None for t in tasks
            ],
            "max_attempts": [t.options.max_attempts if t else None for t in tasks],
        }
        await conn.execute(query("upsert_task_types"), params)

    # -- notifications -----------------------------------------------------------
    async def _on_listen(self, conn: psycopg.AsyncConnection[Any]) -> None:
        cur = await conn.execute(query("worker_channel"), {"worker_id": self.worker_id})
        row = await cur.fetchone()
        assert row is not None
        self._own_channel = str(row[0])
        for channel in (active_mapping().channel_name, self._own_channel):
            await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        self.metrics.add("listener@reconnect-count")
        self._backlog = True
        self._cancels_due = True
        self._nudge()  # notifications may have been missed meanwhile

    async def _listen_loop(self) -> None:
        """New jobs wake the claim loop; the worker's own channel says an operator
        cancelled a job it runs: those requests are read on this connection (it
        is otherwise idle), at once, and every CANCEL_POLL seconds regardless."""
        link = self.links["listen"]
        backoff = Backoff()
        next_poll = 0.0
        while True:
            conn = await link.connection()
            try:
                if self._cancels_due or time.monotonic() >= next_poll:
                    self._cancels_due = False
                    next_poll = time.monotonic() + CANCEL_POLL
                    await self._read_cancels(conn)
                notifies = conn.notifies(timeout=1.0)
                try:
                    async for n in notifies:
                        if n.channel == self._own_channel:
                            self._cancels_due = True
                            break
                        self.metrics.add("listener@task-notification-count")
                        self._backlog = True
                        self._nudge()
                finally:
                    await notifies.aclose()
                backoff.reset()
            except (psycopg.Error, OSError, TimeoutError) as exc:
                link.drop(conn)
                self._throttle.warning("listen", "listener connection lost: %s", exc)
                await asyncio.sleep(backoff.next())

    async def _read_cancels(self, conn: psycopg.AsyncConnection[Any]) -> None:
        cur = await asyncio.wait_for(
            conn.execute(query("cancel_requests"), {"worker_id": self.worker_id}),
            self.links["listen"].timeout,
        )
        for task_id, claim_id in await cur.fetchall():
            run = self.runs.get(claim_id)
            if run is None or run.ctx.stop.cancelled:
                continue  # finished (its result is being written) or already told
            log.info(
                "job %s (%s): cancelled by an operator; stopping it", task_id, run.job.task_type
            )
            self.metrics.add("worker@cancel-request-count")
            run.ctx.stop.request("cancel")
            if run.is_async and run.task is not None:
                run.task.cancel()

    # -- liveness: self-fencing ----------------------------------------------------
    def _fence(self) -> None:
        """The lease could not be renewed for lease - margin: stop every running job
        now, before any other worker may reap and run it (lease + margin)."""
        self._fenced = True
        self.metrics.add("worker@self-fence-count")
        runs = list(self.runs.values())
        log.error(
            "lease not renewed for %.1fs: stopping this worker's %d running job(s) before "
            "others may take them over, and claiming nothing until it is renewed",
            self.lease.age(),
            len(runs),
        )
        for run in runs:
            run.ctx.stop.request("fence")
            if run.is_async and run.task is not None:
                run.task.cancel()
        if self.config.own_process and runs:
            delay = max(0.0, self.lease.deadline - time.monotonic())
            self._fence_exit = asyncio.get_running_loop().call_later(delay, self._exit_if_stuck)

    def _exit_if_stuck(self) -> None:
        """The lease is about to lapse: a handler still running now could overlap
        with its next attempt elsewhere, so the process ends and takes it along."""
        self._fence_exit = None
        stuck = [
            r
            for r in self.runs.values()
            if r.thread_alive or (r.is_async and r.task is not None and not r.task.done())
        ]
        if not self._fenced or not stuck:
            return
        log.critical(
            "lease lapsing while %d handler(s) still run (a sync handler that ignores "
            "JobContext.stop, or an async one that ignores cancellation): ending the process "
            "so that they end with it (exit code %d)",
            len(stuck),
            EXIT_FENCED,
        )
        logging.shutdown()
        os._exit(EXIT_FENCED)

    def _unfence(self) -> None:
        self._fenced = False
        if self._fence_exit is not None:
            self._fence_exit.cancel()
            self._fence_exit = None
        log.warning("lease renewed again; claiming again")
        self._nudge()

    # -- claiming --------------------------------------------------------------
    def _free_slots(self) -> int:
        cfg = self.config
        return min(
            cfg.concurrency - self.running_count,
            # results not yet written count too, so a slow database slows the
            # claims instead of letting Processing rows (and write batches) pile up
            4 * cfg.concurrency - len(self.held),
            # a timed-out sync handler keeps its thread: at most 2 x concurrency threads
            2 * cfg.concurrency - self.threads.busy,
        )

    async def _claim_loop(self) -> None:
        cfg = self.config
        backoff = Backoff(0.2, 5.0)
        while not self._stopping:
            if self._reconcile_due() and not await self._reconcile():
                await self._wait_wake(backoff.next())
                continue
            if self._fenced or not self.lease.good_for_claims:
                await self._wait_wake(0.2)
                continue
            free = self._free_slots()
            if free <= 0:
                await self._wait_wake(cfg.poll_interval)  # a finished job or write wakes it sooner
                continue
            self._wake.clear()
            want = min(free, cfg.batch_size)
            rows = await self._claim(want)
            if rows is None:
                await self._wait_wake(backoff.next())
                continue
            backoff.reset()
            if rows and (self._fenced or self.lease.expired):
                # the lease lapsed while this claim was on its way: do not start them
                for job in rows:
                    self.results.add(Outcome(job, Ending.HAND_BACK))
                continue
            for job in rows:
                self._start(job)
            self._backlog = len(rows) == want
            if self._backlog:
                continue
            idle = not rows and not self.runs and not self.held
            if cfg.burst and idle and not await self._work_pending():
                log.info("burst: no eligible job left; stopping")
                return
            await self._wait_wake(cfg.poll_interval)

    def _reconcile_due(self) -> bool:
        return self._unsure is not None or time.monotonic() - self._last_reconcile > RECONCILE_EVERY

    async def _claim(self, want: int) -> list[Claimed] | None:
        """Claim up to ``want`` jobs; None when the claim failed (try again later)."""
        started = time.perf_counter()
        params = {"types": self.types, "limit": want, "worker_id": self.worker_id}

        async def op(conn: psycopg.AsyncConnection[Any]) -> list[Claimed]:
            cur = await conn.execute(query("claim"), params, prepare=True)
            jobs = [Claimed(*r) for r in await cur.fetchall()]
            for job in jobs:  # before any await: a claimed job is never unaccounted for
                self.held[job.claim_id] = job
            return jobs

        try:
            rows = await self.links["claim"].run(op, retry=False)
        except LinkLost as lost:
            # the claim may have committed with its answer lost: reconcile before claiming again
            self._unsure = (lost.identity, time.monotonic())
            self._throttle.warning("claim", "claim interrupted (%s); reconciling", lost)
            return None
        except psycopg.Error as exc:  # refused by the server: it rolled back
            self._throttle.warning("claim", "claim failed: %s", str(exc).strip())
            return None
        self.metrics.add("poller@dequeue-round-trips")
        self.metrics.add(
            "queue-consumer@total-dequeue-duration", int((time.perf_counter() - started) * 1000)
        )
        if rows:
            self.metrics.add("poller@dequeue-count", len(rows))
        return rows

    async def _work_pending(self) -> bool:
        params = {"types": self.types, "horizon_s": self.config.burst_horizon}

        async def op(c: psycopg.AsyncConnection[Any]) -> bool:
            cur = await c.execute(query("work_pending"), params)
            row = await cur.fetchone()
            return bool(row and row[0])

        return await self.links["claim"].run(op)

    async def _reconcile(self) -> bool:
        """Hand back what the database says this worker runs but it does not hold
        (a claim whose answer was lost). If that claim's server session may still
        be running it, it is ended first: reconciling before it commits would leave
        its jobs owned by a live worker for ever. False: not possible yet."""
        link = self.links["claim"]
        try:
            if self._unsure is not None:
                identity, since = self._unsure
                if identity is None:
                    if time.monotonic() - since < UNKNOWN_SESSION_WAIT:
                        return False
                else:
                    pid, started = identity
                    gone = await link.run(
                        _fetch_value(query("end_backend"), {"pid": pid, "started": started}),
                        retry=False,
                    )
                    if not gone:
                        return False
            owned = await link.run(
                _fetch_all(query("owned_jobs"), {"worker_id": self.worker_id, "ids": None}),
                retry=False,
            )
        except (LinkLost, psycopg.Error) as exc:
            self._throttle.warning("reconcile", "cannot reconcile claims yet: %s", exc)
            return False
        orphans = [(task_id, claim_id) for task_id, claim_id in owned if claim_id not in self.held]
        if orphans:
            log.warning("handing back %d job(s) claimed over a lost connection", len(orphans))
            for task_id, claim_id in orphans:
                job = _orphan(task_id, claim_id)
                self.held[claim_id] = job
                self.results.add(Outcome(job, Ending.HAND_BACK))
        self._unsure = None
        self._last_reconcile = time.monotonic()
        return True

    # -- running ---------------------------------------------------------------
    def _start(self, job: Claimed) -> None:
        ctx = JobContext(
            task_id=job.task_id,
            task_type=job.task_type,
            source=job.source,
            priority=job.priority,
            attempt=job.attempt,
            error_count=job.error_count,
            posted_at=job.posted_at,
        )
        run = JobRun(job, ctx, self.registry.get(job.task_type))
        self.runs[job.claim_id] = run
        run.task = asyncio.create_task(self._run_job(run))
        run.task.add_done_callback(lambda task: self._never_ran(run) if task.cancelled() else None)

    def _never_ran(self, run: JobRun) -> None:
        """A job's task cancelled before its first step (a cancel or a fence that came
        at once) never reached :meth:`_run_job`: it goes back (or, cancelled, ends 7)."""
        if self.runs.get(run.job.claim_id) is run:
            del self.runs[run.job.claim_id]
            self.results.add(Outcome(run.job, Ending.HAND_BACK))
            self._nudge()

    async def _run_job(self, run: JobRun) -> None:
        try:
            outcome = await self.executor.run(run)
        except BaseException:
            outcome = Outcome(run.job, Ending.HAND_BACK)
        self.runs.pop(run.job.claim_id, None)
        if outcome.ending is Ending.HAND_BACK and run.ctx.stop.reason == "fence":
            self.metrics.add("worker@stopped-by-fence-count")
        self.results.add(outcome)
        self._nudge()

    def _settled(self, outcomes: list[Outcome], written: bool) -> None:
        """Outcomes the results writer is done with (written, or fenced, or abandoned)."""
        done = [o for o in outcomes if o.ending in (Ending.SUCCESS, Ending.FAILURE)]
        for o in outcomes:
            self.held.pop(o.job.claim_id, None)
        if written:
            ok = sum(1 for o in done if o.ending is Ending.SUCCESS)
            if ok:
                self.metrics.add("worker@successful-processed-payload-count", ok)
            if len(done) - ok:
                self.metrics.add("worker@failed-processed-payload-count", len(done) - ok)
            back = len(outcomes) - len(done)
            if back:
                self.metrics.add("worker@handed-back-count", back)
            cancelled = sum(1 for o in done if o.status is JobStatus.CANCELLED)
            if cancelled:
                self.metrics.add("worker@cancelled-count", cancelled)
        for o in done:
            self.metrics.execution_time(o.job.task_type, o.ms)
        if done:
            self.metrics.add("worker@processed-payload-count", len(done))
            self.metrics.add("worker@total-processing-time", sum(o.ms for o in done))
            self.metrics.add("result-queue@result-writes-count", len(done))
            self.processed += len(done)
        self._nudge()

    # -- shutdown ------------------------------------------------------------------
    async def _drain(self) -> None:
        """Let running jobs finish within the grace period; then async ones are
        cancelled and handed back. A sync handler's thread cannot be stopped: an
        engine sharing its process waits for it (until told to stop now); one
        that owns its process hands the job back, claimable again only after
        lease + margin, and ends the process once its last results are written
        (:meth:`run`), so the thread ends with it well before then."""
        deadline = time.monotonic() + self.config.grace_period
        if self.runs:
            log.info(
                "waiting up to %.0fs for %d running job(s)",
                self.config.grace_period,
                len(self.runs),
            )
        while self.runs and not self._stop_now and time.monotonic() < deadline:
            await self._wait_wake(min(0.2, max(0.0, deadline - time.monotonic())))
        runs = list(self.runs.values())
        for run in runs:
            run.ctx.stop.request("shutdown")
            if run.is_async and run.task is not None:
                run.task.cancel()
        threads = [r for r in runs if not r.is_async]
        if threads and not self.config.own_process:
            log.info("waiting for %d sync handler(s) to return", len(threads))
            while any(r.task and not r.task.done() for r in threads) and not self._stop_now:
                await self._wait_wake(0.2)
        left = [r for r in threads if r.task is not None and not r.task.done()]
        if left:
            delay = self.lease.length + self.lease.margin
            log.warning(
                "%d sync handler(s) still running after the grace period: their jobs go back "
                "to the queue, claimable in %.0fs%s",
                len(left),
                delay,
                ", after this process has ended" if self.config.own_process else "",
            )
        for run in left:
            assert run.task is not None
            run.hand_back_delay_ms = (self.lease.length + self.lease.margin) * 1000.0
            run.task.cancel()
        await asyncio.gather(*(r.task for r in runs if r.task is not None), return_exceptions=True)

    async def _final_writes(self) -> None:
        try:
            await asyncio.wait_for(self._final_writes_inner(), timeout=30)
        except Exception as exc:  # the reaper of another worker recovers what is left
            log.error(
                "could not write final results (%s); other workers will reap %d job(s) "
                "once this worker's lease lapses",
                exc,
                len(self.held),
            )

    async def _final_writes_inner(self) -> None:
        def thread_still_runs(o: Outcome) -> bool:
            return o.thread_running

        # claimed but never started (the claim came back as the engine stopped)
        leftovers = [job for claim_id, job in self.held.items() if claim_id not in self.runs]
        for job in leftovers:
            self.results.add(Outcome(job, Ending.HAND_BACK))
        await self.results.flush_all(hold=thread_still_runs)
        await self.upkeep.flush_metrics_now()
        await self.links["upkeep"].run(
            _execute(query("worker_stopped"), {"worker_id": self.worker_id})
        )
        # last: from here the process ends within moments (run()), long before
        # these jobs become claimable again
        await self.results.flush_all()


async def _cancel(task: asyncio.Task[Any]) -> None:
    task.cancel()
    with contextlib.suppress(BaseException):
        await task


def _orphan(task_id: uuid.UUID, claim_id: int) -> Claimed:
    """A job this worker owns in the database but never received: only its id and
    claim id are known, which is all a hand-back needs."""
    return Claimed(task_id, "", "", None, 0, datetime.now(UTC), 0, claim_id, 0)


def _execute(statement: LiteralString, params: dict[str, Any]) -> Any:
    async def op(conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute(statement, params)

    return op


def _fetch_all(statement: LiteralString, params: dict[str, Any]) -> Any:
    async def op(conn: psycopg.AsyncConnection[Any]) -> list[Any]:
        cur = await conn.execute(statement, params)
        return await cur.fetchall()

    return op


def _fetch_value(statement: LiteralString, params: dict[str, Any]) -> Any:
    async def op(conn: psycopg.AsyncConnection[Any]) -> Any:
        cur = await conn.execute(statement, params)
        row = await cur.fetchone()
        return row[0] if row else None

    return op
