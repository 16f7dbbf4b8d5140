"""Running one attempt of a job and deciding how it ended. Nothing a handler
does can take the engine down or leave its job unaccounted for.

* Any exception a handler raises, ``BaseException`` included (``SystemExit``,
  ``KeyboardInterrupt``, a ``CancelledError`` the engine did not cause, an
  exception whose ``__str__`` raises), fails that attempt and nothing else.
* Only cancellations the engine itself started (shutdown, self-fencing) hand
  the job back; the engine says so in the job's :class:`StopSignal` before
  it cancels. Once an operator's cancel has reached the worker, the attempt
  ends 7 Cancelled however it ends (a sync handler that saw ``ctx.cancelled``
  may simply return).
* The engine's timeout is told apart from the handler's own ``TimeoutError``
  (``asyncio.timeout().expired()``), so a handler's real error is kept.
* A sync handler runs on a thread of its own (kept for later jobs), which
  cannot be killed: past
  its timeout the attempt is failed only when the thread returns, and until
  then the job stays in 2 Processing, owned by this worker, so its retry can
  never start while the first thread still runs.
* Middleware (worker/middleware.py) runs where its handler runs, inside the
  same timeout and the same ``except``: what it raises is what a handler
  raises, so all of the above holds for it too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from skconsole.core.errors import FatalTaskError, InvalidJobError, Snooze
from skconsole.core.status import JobStatus
from skconsole.core.stored_error import StoredError
from skconsole.producer.job import Job
from skconsole.worker.jobs import Ending, JobRun, Outcome
from skconsole.worker.middleware import Chain, Layer, async_layers, sync_layers
from skconsole.worker.registry import BackoffError, JobStopped, Task


class HandlerRaised(Exception):
    """A sync handler's exception, carried from its thread (any BaseException,
    wrapped so that it can never be mistaken for the awaiting task's own
    cancellation, nor escape the event loop)."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(repr(original))
        self.original = original


