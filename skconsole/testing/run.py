"""Run a registry's handlers in-process until the queue is idle, and report each job.

The real engine does the work (:class:`~skconsole.worker.engine.Engine` in
burst mode), so a test exercises what production runs: the claim, the
handler's sync or async execution, timeouts, retries and the result writes.
The outcome is then read back from the database (:mod:`.results`).

**Idle** means: no job of the run's types is running, and none can be claimed
now (or within ``horizon`` seconds). Jobs due later are not waited for: a job
posted with a delay, a retry waiting for its back-off, a job of a paused type.
They are left in the queue and listed in :attr:`RunReport.pending`, so a test
can assert that a failed job will be retried (4 Error) without sleeping
through its back-off. To see a job through all its attempts instead, pass
``backoff=0`` (every retry is due at once); to wait for jobs due soon, pass a
``horizon``; to run a delayed job now, :func:`~skconsole.testing.make_due`.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TypedDict, Unpack

from skconsole.core.errors import ConfigError
from skconsole.core.text import printable
from skconsole.db.connect import Database
from skconsole.testing.results import (
    JobResult,
    RunReport,
    by_claim_order,
    by_first_run,
    connect,
    listing,
    read_jobs,
    status_counts,
)
from skconsole.worker.engine import Engine, WorkerConfig
from skconsole.worker.registry import TaskRegistry

#: Seconds a run may take before it is stopped with :class:`IdleTimeout`.
DEFAULT_TIMEOUT = 30.0
#: Seconds a stopped engine gets to hand its jobs back and close, then again
#: after its task is cancelled, before the helper gives up on it.
STOP_WAIT = 15.0
#: The engine's config for a test run: quick polls (a job due within the
#: horizon is seen within 50 ms), no reaper (a test's database has no dead
#: workers to recover from, and reaping what another process in the test runs
#: would be a surprise), metrics written only when it stops.
TEST_WORKER = WorkerConfig(
    concurrency=1,
    burst=True,
    poll_interval=0.05,
    reap=False,
    metrics_interval=3600.0,
    process_id="skconsole-testing",
)


class IdleTimeout(TimeoutError):
    """The queue did not go idle within the timeout.

    The message names what was still running and what was still due; the
    running jobs were stopped and handed back to the queue. ``report`` holds
    what the call's worker ran meanwhile, ``running`` and ``due`` what kept it
    busy (as read when the timeout expired).
    """

    def __init__(
        self,
        message: str,
        report: RunReport,
        running: list[JobResult],
        due: list[JobResult],
    ) -> None:
        super().__init__(message)
        self.report = report
        self.running = running
        self.due = due


@dataclass
class _Outcome:
    """What the engine's thread hands back: its report, or what it raised."""

    report: RunReport | None = None
    error: BaseException | None = None


class RunOptions(TypedDict, total=False):
    """The options of a run, as :func:`run_until_idle` and the helpers that call it pass
    them on (the defaults are :func:`arun_until_idle`'s)."""

    types: Iterable[str] | str | None
    timeout: float | None
    horizon: float
    backoff: float | None
    concurrency: int


def run_until_idle(
    db: Database | str, registry: TaskRegistry, **options: Unpack[RunOptions]
) -> RunReport:
    """Run ``registry``'s handlers until the queue is idle; return what ran.

    ``types``: run only these of the registry's types (the others stay
    queued; default: all). ``timeout``: seconds before the run is stopped and
    :class:`IdleTimeout` raised (default 30; None: no limit). ``horizon``: also
    wait for jobs due within this many seconds (default 0). ``backoff``: the
    retry back-off of every type, in place of its own (0: retries run at once,
    so each job ends 3 Processed, 5 Faulted or 6 Fatal). ``concurrency``: jobs
    run at once; 1 (the default) runs them one by one in claim order
    (priority, then time due).

    Whatever the handlers raise is recorded on their jobs, never raised here.
    The engine runs on an event loop of its own in a helper thread, so this
    works from plain tests and from inside a running event loop alike (async
    tests may prefer :func:`arun_until_idle`).
    """
    outcome = _Outcome()
    done = threading.Event()

    async def main() -> None:
        try:
            outcome.report = await arun_until_idle(db, registry, **options)
        except BaseException as exc:
            outcome.error = exc
        finally:
            done.set()  # before asyncio.run's clean-up, which a stuck handler could hold up

    def thread_main() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:  # the loop itself failed: never leave the caller waiting
            if not done.is_set():
                outcome.error = exc
        finally:
            done.set()

    thread = threading.Thread(target=thread_main, name="skconsole-testing-engine", daemon=True)
    thread.start()
    done.wait()
    thread.join(1.0)  # the loop's clean-up: moments, unless a handler ignores cancellation
    if outcome.error is not None:
        raise outcome.error
    assert outcome.report is not None  # main() ended with a report or an error
    return outcome.report


