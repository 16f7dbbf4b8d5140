"""A worker's shutdown: the grace period for running jobs, then its last writes.

Running jobs get the grace period to finish (counted from the stop request:
a claim in flight gets the same deadline, ``Engine._step``); then async ones
are cancelled and handed back. A sync handler's thread cannot be stopped: an
engine sharing its process waits for it (until told to stop now); one that
owns its process hands the job back, claimable again only after lease +
margin, and ends the process once its last results are written
(``Engine.run``), so the thread ends with it well before then.

The last writes (hand-backs, results, metrics, the clean stop) get at most
:data:`FINAL_WRITES_BOUND` seconds, whatever the network does: a path gone
silent (no RST) would otherwise hold them until the kernel gives up. What they
cannot write is abandoned and logged, job by job, as left to the lease: once
this worker's lease lapses (lease + margin after its last renewal) any other
worker's reaper re-posts those jobs, as for a worker that crashed. That is safe
because every write is fenced by the attempt's claim id: a hand-back that
reaches the server late (after the partition heals) changes nothing once the
job was reaped.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg

from skconsole.db.sqlfiles import query
from skconsole.worker.jobs import Claimed, Ending, JobRun, Outcome
from skconsole.worker.lease import Lease
from skconsole.worker.links import Link
from skconsole.worker.results import ResultWriter
from skconsole.worker.upkeep import Upkeep

log = logging.getLogger("skconsole.worker")

#: Longest the last writes of a stopping worker may take, after the grace period.
#: Healthy, they take milliseconds (a row lock held by someone else costs 200 ms
#: and a retry); 5 s is also the lease's floor, so a worker never waits on its
#: writes longer than it may stay silent anyway, and --grace + 5 s (+ at most
#: CLOSE_BOUND) is a shutdown an orchestrator's kill timeout can be sized for.
FINAL_WRITES_BOUND = 5.0
#: longest closing the connections may take once the last writes are done or abandoned
CLOSE_BOUND = 1.0


async def drain(
    runs: dict[int, JobRun],
    *,
    deadline: Callable[[], float],
    own_process: bool,
    lease: Lease,
    wait: Callable[[float], Awaitable[None]],
    stop_now: Callable[[], bool],
) -> None:
    """Let ``runs`` finish until ``deadline()`` (monotonic: the stop request plus the
    grace period, now for a second signal), then stop them (module docstring).
    ``wait`` returns early when something changed; ``stop_now``: wait no longer."""
    if runs:
        log.info(
            "waiting up to %.0fs for %d running job(s)",
            max(0.0, deadline() - time.monotonic()),
            len(runs),
        )
    while runs and not stop_now() and time.monotonic() < deadline():
        await wait(min(0.2, max(0.0, deadline() - time.monotonic())))
    stopped = list(runs.values())
    for run in stopped:
        run.stop("shutdown")
    threads = [r for r in stopped if not r.is_async]
    if threads and not own_process:
        log.info("waiting for %d sync handler(s) to return", len(threads))
        while any(r.task and not r.task.done() for r in threads) and not stop_now():
            await wait(0.2)
    left = [r for r in threads if r.task is not None and not r.task.done()]
    if left:
        delay = lease.length + lease.margin
        log.warning(
            "%d sync handler(s) still running after the grace period: their jobs go back "
            "to the queue, claimable in %.0fs%s",
            len(left),
            delay,
            ", after this process has ended" if own_process else "",
        )
    for run in left:
        assert run.task is not None
        run.hand_back_delay_ms = (lease.length + lease.margin) * 1000.0
        run.task.cancel()
    await asyncio.gather(*(r.task for r in stopped if r.task is not None), return_exceptions=True)


async def final_writes(
    *,
    held: dict[int, Claimed],
    runs: dict[int, JobRun],
    results: ResultWriter,
    upkeep: Upkeep,
    link: Link,
    worker_id: uuid.UUID,
    bound: float = FINAL_WRITES_BOUND,
) -> list[Claimed]:
    """Hand back what never started, write every result, the last metrics and the
    clean stop (the results of sync handlers given up on last), all within
    ``bound`` seconds. Returns the jobs left to the lease (their writes abandoned),
    each one logged."""

    def thread_still_runs(o: Outcome) -> bool:
        return o.thread_running

    async def stopped(conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute(query("worker_stopped"), {"worker_id": worker_id})

    async def write_all() -> None:
        await results.stop()  # the write in progress first (never cut in half)
        # claimed but never started (the claim came back as the engine stopped)
        leftovers = [job for claim_id, job in held.items() if claim_id not in runs]
        for job in leftovers:
            results.add(Outcome(job, Ending.HAND_BACK))
        await results.flush_all(hold=thread_still_runs)
        await upkeep.flush_metrics_now()
        await link.run(stopped)
        # last: from here the process ends within moments (Engine.run), long before
        # these jobs become claimable again
        await results.flush_all()

    started = time.monotonic()
    try:
        await asyncio.wait_for(write_all(), timeout=bound)
    except TimeoutError:
        why = f"no answer within {bound:g}s"
    except Exception as exc:  # the reaper of another worker recovers what is left
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    else:
        return []
    left = sorted(held.values(), key=lambda job: str(job.task_id))
    log.error(
        "last writes abandoned after %.1fs (%s): %d job(s) left to the lease, re-posted by "
        "other workers' reapers once this worker's lease lapses",
        time.monotonic() - started,
        why,
        len(left),
    )
    for job in left:
        log.warning(
            "job %s (%s, claim %d) left to the lease", job.task_id, job.task_type, job.claim_id
        )
    return left
