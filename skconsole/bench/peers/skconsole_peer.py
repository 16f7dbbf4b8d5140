"""skconsole in the peers benchmark: its AsyncProducer and ``skconsole worker``."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import psycopg

from skconsole.bench.peers.common import TASK, fetch_count, opened, record_pickup
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.db.schema import setup_schema
from skconsole.producer import AsyncProducer, Job
from skconsole.worker.registry import TaskRegistry

#: the worker's handlers (``skconsole worker --tasks skconsole.bench.peers.skconsole_peer:tasks``)
tasks = TaskRegistry()
#: a job is not finished while its result row says so (the queue row goes at claim time)
UNFINISHED = [int(JobStatus.UNPROCESSED), int(JobStatus.PROCESSING)]


@tasks.task(TASK)
async def noop(payload: Any) -> None:
    """Nothing but a pickup probe's record: the benchmark measures the engine."""
    if isinstance(payload, dict):
        record_pickup(payload.get("t"))


def _install(dsn: str) -> None:
    with Database(dsn).connect() as conn:
        setup_schema(conn)


class SkconsolePeer:
    name = "skconsole"

    def __init__(self, concurrency: int | None = None) -> None:
        self.concurrency = concurrency
        self._producer: AsyncProducer | None = None

    async def install(self, dsn: str) -> None:
        await asyncio.to_thread(_install, dsn)

    async def open(self, dsn: str) -> None:
        self._producer = AsyncProducer(dsn)

    async def close(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.close()

    async def post(self, posted_at: float | None) -> None:
        payload = None if posted_at is None else {"t": posted_at}
        await opened(self._producer).post(TASK, payload)

    async def post_many(self, count: int) -> None:
        await opened(self._producer).post_many([Job(TASK, None) for _ in range(count)])

    def worker(self, dsn: str) -> tuple[list[str], dict[str, str]]:
        more = [] if self.concurrency is None else ["--concurrency", str(self.concurrency)]
        cmd = [sys.executable, "-m", "skconsole", "worker", "--tasks", f"{__name__}:tasks", *more]
        return cmd, {"SKCONSOLE_DSN": dsn}

    async def remaining(self, conn: psycopg.AsyncConnection[Any]) -> int:
        return await fetch_count(
            conn,
            "SELECT count(*) FROM sk_task_results_t WHERE task_status = ANY(%s)",
            (UNFINISHED,),
        )
