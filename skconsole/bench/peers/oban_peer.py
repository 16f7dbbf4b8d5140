"""Oban (oban-py, Python >= 3.12) in the peers benchmark: an ``Oban`` client and ``oban start``.

Posts go through an ``Oban`` instance in client mode (no queues, not started:
enqueueing needs its pool alone) over the pool ``Oban.create_pool`` makes.
Oban's bulk call, ``enqueue_many``, is one ``INSERT ... RETURNING`` (with a
``pg_notify``) per job, in one transaction: open-source Oban has no multi-row
insert (Oban Pro replaces it through the ``query.insert_jobs`` extension).

The worker is Oban's own CLI, ``python -m oban start``, with its defaults but
one: it runs no queue unless told, so ``--queues default:10`` (10 is Oban's
default queue limit, ``Producer(limit=10)``, and the figure of its examples).
``--cron-modules`` imports this module at start, as ``--tasks`` / ``--app`` do for
the others; without it the CLI greps the working directory for workers.
The CLI's defaults include logging every job's start and stop at INFO (two JSON
lines a job, to the worker's log file) and uvloop.
"""

from __future__ import annotations

import sys
from typing import Any

import psycopg
from oban import Job, Oban, worker
from oban.schema import install as install_schema

from skconsole.bench.peers.common import fetch_count, opened, record_pickup

#: the one queue the worker runs, at Oban's default limit (the CLI has no default queue)
QUEUE = "default"
LIMIT = 10
#: every state but the final ones (completed, cancelled, discarded)
UNFINISHED = ["available", "scheduled", "executing", "retryable", "suspended"]


@worker(queue=QUEUE)
class Noop:
    """Nothing but a pickup probe's record: the benchmark measures the library.

    Oban names a worker by its class path (``skconsole.bench.peers.oban_peer.Noop``),
    not by the benchmark's ``peers.noop``.
    """

    async def process(self, job: Job) -> None:
        record_pickup(job.args.get("t"))


class ObanPeer:
    name = "oban"

    def __init__(self) -> None:
        self._pool: Any = None
        self._oban: Oban | None = None

    async def install(self, dsn: str) -> None:
        pool = await Oban.create_pool(dsn, min_size=1, max_size=1)
        try:
            await install_schema(pool)
        finally:
            await pool.close()

    async def open(self, dsn: str) -> None:
        self._pool = await Oban.create_pool(dsn)
        self._oban = Oban(pool=self._pool)

    async def close(self) -> None:
        pool, self._pool, self._oban = self._pool, None, None
        if pool is not None:
            await pool.close()

    async def post(self, posted_at: float | None) -> None:
        args = None if posted_at is None else {"t": posted_at}
        await opened(self._oban).enqueue(Noop.new(args))  # type: ignore[attr-defined]

    async def post_many(self, count: int) -> None:
        jobs = [Noop.new() for _ in range(count)]  # type: ignore[attr-defined]  # @worker's
        await opened(self._oban).enqueue_many(jobs)

    def worker(self, dsn: str) -> tuple[list[str], dict[str, str]]:
        cmd = [sys.executable, "-m", "oban", "start", "--queues", f"{QUEUE}:{LIMIT}"]
        return [*cmd, "--cron-modules", __name__], {"OBAN_DSN": dsn}

    async def remaining(self, conn: psycopg.AsyncConnection[Any]) -> int:
        # finished jobs stay, in a final state; a completion is written with the
        # producer's next fetch (its acks are batched)
        return await fetch_count(
            conn,
            "SELECT count(*) FROM oban_jobs WHERE state = ANY(%s::oban_job_state[])",
            (UNFINISHED,),
        )
