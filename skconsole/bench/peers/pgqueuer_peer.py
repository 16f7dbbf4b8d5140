"""PgQueuer in the peers benchmark: ``Queries`` over asyncpg, and its worker.

The worker is what ``pgqueuer run`` runs, with its defaults and event loop
(uvloop when installed), on the factory below: one asyncpg connection, as
PgQueuer's documentation sets it up. It is started through ``main`` rather than
the CLI because PgQueuer 1.6.0's ``run`` command failed with Typer 0.29 (the
version this was first measured with): its ``--log-level`` reaches the logger as a str
(``AttributeError: 'str' object has no attribute 'name'``).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pgqueuer
import psycopg
from pgqueuer import PgQueuer
from pgqueuer.db import AsyncpgDriver
from pgqueuer.domain.settings import db_settings
from pgqueuer.models import Job
from pgqueuer.queries import Queries
from psycopg import sql

from skconsole.bench.peers.common import DSN_ENV, TASK, fetch_count, opened, record_pickup


async def noop(job: Job) -> None:
    """Nothing but a pickup probe's record: the benchmark measures the library."""
    if job.payload:
        record_pickup(json.loads(job.payload).get("t"))


@contextlib.asynccontextmanager
async def factory() -> AsyncIterator[PgQueuer]:
    conn = await asyncpg.connect(os.environ[DSN_ENV])
    try:
        pgq = PgQueuer(AsyncpgDriver(conn))
        pgq.entrypoint(TASK)(noop)
        yield pgq
    finally:
        await conn.close()


class PgQueuerPeer:
    name = "pgqueuer"

    def __init__(self) -> None:
        self._conn: asyncpg.Connection | None = None
        self._queries: Queries | None = None

    async def install(self, dsn: str) -> None:
        conn = await asyncpg.connect(dsn)
        try:
            await Queries(AsyncpgDriver(conn)).install()
        finally:
            await conn.close()

    async def open(self, dsn: str) -> None:
        self._conn = await asyncpg.connect(dsn)
        self._queries = Queries(AsyncpgDriver(self._conn))

    async def close(self) -> None:
        conn, self._conn, self._queries = self._conn, None, None
        if conn is not None:
            await conn.close()

    async def post(self, posted_at: float | None) -> None:
        payload = None if posted_at is None else json.dumps({"t": posted_at}).encode()
        await opened(self._queries).enqueue(TASK, payload)

    async def post_many(self, count: int) -> None:
        await opened(self._queries).enqueue([TASK] * count, [None] * count, [0] * count)

    def worker(self, dsn: str) -> tuple[list[str], dict[str, str]]:
        return [sys.executable, "-m", "skconsole.bench.peers.pgqueuer_peer"], {DSN_ENV: dsn}

    async def remaining(self, conn: psycopg.AsyncConnection[Any]) -> int:
        # a job's row is deleted (moved to the log) once it has finished
        settings = db_settings()
        table = sql.Identifier(*filter(None, (settings.db_schema, settings.queue_table)))
        return await fetch_count(conn, sql.SQL("SELECT count(*) FROM {}").format(table))


def main() -> None:
    """One worker, as ``pgqueuer run skconsole.bench.peers.pgqueuer_peer:factory``."""
    from pgqueuer.adapters.cli.cli import asyncio_run  # the CLI's loop: uvloop when installed
    from pgqueuer.core.logconfig import LogLevel, setup_fancy_logger

    setup_fancy_logger(LogLevel.INFO)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio_run(pgqueuer.run(factory))


if __name__ == "__main__":
    main()