class Threads:
    """The threads of sync handlers, kept for the next job.

    Starting a thread per job cost the event loop a thread start and a wait
    for it each time: it capped 10 ms sync handlers near 2,100 jobs/s a
    process. A thread whose handler outlives its timeout cannot be stopped;
    it stays busy (``busy`` counts it) and new threads serve the others.
    Threads idle for IDLE_EXIT seconds end; :meth:`close` ends the idle ones
    at once.
    """

    IDLE_EXIT = 30.0

    def __init__(self, on_exit: Callable[[], None]) -> None:
        self.busy = 0  # threads running a handler: the event loop's count
        self.on_exit = on_exit
        self._work: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # threads waiting for work that no submitted item has claimed

    def start(
        self, run: JobRun, fn: Callable[..., Any], args: tuple[Any, ...]
    ) -> asyncio.Future[Any]:
        """Run ``fn(*args)`` on a thread; the future settles when it returns."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()

        def settle(result: Any, error: BaseException | None) -> None:
            self.busy -= 1
            run.thread_alive = False
            self.on_exit()
            if not fut.done():
                if error is not None:
                    fut.set_exception(HandlerRaised(error))
                else:
                    fut.set_result(result)

        def job() -> None:
            result: Any = None
            error: BaseException | None = None
            try:
                result = fn(*args)
            except BaseException as exc:
                error = exc
            with self._lock:
                # free before the loop hears of it: a job started the moment this
                # one settles must find this thread, not start another
                self._idle += 1
            with contextlib.suppress(RuntimeError):  # the loop is gone: the process is exiting
                loop.call_soon_threadsafe(settle, result, error)

        self.busy += 1
        run.thread_alive = True
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1  # an idle thread will take it
        self._work.put(job)
        if spawn:
            threading.Thread(target=self._serve, name="sk-task", daemon=True).start()
        return fut

    def close(self) -> None:
        """End the idle threads (busy ones end when their handler returns)."""
        with self._lock:
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._work.put(None)

    def _serve(self) -> None:
        while True:
            try:
                job = self._work.get(timeout=self.IDLE_EXIT)
            except queue.Empty:
                with self._lock:
                    # only a thread no submitted item counts on may leave
                    if self._idle > 0 and self._work.empty():
                        self._idle -= 1
                        return
                continue
            if job is None:
                return
            job()
            del job  # drop the finished job's references while idle


class Executor:
    """Runs attempts: ``await executor.run(run, task)`` always returns an Outcome."""

    def __init__(
        self,
        threads: Threads,
        on_linger: Callable[[JobRun], None],
        middleware: Sequence[Layer] = (),
    ) -> None:
        self.threads = threads
        self.on_linger = on_linger
        #: the middleware around each kind of handler, outermost first (empty: the
        #: handler is called as it is, and nothing is made per job for it)
        self.sync_layers = sync_layers(middleware)
        self.async_layers = async_layers(middleware)

    async def run(self, run: JobRun) -> Outcome:
        started = time.perf_counter()
        try:
            outcome = await self._run(run, run.spec, started)
        except BaseException as exc:
            engine = StoredError.from_exception(exc)
            outcome = failure(
                run,
                started,
                StoredError("skconsole.EngineError", engine.headline, engine.stack_trace),
                True,
            )
        if run.ctx.stop.cancelled and outcome.status is not JobStatus.CANCELLED:
            # the cancel reached this worker before the attempt was recorded: however it
            # ended (a return that saw ctx.cancelled, a failure, a snooze, a timeout,
            # a hand-back), it is cancelled; a success that beat the cancel is not
            if outcome.ending is Ending.SUCCESS:
                return cancelled(run, started, "it returned after the cancel")
            if outcome.error:
                return cancelled(
                    run,
                    started,
                    f"it failed after the cancel: {outcome.error.headline}",
                    outcome.error.stack_trace,
                )
            return cancelled(run, started, None)
        return outcome

    async def _run(self, run: JobRun, task: Task | None, started: float) -> Outcome:
        job = run.job
        if task is None:  # not claimable by construction; kept as a last guard
            return fatal(
                run,
                started,
                StoredError("UnknownTaskType", f"no handler for task type {job.task_type!r}"),
            )
        try:
            payload = json.loads(job.payload) if job.payload is not None else None
        except (ValueError, RecursionError) as exc:
            reason = (
                "nested too deeply"
                if isinstance(exc, RecursionError)
                else f"not valid JSON ({exc})"
            )
            return fatal(
                run,
                started,
                StoredError(
                    "InvalidPayload",
                    f"payload is {reason}: {(job.payload or '')[:200]!r}",
                ),
            )
        args = (payload, run.ctx) if task.wants_context else (payload,)
        if task.is_async:
            return await self._run_async(run, task, args, started)
        return await self._run_sync(run, task, args, started)

    async def _run_async(
        self, run: JobRun, task: Task, args: tuple[Any, ...], started: float
    ) -> Outcome:
        chain = _chain(self.async_layers, run, task, args)
        timer = asyncio.timeout(task.options.timeout)
        try:
            async with timer:
                result = await (task.handler(*args) if chain is None else chain.run_async())
        except BaseException as exc:
            reason = run.ctx.stop.reason
            if reason == "cancel":
                return cancelled(run, started, None)
            if reason in ("shutdown", "fence"):  # the engine stopped it
                return Outcome(run.job, Ending.HAND_BACK, ms(started))
            if timer.expired():
                return timed_out(run, task, started, None)
            return self._raised(run, exc, started)
        return succeeded(run, task, started, result, chain)

    async def _run_sync(
        self, run: JobRun, task: Task, args: tuple[Any, ...], started: float
    ) -> Outcome:
        chain = _chain(self.sync_layers, run, task, args)
        if chain is not None:
            done = self.threads.start(run, chain.run_sync, ())
        else:
            done = self.threads.start(run, task.handler, args)
        timer = asyncio.timeout(task.options.timeout)
        try:
            async with timer:
                result = await asyncio.shield(done)
            return succeeded(run, task, started, result, chain)
        except HandlerRaised as raised:
            if run.ctx.stop.cancelled and isinstance(raised.original, JobStopped):
                return cancelled(run, started, None)
            if run.ctx.stop.reason in ("shutdown", "fence"):
                return Outcome(run.job, Ending.HAND_BACK, ms(started))
            return self._raised(run, raised.original, started)
        except TimeoutError:
            if not timer.expired():
                raise
        except asyncio.CancelledError:
            return gave_up(run, started)
        # past the engine's timeout: the thread cannot be stopped, only asked to
        run.ctx.stop.request("timeout")
        run.lingering = True
        self.on_linger(run)
        timed_out_at = time.perf_counter()
        try:
            await asyncio.shield(done)
            ending = f"it returned {fmt_s(time.perf_counter() - timed_out_at)} later"
        except HandlerRaised as raised:
            ending = (
                f"it then raised {type(raised.original).__name__} "
                f"{fmt_s(time.perf_counter() - timed_out_at)} later"
            )
        except asyncio.CancelledError:
            return gave_up(run, started)
        return timed_out(run, task, started, ending)

    @staticmethod
    def _raised(run: JobRun, exc: BaseException, started: float) -> Outcome:
        if isinstance(exc, JobStopped) and run.ctx.stop.reason == "timeout":
            return timeout_failure(run, started, StoredError("TimeoutError", str(exc)))
        if isinstance(exc, Snooze):
            return Outcome(
                run.job, Ending.HAND_BACK, ms(started), delay_ms=exc.seconds * 1000.0, snoozed=True
            )
        if isinstance(exc, FatalTaskError):
            return fatal(run, started, StoredError.from_exception(exc))
        error = StoredError.from_exception(exc)
        if isinstance(exc, asyncio.CancelledError):
            error = StoredError(
                "skconsole.HandlerCancelled",
                "the handler raised CancelledError on its own (the engine did not cancel it)",
                error.stack_trace,
            )
        # retry_on= / fatal_on=: the handler's exception may be fatal by its type's policy
        why = run.spec.options.why_fatal(type(exc)) if run.spec is not None else None
        if why is not None:
            return fatal(run, started, fatal_by_policy(error, why))
        return failure(run, started, error, True)


def _chain(layers: tuple[Any, ...], run: JobRun, task: Task, args: tuple[Any, ...]) -> Chain | None:
    """The middleware around this attempt; None without middleware, so the handler runs
    bare and pays for no wrapper."""
    if not layers:
        return None
    return Chain(layers, task.handler, args, run.ctx, task.then is not None)


def succeeded(
    run: JobRun, task: Task, started: float, result: Any, chain: Chain | None = None
) -> Outcome:
    """A success, with what it posts: the handler's ``ctx.post`` jobs and, in a
    pipeline, the next stage with the return value as its payload, under the
    trace context current when the handler returned inside its middleware (the
    run's span), else the job's own."""
    outcome = Outcome(run.job, Ending.SUCCESS, ms(started), posts=run.ctx.posts)
    if task.then is not None:
        try:
            outcome.stage = Job(task.then, result)
            outcome.stage.trace = (chain and chain.stage_trace) or run.ctx.trace_context
        except InvalidJobError as exc:
            return failure(
                run,
                started,
                StoredError(
                    "skconsole.PipelineError",
                    f"the return value of {task.name!r} cannot be the"
                    f" payload of its next stage {task.then!r}: {exc}",
                ),
                True,
            )
        outcome.pipeline = task.pipeline_name
    return outcome


def cancelled(
    run: JobRun, started: float, ended: str | None, stack_trace: str | None = None
) -> Outcome:
    """An attempt an operator cancelled: 7 Cancelled, final. ``ended``: how the
    handler ended, when not by stopping as told (it failed, say), kept with it,
    and the stack trace of that failure."""
    message = (
        "cancelled by an operator while it ran; the attempt "
        f"ended after {fmt_s(time.perf_counter() - started)}"
    )
    if ended:
        message += f"; {ended}"
    error = StoredError("skconsole.JobCancelled", message, stack_trace)
    return Outcome(run.job, Ending.FAILURE, ms(started), JobStatus.CANCELLED, error, False)


def gave_up(run: JobRun, started: float) -> Outcome:
    """The engine stopped waiting for a sync handler's thread at shutdown (see
    worker.shutdown.drain): back to the queue, not claimable before the thread is gone."""
    return Outcome(
        run.job,
        Ending.HAND_BACK,
        ms(started),
        delay_ms=run.hand_back_delay_ms,
        thread_running=run.hand_back_delay_ms > 0,
    )


def ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


def fmt_s(seconds: float) -> str:
    return f"{seconds:.1f}s" if seconds < 10 else f"{seconds:.0f}s"


def fatal(run: JobRun, started: float, error: StoredError) -> Outcome:
    return Outcome(run.job, Ending.FAILURE, ms(started), JobStatus.FATAL, error, False)


def fatal_by_policy(error: StoredError, why: str) -> StoredError:
    """``error`` with a last line in its message saying the type's policy made it
    6 Fatal (its type and first line, which name and group it, are kept)."""
    note = f"{POLICY_NOTE}: {why}: 6 Fatal at once, not retried"
    return StoredError(error.type, f"{error.message}\n{note}", error.stack_trace)


#: how the stored error of a job made 6 Fatal by retry_on= / fatal_on= says so
POLICY_NOTE = "skconsole.RetryPolicy"


def failure(run: JobRun, started: float, error: StoredError, recoverable: bool) -> Outcome:
    """A failed attempt: retried with back-off (4 Error) until max attempts, then 5 Faulted.

    A ``backoff`` callable that fails (raises, returns -1, NaN or no number) parks
    the job as 5 Faulted with a ``skconsole.BackoffError`` naming that and the
    handler's error: never lost (requeue it once the policy is fixed), never
    retried at once in a loop, and the bug is in the failure groups, not a log line.
    """
    if not recoverable:
        return fatal(run, started, error)
    errors = run.job.error_count + 1
    if run.spec is not None and errors < run.spec.options.max_attempts:
        try:
            delay = run.spec.options.retry_delay(errors) * 1000.0
        except BackoffError as exc:
            parked = StoredError(
                "skconsole.BackoffError",
                f"the backoff= callable of {run.spec.name!r} failed: {exc}; the job is"
                f" parked as 5 Faulted (requeue it once the policy is fixed);"
                f" the attempt failed with {error.headline}",
                _with_cause(error.stack_trace, exc),
            )
            return Outcome(run.job, Ending.FAILURE, ms(started), JobStatus.FAULTED, parked, True)
        return Outcome(run.job, Ending.FAILURE, ms(started), JobStatus.ERROR, error, True, delay)
    return Outcome(run.job, Ending.FAILURE, ms(started), JobStatus.FAULTED, error, True)


def _with_cause(stack_trace: str | None, exc: BackoffError) -> str | None:
    """The attempt's stack trace, then the traceback of the backoff callable's exception."""
    if exc.__cause__ is None:
        return stack_trace
    cause = StoredError.from_exception(exc.__cause__).stack_trace or ""
    return f"{stack_trace or ''}\n\nThe backoff= callable raised:\n{cause}".strip()


def timeout_failure(run: JobRun, started: float, error: StoredError) -> Outcome:
    """The engine's timeout: retried, unless the type's ``fatal_on`` names TimeoutError
    (``retry_on`` does not apply: a timeout is not an exception the handler raised)."""
    why = run.spec.options.why_timeout_fatal() if run.spec is not None else None
    if why is not None:
        return fatal(run, started, fatal_by_policy(error, why))
    return failure(run, started, error, True)


def timed_out(run: JobRun, task: Task, started: float, ending: str | None) -> Outcome:
    message = f"job exceeded its timeout of {task.options.timeout or 0:g}s"
    if ending:
        message += f"; a sync handler cannot be interrupted: {ending}"
    return timeout_failure(run, started, StoredError("TimeoutError", message))