async def arun_until_idle(
    db: Database | str,
    registry: TaskRegistry,
    *,
    types: Iterable[str] | str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    horizon: float = 0.0,
    backoff: float | None = None,
    concurrency: int = 1,
) -> RunReport:
    """:func:`run_until_idle` on the running event loop: async handlers run on the
    caller's loop (sync ones in the engine's threads, as always)."""
    database = db if isinstance(db, Database) else Database(db)
    selected = _registry_for(registry, types, backoff)
    names = selected.names()
    if not (math.isfinite(horizon) and horizon >= 0):
        raise ConfigError(f"horizon must be a number of seconds >= 0, got {horizon!r}")
    if timeout is not None and not timeout > 0:
        raise ConfigError(f"timeout must be positive (or None), got {timeout!r}")
    config = replace(TEST_WORKER, concurrency=concurrency, burst_horizon=horizon)
    engine = Engine(database, selected, config)
    started = time.monotonic()
    task = asyncio.create_task(engine.run(), name="skconsole-testing-engine")
    try:
        finished, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:  # the test itself was cancelled: take the engine along
        engine.stop(now=True)
        await _settle(task)
        raise
    if finished:
        task.result()  # the engine's own failure (e.g. the database is unreachable)
        return await asyncio.to_thread(
            _report, database, engine.worker_id, names, time.monotonic() - started
        )
    running, due = await asyncio.to_thread(_busy, database, engine.worker_id, names, horizon)
    engine.stop(now=True)
    stopped = await _settle(task)
    report = await asyncio.to_thread(
        _report, database, engine.worker_id, names, time.monotonic() - started
    )
    raise IdleTimeout(
        _timeout_message(timeout or 0.0, names, running, due, report, stopped),
        report,
        running,
        due,
    )


def _registry_for(
    registry: TaskRegistry, types: Iterable[str] | str | None, backoff: float | None
) -> TaskRegistry:
    """The registry to run: ``types`` of it, each with ``backoff`` if given.

    A new registry is built through the public API (the handlers and options of
    the one given are read, never changed), so the caller's registry stays as
    it is for the next run.
    """
    if types is not None:
        wanted = [types] if isinstance(types, str) else list(types)
        if not wanted:
            raise ConfigError("types is empty: name at least one task type to run")
        registry = registry.subset(sorted(set(wanted)))
    if backoff is None:
        return registry
    if not (math.isfinite(backoff) and backoff >= 0):
        raise ConfigError(f"backoff must be a number of seconds >= 0, got {backoff!r}")
    out = TaskRegistry(replace(registry.defaults, backoff=backoff), tracing=registry.tracing)
    for layer in registry.middlewares:
        out.middleware(layer.fn)
    for name in registry.names():
        task = registry.get(name)
        assert task is not None
        out.register(
            name,
            task.handler,
            replace(task.options, backoff=backoff),
            schedule=task.schedule,
            then=task.then,
            pipeline=task.pipeline,
        )
    return out


async def _settle(task: asyncio.Task[None]) -> bool:
    """Wait for a stopped engine to end (then cancel it); True if it ended.

    A handler that swallows its cancellation could keep it from ever ending:
    the helper then gives up on it rather than hang the test.
    """
    for attempt in range(2):
        finished, _ = await asyncio.wait({task}, timeout=STOP_WAIT)
        if finished:
            if not task.cancelled():
                task.exception()  # retrieved: an engine stopped by force may end with an error
            return True
        if attempt == 0:
            task.cancel()
    return False


def _report(
    database: Database, worker_id: uuid.UUID, names: list[str], elapsed: float
) -> RunReport:
    with connect(database) as conn:
        ran = read_jobs(conn, owner=worker_id)
        pending = read_jobs(conn, types=names, queued=True)
    return RunReport(
        jobs=tuple(by_first_run(ran)),
        pending=tuple(by_claim_order(pending)),
        types=tuple(names),
        elapsed=elapsed,
    )


def _busy(
    database: Database, worker_id: uuid.UUID, names: list[str], horizon: float
) -> tuple[list[JobResult], list[JobResult]]:
    """What keeps the run from going idle: its running jobs, and the jobs due."""
    with connect(database) as conn:
        running = read_jobs(conn, owner=worker_id, statuses=[2])
        due = read_jobs(conn, types=names, queued=True, due_within=horizon)
    return by_first_run(running), by_claim_order(due)


def _timeout_message(
    timeout: float,
    names: list[str],
    running: list[JobResult],
    due: list[JobResult],
    report: RunReport,
    stopped: bool,
) -> str:
    lines = [
        f"the queue did not go idle within {timeout:g}s "
        f"(types: {', '.join(printable(n) for n in names)})"
    ]
    if running:
        back = ", now handed back to the queue" if stopped else ""
        lines.append(f"still running ({len(running)}){back}:")
        lines.append(listing(running))
    if due:
        lines.append(f"still due to run ({len(due)}):")
        lines.append(listing(due))
    if not running and not due:
        lines.append("nothing was running or due when it expired: jobs kept arriving")
    ran = [j for j in report.jobs if j.task_id not in {r.task_id for r in running}]
    if ran:
        lines.append(f"ran meanwhile: {len(ran)} job(s) ({status_counts(ran)})")
    if not stopped:
        lines.append(
            "the engine did not stop when asked: a handler ignores cancellation "
            "(its job stays 2 Processing until the lease expires)"
        )
    return "\n".join(lines)
