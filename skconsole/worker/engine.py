"""One worker process: claim in batches, run with bounded concurrency, record results.

The engine coordinates loops that each have a module and a connection of
their own (:mod:`skconsole.worker.links`), so none can hold up another:
*control* renews the lease and holds the liveness lock
(:mod:`~skconsole.worker.lease`; a lapsed lease fences the worker,
:mod:`~skconsole.worker.fencing`), *listen* waits for notifications and cancel
requests (:mod:`~skconsole.worker.listener`), *claim* claims and reconciles
(:mod:`~skconsole.worker.claimer`), *finish* writes results
(:mod:`~skconsole.worker.results`), *upkeep* reaps and writes metrics
(:mod:`~skconsole.worker.upkeep`). Handlers run in :mod:`~skconsole.worker.execution`;
stopping is :mod:`~skconsole.worker.shutdown`.

Every claimed attempt is tracked by its claim id (the fencing token) in
``held`` until its result is written or found fenced; whatever the database
says this worker owns beyond that (a claim whose answer was lost) is handed
straight back, once the session that ran the claim is known to be gone.
After a failover (the lease renewed on a new timeline), runs whose claims the
database lost are stopped before that renewal counts (:meth:`Engine._after_failover`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections.abc import Awaitable
from typing import Any, TypeVar

import psycopg

from skconsole.core.errors import ConfigError
from skconsole.db.connect import Database
from skconsole.db.rows import arows
from skconsole.db.sqlfiles import query
from skconsole.worker.claimer import CLAIM_SETTINGS, CLAIM_TIMEOUT, Claimer, free_slots
from skconsole.worker.config import LEASE_MARGIN_SHARE, WorkerConfig
from skconsole.worker.execution import Executor, Threads
from skconsole.worker.fencing import Fence
from skconsole.worker.jobs import Attempt, Claimed, Ending, JobRun, Outcome, token_timeline
from skconsole.worker.lease import Failover, Lease, LeaseKeeper, registration
from skconsole.worker.links import Backoff, Link
from skconsole.worker.listener import Listener
from skconsole.worker.metrics import MetricsBuffer
from skconsole.worker.progress import ProgressBoard, ProgressSink, ProgressWriter
from skconsole.worker.registry import JobContext, TaskRegistry
from skconsole.worker.results import FINISH_SETTINGS, ResultWriter, count_settled
from skconsole.worker.retention import Retention
from skconsole.worker.schedules import Scheduler
from skconsole.worker.shutdown import CLOSE_BOUND, drain, final_writes
from skconsole.worker.upkeep import UPKEEP_SETTINGS, Upkeep

#: what callers import from here (the config lives in worker/config.py, the claim's
#: settings in worker/claimer.py)
__all__ = ["CLAIM_SETTINGS", "LEASE_MARGIN_SHARE", "Engine", "WorkerConfig"]

log = logging.getLogger("skconsole.worker")
T = TypeVar("T")


class StepAbandoned(Exception):
    """A step of start-up or of the claim loop still waiting on the database when the
    stop deadline passed: it was cancelled, its outcome unknown."""


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
        #: claimed attempts whose result is not written yet, by claim id
        self.held: dict[int, Claimed] = {}
        #: attempts whose handler runs (a timed-out sync one until its thread ends)
        self.runs: dict[int, JobRun] = {}
        self.listener = Listener(
            db,
            worker_id=self.worker_id,
            metrics=self.metrics,
            on_work=self._nudge,
            on_cancel=self._cancel_requested,
        )
        write_timeout = 35.0  # above the server's statement_timeout (30 s)
        self.links = {
            "control": Link(
                db,
                "control",
                settings={"statement_timeout": "2s", "lock_timeout": "1s"},
                timeout=min(3.0, self.lease.fence_after / 2),
            ),
            "listen": self.listener.link,
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
        self.threads = Threads(on_exit=self._nudge)
        middleware = registry.worker_middleware()
        if any(layer.tracing for layer in middleware):
            log.info("tracing: each attempt is an OpenTelemetry span (skconsole run TYPE)")
        self.executor = Executor(
            self.threads, on_linger=lambda _run: self._nudge(), middleware=middleware
        )
        self.results = ResultWriter(
            self.links["finish"], self.worker_id, self.metrics, self._settled
        )
        self.claimer = Claimer(
            self.links["claim"],
            worker_id=self.worker_id,
            hold_s=cfg.lease + cfg.lease_margin,
            types=self.types,
            held=self.held,
            metrics=self.metrics,
            results=self.results,
        )
        self.upkeep = Upkeep(
            self.links["upkeep"],
            worker_id=self.worker_id,
            config=cfg,
            metrics_owner=self.metrics_owner,
            metrics=self.metrics,
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
        #: the latest progress of running attempts, written once a second (upkeep link)
        self.progress = ProgressBoard()
        self.progress_writer = ProgressWriter(self.links["upkeep"], self.progress)
        self.fence = Fence(
            self.lease, self.runs, self.metrics, own_process=cfg.own_process, on_lifted=self._nudge
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
                cfg.app_version,
            ),
            interval=cfg.heartbeat_interval,
            on_expired=self.fence.engage,
            on_renewed=self.fence.lift,
            on_failover=self._after_failover,
        )
        self.processed = 0
        self.state = "starting"
        self._wake = asyncio.Event()
        self._stopping = False
        self._stop_now = False
        #: monotonic time by which what runs when stop() came must be done (grace period)
        self._stop_deadline: float | None = None
        self._stop_changed = asyncio.Event()
        #: a claim abandoned at the stop deadline: what it took is left to the lease
        self._claim_abandoned = False
        self._crashed: BaseException | None = None

    # -- public --------------------------------------------------------------
    def stop(self, *, now: bool = False) -> None:
        """Stop claiming; running jobs get the grace period (``now``: none), the rest
        go back to the queue. Call it on the engine's loop."""
        self._stopping = True
        deadline = time.monotonic() + (0.0 if now else self.config.grace_period)
        self._stop_deadline = min(deadline, self._stop_deadline or deadline)
        if now:
            self._stop_now = True
        self._stop_changed.set()
        if self.upkeep.scheduler is not None:
            self.upkeep.scheduler.active = False
        self._nudge()

    @property
    def running_count(self) -> int:
        return sum(1 for r in self.runs.values() if not r.lingering)

    async def run(self) -> None:
        try:
            await self._step(self._start_up())
        except StepAbandoned:
            log.info("stopped before the worker could register: nothing was claimed")
            await self._close_links()
            self.state = "stopped"
            return
        self.state = "running"
        loops = {
            "renew": self.keeper.renew_forever(),
            "watch": self.keeper.watch(),
            "listen": self.listener.run(),
            "results": self.results.run(),
            "upkeep": self.upkeep.run(),
            "progress": self.progress_writer.run(),
        }
        background = {n: asyncio.create_task(c, name=f"sk-{n}") for n, c in loops.items()}
        for t in background.values():
            t.add_done_callback(self._background_done)
        left: list[Claimed] = []
        try:
            await self._claim_loop()
            self.state = "stopping"
            self.upkeep.stopping = True
            background["listen"].cancel()
            await drain(
                self.runs,
                deadline=lambda: self._stop_deadline or time.monotonic(),
                own_process=self.config.own_process,
                lease=self.lease,
                wait=self._wait_wake,
                stop_now=lambda: self._stop_now,
            )
            left = await final_writes(
                held=self.held,
                runs=self.runs,
                results=self.results,
                upkeep=self.upkeep,
                link=self.links["upkeep"],
                worker_id=self.worker_id,
            )
            if self._claim_abandoned:
                log.warning(
                    "a claim got no answer before the stop deadline: any job it took is "
                    "left to the lease"
                )
            abandoned = bool(left) or self._claim_abandoned
            if self.config.own_process and (self.threads.busy or abandoned):
                if self.threads.busy:
                    log.warning(
                        "ending the process: %d sync handler thread(s) still run and end with it",
                        self.threads.busy,
                    )
                # nothing left to wait for: no statement abandoned on a silent
                # connection (psycopg cancels it for up to 10 s) may hold the exit
                await self._stop_background(background)
                await self._close_links()
                logging.shutdown()
                os._exit(0)
        finally:
            await self._stop_background(background)
            self.fence.cancel_exit(lost_too=True)
            await self._close_links()
            self.threads.close()
            self.state = "stopped"
        if self._crashed is not None:
            raise self._crashed

    async def _start_up(self) -> None:
        await self.keeper.register()
        await self.links["upkeep"].run(self._publish_types)

    async def _step(self, step: Awaitable[T]) -> T:
        """Await a step of start-up or of the claim loop. Once :meth:`stop` is called
        it may take until the stop deadline (the grace period, as running jobs);
        still waiting then (a silent network path), it is cancelled and
        :class:`StepAbandoned` raised."""
        task = asyncio.ensure_future(step)
        try:
            while True:
                changed = asyncio.ensure_future(self._stop_changed.wait())
                timeout = (
                    None
                    if self._stop_deadline is None
                    else max(0.0, self._stop_deadline - time.monotonic())
                )
                done, _ = await asyncio.wait(
                    {task, changed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                )
                changed.cancel()
                if task in done:
                    return task.result()
                if changed in done:
                    self._stop_changed.clear()
                    continue
                task.cancel()
                await asyncio.wait({task}, timeout=CLOSE_BOUND)
                raise StepAbandoned
        except asyncio.CancelledError:
            task.cancel()
            raise

    async def _stop_background(self, background: dict[str, asyncio.Task[None]]) -> None:
        """Cancel the loops; wait for them at most CLOSE_BOUND (a loop cancelled on a
        silent connection abandons its statement: Link._abandon)."""
        tasks = [t for t in background.values() if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=CLOSE_BOUND)

    async def _close_links(self) -> None:
        await asyncio.gather(*(link.close(CLOSE_BOUND) for link in self.links.values()))

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

    def _cancel_requested(self, attempt: Attempt) -> None:
        """An operator asked to cancel an attempt: its handler is told to stop."""
        run = self.runs.get(attempt.claim_id)
        if run is None or run.ctx.stop.cancelled:
            return  # finished (its result is being written) or already told
        log.info(
            "job %s (%s): cancelled by an operator; stopping it", attempt.task_id, run.job.task_type
        )
        self.metrics.add("worker@cancel-request-count")
        run.stop("cancel")

    async def _after_failover(self, conn: psycopg.AsyncConnection[Any], failover: Failover) -> None:
        """The lease was renewed on a new timeline: the database may have lost claims
        this worker runs. Those it no longer says this worker owns (under the same
        token) are stopped before the renewal counts; what it owns that this worker
        does not hold (results it lost) is handed back by the next reconciliation."""
        owned = await arows(
            conn, query("owned_jobs"), Attempt, {"worker_id": self.worker_id, "ids": None}
        )
        kept = {a.claim_id for a in owned}
        lost = [
            run
            for claim_id, run in self.runs.items()
            if claim_id not in kept and token_timeline(claim_id) != failover.timeline
        ]
        held_until = (
            f"; claims are held until {failover.held_until:%H:%M:%S} UTC"
            if failover.held_until
            else ""
        )
        log.warning(
            "the database is on timeline %d, no longer %d: a failover%s",
            failover.timeline,
            failover.previous,
            held_until,
        )
        self.metrics.add("worker@failover-count")
        self.fence.stop_lost(lost, failover.timeline)
        self.claimer.reconcile_soon()

    # -- claiming --------------------------------------------------------------
    async def _claim_loop(self) -> None:
        backoff = Backoff(0.2, 5.0)
        while not self._stopping:
            try:
                if await self._claim_round(backoff):
                    return
            except StepAbandoned:
                # a claim may have committed with its answer lost: whatever it took is
                # this worker's in the database but not in ``held``, left to the lease
                self._claim_abandoned = True
                return

    async def _claim_round(self, backoff: Backoff) -> bool:
        """One round of the claim loop; True: (burst mode) no eligible job is left.
        Every wait on the database is a :meth:`_step`, bounded once stop() is asked."""
        cfg = self.config
        claimer = self.claimer
        if claimer.reconcile_due() and not await self._step(claimer.reconcile()):
            await self._wait_wake(backoff.next())
            return False
        if self.fence.fenced or not self.lease.good_for_claims:
            await self._wait_wake(0.2)
            return False
        free = free_slots(
            cfg, running=self.running_count, held=len(self.held), threads=self.threads.busy
        )
        if free <= 0:
            await self._wait_wake(cfg.poll_interval)  # a finished job or write wakes it sooner
            return False
        self._wake.clear()
        want = min(free, cfg.batch_size)
        rows = await self._step(claimer.claim(want))
        if rows is None:
            await self._wait_wake(backoff.next())
            return False
        backoff.reset()
        if rows and (self.fence.fenced or self.lease.expired or self._stopping):
            # the lease lapsed (or a stop came) while this claim was on its way: do not
            # start them
            for job in rows:
                self.results.add(Outcome(job, Ending.HAND_BACK))
            return False
        for job in rows:
            self._start(job)
        if len(rows) == want:  # a full batch: more may be waiting
            return False
        idle = not rows and not self.runs and not self.held
        if cfg.burst and idle and not await self._step(claimer.work_pending(cfg.burst_horizon)):
            log.info("burst: no eligible job left; stopping")
            return True
        await self._wait_wake(cfg.poll_interval)
        return False

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
            fencing_token=job.claim_id,
            progress_sink=ProgressSink(self.progress, job.task_id, job.claim_id),
            trace_context=job.trace_context,
        )
        self.progress.begin(job.claim_id)
        run = JobRun(job, ctx, self.registry.get(job.task_type))
        self.runs[job.claim_id] = run
        run.task = asyncio.create_task(self._run_job(run))
        run.task.add_done_callback(lambda task: self._never_ran(run) if task.cancelled() else None)

    def _never_ran(self, run: JobRun) -> None:
        """A job's task cancelled before its first step (a cancel or a fence that came
        at once) never reached :meth:`_run_job`: it goes back (or, cancelled, ends 7)."""
        if self.runs.get(run.job.claim_id) is run:
            del self.runs[run.job.claim_id]
            self.progress.end(run.job.claim_id)
            self.results.add(Outcome(run.job, Ending.HAND_BACK))
            self._nudge()

    async def _run_job(self, run: JobRun) -> None:
        try:
            outcome = await self.executor.run(run)
        except BaseException:
            outcome = Outcome(run.job, Ending.HAND_BACK)
        self.runs.pop(run.job.claim_id, None)
        self.progress.end(run.job.claim_id)
        if outcome.ending is Ending.HAND_BACK and run.ctx.stop.reason == "fence":
            self.metrics.add("worker@stopped-by-fence-count")
        self.results.add(outcome)
        self._nudge()

    def _settled(self, outcomes: list[Outcome], written: bool) -> None:
        """Outcomes the results writer is done with (written, or fenced, or abandoned)."""
        for o in outcomes:
            self.held.pop(o.job.claim_id, None)
        self.processed += count_settled(self.metrics, outcomes, written)
        self._nudge()
