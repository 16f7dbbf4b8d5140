"""Claiming: one claim round on the claim connection, how many jobs a round may
take, and reconciling after a claim whose answer was lost.

A claim (claim.sql) takes jobs with SKIP LOCKED, within the types' limits
(sk_claim_room()), and every job it returns is recorded in ``held`` before
anything else can run: a claimed job is never unaccounted for. A claim the
server refuses on one type's rows is retried type by type, and that type left
out for a while: one bad row never stops the other types. A claim that
got no answer may have committed: nothing more is claimed until the database
has been asked what this worker owns, and whatever it owns beyond ``held`` is
handed straight back, once the session that ran that claim is known to be gone.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

from skconsole.db.rows import arows, avalue
from skconsole.db.sqlfiles import query
from skconsole.worker.config import WorkerConfig
from skconsole.worker.jobs import Attempt, Claimed, Ending, Outcome
from skconsole.worker.links import Backend, Link, LinkLost, Throttle, is_transient
from skconsole.worker.metrics import MetricsBuffer
from skconsole.worker.results import ResultWriter

log = logging.getLogger("skconsole.worker")

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
#: a type whose claims the server refuses is left out of claims this long
BENCH_S = 30.0


def free_slots(cfg: WorkerConfig, *, running: int, held: int, threads: int) -> int:
    """How many jobs the next claim may take."""
    return min(
        cfg.concurrency - running,
        # results not yet written count too, so a slow database slows the
        # claims instead of letting Processing rows (and write batches) pile up
        4 * cfg.concurrency - held,
        # a timed-out sync handler keeps its thread: at most 2 x concurrency threads
        2 * cfg.concurrency - threads,
    )


@dataclass(eq=False)
class Claimer:
    """Claims on the claim connection, records every claimed job in ``held`` (shared
    with the engine), and reconciles ``held`` with the database when a claim's
    answer was lost (or every RECONCILE_EVERY seconds)."""

    link: Link
    _: KW_ONLY
    worker_id: uuid.UUID
    #: after a failover, claims are held for at least this long (lease + margin)
    hold_s: float
    types: list[str]
    held: dict[int, Claimed]
    metrics: MetricsBuffer
    results: ResultWriter
    #: a claim whose answer was lost: (its server session if known, when)
    unsure: tuple[Backend | None, float] | None = field(default=None, init=False)
    last_reconcile: float = field(default_factory=time.monotonic, init=False)
    #: types left out of claims until then (monotonic): the server refused their claim
    benched: dict[str, float] = field(default_factory=dict, init=False)
    _throttle: Throttle = field(default_factory=Throttle, init=False)

    async def claim(self, want: int) -> list[Claimed] | None:
        """Claim up to ``want`` jobs; None when the claim failed (try again later).

        A claim the server refuses for a reason other than contention (a row of one
        type that breaks a constraint, an index or an application's trigger) must not
        stop the other types: the types are then claimed one by one this round, and a
        type whose claim is refused is left out of claims for BENCH_S."""
        now = time.monotonic()
        types = [t for t in self.types if self.benched.get(t, 0.0) <= now]
        if not types:
            return []
        try:
            return await self._claim(types, want)
        except LinkLost as lost:
            self._lost(lost)
            return None
        except psycopg.Error as exc:  # refused by the server: it rolled back
            if is_transient(exc) or len(types) == 1:
                if not is_transient(exc):
                    self._bench(types[0], exc)
                self._throttle.warning("claim", "claim failed: %s", str(exc).strip())
                return None
            return await self._claim_each(types, want)

    async def _claim_each(self, types: list[str], want: int) -> list[Claimed] | None:
        """One claim per type until ``want`` are taken; a type the server refuses is
        benched; contention or a lost connection ends the round with what it took."""
        rows: list[Claimed] = []
        for task_type in types:
            if len(rows) >= want:
                break
            try:
                rows += await self._claim([task_type], want - len(rows))
            except LinkLost as lost:
                self._lost(lost)
                return rows or None
            except psycopg.Error as exc:
                if is_transient(exc):
                    break
                self._bench(task_type, exc)
        return rows

    def _bench(self, task_type: str, exc: psycopg.Error) -> None:
        self.benched[task_type] = time.monotonic() + BENCH_S
        self.metrics.add("poller@refused-claim-count")
        self._throttle.warning(
            f"bench {task_type}",
            "claims of type %s are refused by the server (%s): left out of claims for %gs;"
            " the other types are claimed",
            task_type,
            (str(exc).strip().splitlines() or [type(exc).__name__])[0],
            BENCH_S,
        )

    def _lost(self, lost: LinkLost) -> None:
        # the claim may have committed with its answer lost: reconcile before claiming again
        self.unsure = (lost.identity, time.monotonic())
        self._throttle.warning("claim", "claim interrupted (%s); reconciling", lost)

    async def _claim(self, types: list[str], want: int) -> list[Claimed]:
        """One claim statement for ``types``; raises what the link raises."""
        started = time.perf_counter()
        params = {"types": types, "limit": want, "worker_id": self.worker_id, "hold_s": self.hold_s}

        async def op(conn: psycopg.AsyncConnection[Any]) -> list[Claimed]:
            cur = conn.cursor(row_factory=class_row(Claimed))
            await cur.execute(query("claim"), params, prepare=True)
            jobs = await cur.fetchall()
            for job in jobs:  # before any await: a claimed job is never unaccounted for
                self.held[job.claim_id] = job
            return jobs

        rows = await self.link.run(op, retry=False)
        self.metrics.add("poller@dequeue-round-trips")
        self.metrics.add(
            "queue-consumer@total-dequeue-duration", int((time.perf_counter() - started) * 1000)
        )
        if rows:
            self.metrics.add("poller@dequeue-count", len(rows))
        return rows

    async def work_pending(self, horizon_s: float) -> bool:
        """Whether a job of these types is eligible now or within ``horizon_s`` (--burst)."""
        params = {"types": self.types, "horizon_s": horizon_s}

        async def op(conn: psycopg.AsyncConnection[Any]) -> bool:
            return bool(await avalue(conn, query("work_pending"), params))

        return await self.link.run(op)

    def reconcile_soon(self) -> None:
        """Reconcile before the next claim (a failover may have lost results)."""
        self.last_reconcile = float("-inf")

    def reconcile_due(self) -> bool:
        return self.unsure is not None or time.monotonic() - self.last_reconcile > RECONCILE_EVERY

    async def reconcile(self) -> bool:
        """Hand back what the database says this worker runs but it does not hold
        (a claim whose answer was lost). If that claim's server session may still
        be running it, it is ended first: reconciling before it commits would leave
        its jobs owned by a live worker for ever. False: not possible yet."""
        try:
            if self.unsure is not None:
                identity, since = self.unsure
                if identity is None:
                    if time.monotonic() - since < UNKNOWN_SESSION_WAIT:
                        return False
                elif not await self.link.run(_ended(identity), retry=False):
                    return False
            # what is held now: a job settled while the query ran (its result written
            # by the finish connection) is still in the query's answer, yet no orphan
            known = set(self.held)
            owned = await self.link.run(self._owned, retry=False)
        except (LinkLost, psycopg.Error) as exc:
            self._throttle.warning("reconcile", "cannot reconcile claims yet: %s", exc)
            return False
        orphans = [a for a in owned if a.claim_id not in self.held and a.claim_id not in known]
        if orphans:
            log.warning(
                "handing back %d job(s) the database says this worker runs but it does not"
                " hold (a claim whose answer was lost, or a result a failover lost)",
                len(orphans),
            )
            for attempt in orphans:
                job = _orphan(attempt)
                self.held[attempt.claim_id] = job
                self.results.add(Outcome(job, Ending.HAND_BACK))
        self.unsure = None
        self.last_reconcile = time.monotonic()
        return True

    async def _owned(self, conn: psycopg.AsyncConnection[Any]) -> list[Attempt]:
        params = {"worker_id": self.worker_id, "ids": None}
        return await arows(conn, query("owned_jobs"), Attempt, params)


def _ended(session: Backend) -> Any:
    """end_backend.sql for ``session``: whether it is gone for sure."""

    async def op(conn: psycopg.AsyncConnection[Any]) -> Any:
        params = {"pid": session.pid, "started": session.backend_start}
        return await avalue(conn, query("end_backend"), params)

    return op


def _orphan(attempt: Attempt) -> Claimed:
    """A job this worker owns in the database but never received: only its id and
    claim id are known, which is all a hand-back needs."""
    return Claimed(
        task_id=attempt.task_id,
        task_type="",
        source="",
        payload=None,
        priority=0,
        posted_at=datetime.now(UTC),
        attempt=0,
        claim_id=attempt.claim_id,
        error_count=0,
    )
