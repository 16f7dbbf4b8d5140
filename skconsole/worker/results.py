"""Writing how attempts ended: batched, fenced, and never held up by one row.

Outcomes are written a batch at a time on the worker's finish connection.
Each statement is fenced (status, owner, claim token). A row someone else
holds locked (an operator's open transaction, a producer's keyed re-post
still in flight) costs one lock timeout (200 ms): the batch is written again
skipping locked rows, and those are tried again later, skipping locks again.
A batch the server refuses for any other reason is split in halves until
the one outcome it cannot take is isolated; a failure whose error text the
server refuses is written with a short replacement text instead. Nothing
here waits for anything but its own connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, LiteralString

import psycopg

from skconsole.core.status import JobStatus
from skconsole.core.stored_error import StoredError
from skconsole.db.rows import arows
from skconsole.db.sqlfiles import query
from skconsole.worker.jobs import Attempt, Ending, Outcome
from skconsole.worker.links import Link, Throttle, is_transient
from skconsole.worker.metrics import MetricsBuffer

log = logging.getLogger("skconsole.worker")

# The finish connection updates result rows by id, a batch at a time. A burst
# outruns autovacuum: planned with statistics of the table when it was nearly
# empty, those updates once scanned the whole table (or walked a status index
# over every dead entry, or paired every result with every id) for each batch,
# 8-27 s a batch. Its statements are written so that only the primary key
# serves them cheaply; without sequential scans and nested loops the planner
# has no other choice left, whatever the statistics say.
FINISH_SETTINGS = {
    "enable_seqscan": "off",
    "enable_nestloop": "off",
    # a result row locked by someone else: give up quickly and write the batch
    # again skipping locked rows (a SKIP LOCKED pass on every batch cost 12% of
    # the drain, so it is taken only after a lock timeout)
    "lock_timeout": "200ms",
}
# results written per statement: bounded, so a plan that joins a batch
# pairwise (statistics again) stays milliseconds, not minutes
WRITE_BATCH = 500
#: the ways an attempt ends, in the order their statements are written
ENDINGS = (Ending.SUCCESS, Ending.FAILURE, Ending.HAND_BACK)


@dataclass(slots=True)
class Written:
    """A row one of the statements below changed (the others were not ours to write),
    its new status, and whether the statement woke the workers (a job it queued)."""

    task_id: uuid.UUID
    task_status: int
    notified: object


def statement(ending: Ending) -> LiteralString:
    """The statement that records ``ending`` (for the names in use: read when run)."""
    if ending is Ending.SUCCESS:
        return query("finish_success")
    if ending is Ending.FAILURE:
        return query("finish_failure")
    return query("hand_back")


#: longest wait before an outcome that could not be written is tried again
MAX_RETRY_DELAY = 30.0
LOCK_NOT_AVAILABLE = "55P03"


def children_params(group: list[Outcome]) -> dict[str, list[Any]]:
    """finish_success.sql's child rows: the jobs each success posts (ctx.post,
    then the pipeline's next stage, which alone carries a pipeline name), and the
    edges of those posted ``after=`` other jobs."""
    rows = [
        (o.job.task_id, job, pipeline)
        for o in group
        for job, pipeline in [
            *((j, None) for j in o.posts),
            *(((o.stage, o.pipeline),) if o.stage is not None else ()),
        ]
    ]
    return {
        "child_parents": [parent for parent, _, _ in rows],
        "child_ids": [job.task_id for _, job, _ in rows],
        "child_types": [job.task_type for _, job, _ in rows],
        "child_payloads": [job.payload_json for _, job, _ in rows],
        "child_priorities": [job.priority for _, job, _ in rows],
        "child_delays_ms": [job.delay * 1000.0 for _, job, _ in rows],
        "child_run_ats": [job.run_at for _, job, _ in rows],
        "child_pipelines": [pipeline for _, _, pipeline in rows],
        # None: it waits for nothing; else whether a failed parent lets it run
        "child_after_runs": [
            (job.after_failure == "run") if job.after else None for _, job, _ in rows
        ],
        # the trace context each is posted under (ctx.post's span, or the run's for a stage)
        "child_traces": [job.trace for _, job, _ in rows],
        "child_edge_jobs": [job.task_id for _, job, _ in rows for _ in job.after],
        "child_edge_ids": [parent for _, job, _ in rows for parent in job.after],
    }


def count_settled(metrics: MetricsBuffer, outcomes: list[Outcome], written: bool) -> int:
    """Count outcomes the writer is done with (``written``: written, else fenced or
    abandoned) in the worker's metrics; returns how many attempts ended (success or failure)."""
    done = [o for o in outcomes if o.ending in (Ending.SUCCESS, Ending.FAILURE)]
    if written:
        ok = sum(1 for o in done if o.ending is Ending.SUCCESS)
        if ok:
            metrics.add("worker@successful-processed-payload-count", ok)
        if len(done) - ok:
            metrics.add("worker@failed-processed-payload-count", len(done) - ok)
        back = len(outcomes) - len(done)
        if back:
            metrics.add("worker@handed-back-count", back)
        cancelled = sum(1 for o in done if o.status is JobStatus.CANCELLED)
        if cancelled:
            metrics.add("worker@cancelled-count", cancelled)
    for o in done:
        metrics.execution_time(o.job.task_type, o.ms)
    if done:
        metrics.add("worker@processed-payload-count", len(done))
        metrics.add("worker@total-processing-time", sum(o.ms for o in done))
        metrics.add("result-queue@result-writes-count", len(done))
    return len(done)


