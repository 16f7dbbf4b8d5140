"""A worker's shutdown: the grace period for running jobs, then its last writes.

Running jobs get the grace period to finish; then async ones are cancelled
and handed back. A sync handler's thread cannot be stopped: an engine sharing
its process waits for it (until told to stop now); one that owns its process
hands the job back, claimable again only after lease + margin, and ends the
process once its last results are written (``Engine.run``), so the thread
ends with it well before then. The last writes are bounded in time: what
they cannot write, other workers reap once this worker's lease lapses.
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

#: longest the last writes of a stopping worker may take
FINAL_WRITES_TIMEOUT = 30


async def drain(
    runs: dict[int, JobRun],
    *,
    grace_period: float,
    own_process: bool,
    lease: Lease,
    wait: Callable[[float], Awaitable[None]],
    stop_now: Callable[[], bool],
) -> None:
    """Let ``runs`` finish within the grace period, then stop them (module docstring).
    ``wait`` returns early when something changed; ``stop_now``: wait no longer."""
    deadline = time.monotonic() + grace_period
    if runs:
        log.info("waiting up to %.0fs for %d running job(s)", grace_period, len(runs))
    while runs and not stop_now() and time.monotonic() < deadline:
        await wait(min(0.2, max(0.0, deadline - time.monotonic())))
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
) -> None:
    """Hand back what never started, write every result, the last metrics and the
    clean stop (the results of sync handlers given up on last)."""

    def thread_still_runs(o: Outcome) -> bool:
        return o.thread_running

    async def stopped(conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute(query("worker_stopped"), {"worker_id": worker_id})

    async def write_all() -> None:
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

    try:
        await asyncio.wait_for(write_all(), timeout=FINAL_WRITES_TIMEOUT)
    except Exception as exc:  # the reaper of another worker recovers what is left
        log.error(
            "could not write final results (%s); other workers will reap %d job(s) "
            "once this worker's lease lapses",
            exc,
            len(held),
        )