class ResultWriter:
    """Writes outcomes; ``on_settled`` is called with every outcome that is
    done with (written, or fenced because the job was no longer ours)."""

    def __init__(
        self,
        link: Link,
        worker_id: uuid.UUID,
        metrics: MetricsBuffer,
        on_settled: Callable[[list[Outcome], bool], None],
    ) -> None:
        self.link = link
        self.worker_id = worker_id
        self.metrics = metrics
        self.on_settled = on_settled
        self.pending: list[Outcome] = []
        self.deferred: list[tuple[float, Outcome]] = []  # (monotonic retry time, outcome)
        self._ready = asyncio.Event()
        self._throttle = Throttle()
        self._closing = False
        self._loop_done = asyncio.Event()

    def add(self, outcome: Outcome) -> None:
        self.pending.append(outcome)
        self._ready.set()

    @property
    def waiting(self) -> int:
        return len(self.pending) + len(self.deferred)

    async def run(self) -> None:
        try:
            await self._run()
        finally:
            self._loop_done.set()

    async def stop(self) -> None:
        """End :meth:`run` after the write in progress (never cut a write in half)."""
        self._closing = True
        self._ready.set()
        await self._loop_done.wait()

    async def flush_all(self, *, hold: Callable[[Outcome], bool] | None = None) -> None:
        """Write everything but what ``hold`` keeps back, waiting for locked rows
        (the engine bounds the time)."""
        kept = [o for o in self.pending if hold is not None and hold(o)]
        self.pending = [o for o in self.pending if not (hold is not None and hold(o))]
        try:
            while self.waiting:
                await self.flush(everything=True)
                if self.waiting:
                    await asyncio.sleep(0.2)
        finally:
            self.pending = kept + self.pending

    async def _run(self) -> None:
        while not self._closing:
            timeout = None
            if self.deferred:
                timeout = max(0.0, min(t for t, _ in self.deferred) - time.monotonic())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), timeout)
            self._ready.clear()
            await self.flush()

    async def flush(self, *, everything: bool = False) -> None:
        """Write what is pending, and deferred outcomes that are due (all, with ``everything``)."""
        now = time.monotonic()
        due = [o for t, o in self.deferred if everything or t <= now]
        if due:
            # in batches of their own: a fresh batch never waits again on a row
            # already known to be locked
            self.deferred = [(t, o) for t, o in self.deferred if not (everything or t <= now)]
            for start in range(0, len(due), WRITE_BATCH):
                await self._write(due[start : start + WRITE_BATCH], skip_locked=True)
        while self.pending:
            batch = self.pending[:WRITE_BATCH]
            del self.pending[: len(batch)]
            await self._write(batch)

    async def _write(self, batch: list[Outcome], *, skip_locked: bool = False) -> None:
        for ending in ENDINGS:
            group = [o for o in batch if o.ending is ending]
            if group:
                await self._write_group(ending, group, skip_locked)

    async def _write_group(
        self, ending: Ending, group: list[Outcome], skip_locked: bool = False
    ) -> None:
        try:
            rows = await self.link.run(lambda conn: self._execute(conn, ending, group, skip_locked))
        except psycopg.Error as exc:
            if exc.sqlstate == LOCK_NOT_AVAILABLE and not skip_locked:
                # someone holds one of these rows: the others now, that one later
                await self._write_group(ending, group, True)
                return
            self._refused(ending.value, group, exc)
            if len(group) > 1:  # find the outcome the server will not take
                half = len(group) // 2
                await self._write_group(ending, group[:half], skip_locked)
                await self._write_group(ending, group[half:], skip_locked)
            else:
                await self._write_single_refused(ending, group[0], exc)
            return
        written = {r.task_id for r in rows}
        done = [o for o in group if o.job.task_id in written]
        rest = [o for o in group if o.job.task_id not in written]
        if done:
            self.on_settled(done, True)
        if rest:
            await self._sort_unwritten(rest)

    async def _write_single_refused(
        self, ending: Ending, outcome: Outcome, exc: psycopg.Error
    ) -> None:
        if outcome.ending is Ending.FAILURE and outcome.tries == 0 and not is_transient(exc):
            # the error text itself may be what the server refuses: keep the attempt's
            # accounting, lose the text (it is in the worker's log)
            log.error(
                "could not store the error of job %s (%s); storing a short replacement",
                outcome.job.task_id,
                exc,
            )
            original = outcome.error.to_json() if outcome.error else ""
            log.error("the original error text was:\n%s", original[:10_000])
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            outcome.error = StoredError(
                "skconsole.ResultWriteError",
                f"the handler's error could not be stored ({type(exc).__name__}: {first})",
            )
            outcome.tries += 1
            await self._write_group(ending, [outcome], True)
            return
        self._defer([outcome])

    async def _sort_unwritten(self, rest: list[Outcome]) -> None:
        """Rows the statement did not change: no longer ours (fenced), or, should
        the database still say they are ours, deferred and tried again later."""
        ids = [o.job.task_id for o in rest]
        try:
            owned = await self.link.run(lambda conn: self._still_ours(conn, ids))
        except psycopg.Error as exc:
            self._refused("owned check", rest, exc)
            self._defer(rest)
            return
        locked = [o for o in rest if Attempt(o.job.task_id, o.job.claim_id) in owned]
        fenced = [o for o in rest if Attempt(o.job.task_id, o.job.claim_id) not in owned]
        if locked:
            self.metrics.add("result-queue@deferred-result-count", len(locked))
            self._throttle.warning(
                "locked",
                "%d result(s) wait: their rows are locked by another session; retrying",
                len(locked),
            )
            self._defer(locked)
        if fenced:
            log.warning(
                "%d result(s) ignored: the job was reaped or changed while it ran", len(fenced)
            )
            self.metrics.add("worker@fenced-result-count", len(fenced))
            self.on_settled(fenced, False)

    def _defer(self, outcomes: list[Outcome]) -> None:
        now = time.monotonic()
        for o in outcomes:
            o.tries += 1
            delay = min(0.2 * 2 ** (o.tries - 1), MAX_RETRY_DELAY)
            self.deferred.append((now + delay, o))

    def _refused(self, what: str, group: list[Outcome], exc: psycopg.Error) -> None:
        self.metrics.add("result-queue@result-write-error-count")
        self._throttle.warning(
            f"refused:{what}",
            "writing %d result(s) (%s) failed: %s",
            len(group),
            what,
            str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
        )

    async def _execute(
        self,
        conn: psycopg.AsyncConnection[Any],
        ending: Ending,
        group: list[Outcome],
        skip_locked: bool,
    ) -> list[Written]:
        params: dict[str, Any] = {
            "worker_id": self.worker_id,
            "ids": [o.job.task_id for o in group],
            "claims": [o.job.claim_id for o in group],
            "skip_locked": skip_locked,
        }
        if ending is Ending.HAND_BACK:
            params["delays_ms"] = [o.delay_ms for o in group]
            params["snoozed"] = [o.snoozed for o in group]
        else:
            params["ms"] = [o.ms for o in group]
        if ending is Ending.SUCCESS:
            params |= children_params(group)
        if ending is Ending.FAILURE:
            params |= {
                "statuses": [int(o.status) for o in group],
                "errors": [o.error.stored() if o.error else None for o in group],
                "recoverable": [o.recoverable for o in group],
                "delays_ms": [o.delay_ms for o in group],
            }
        return await arows(conn, statement(ending), Written, params)

    async def _still_ours(
        self, conn: psycopg.AsyncConnection[Any], ids: list[uuid.UUID]
    ) -> set[Attempt]:
        params = {"worker_id": self.worker_id, "ids": ids}
        return set(await arows(conn, query("owned_jobs"), Attempt, params))
