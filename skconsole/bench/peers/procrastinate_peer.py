"""Procrastinate in the peers benchmark: its async API and ``procrastinate worker``.

Its worker is Procrastinate's own CLI with its defaults (notably concurrency 1:
one job at a time per process) on the module-level ``app`` below, which reads
its DSN from the environment because the CLI loads the app by dotted path.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import procrastinate
import psycopg
from procrastinate.tasks import Task

from skconsole.bench.peers.common import DSN_ENV, TASK, fetch_count, opened, record_pickup


async def noop(t: float | None = None) -> None:
    """Nothing but a pickup probe's record: the benchmark measures the library."""
    record_pickup(t)


def make_app(dsn: str) -> procrastinate.App:
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=dsn))
    app.task(name=TASK)(noop)
    return app


#: the worker's app (``procrastinate --app skconsole.bench.peers.procrastinate_peer.app worker``)
app = make_app(os.environ.get(DSN_ENV, ""))


class ProcrastinatePeer:
    name = "procrastinate"

    def __init__(self) -> None:
        self._app: procrastinate.App | None = None

    async def install(self, dsn: str) -> None:
        async with make_app(dsn).open_async() as opened:
            await opened.schema_manager.apply_schema_async()

    async def open(self, dsn: str) -> None:
        self._app = make_app(dsn)
        await self._app.open_async()

    async def close(self) -> None:
        app, self._app = self._app, None
        if app is not None:
            await app.close_async()

    def _task(self) -> Task[Any, Any, Any]:
        return opened(self._app).tasks[TASK]

    async def post(self, posted_at: float | None) -> None:
        if posted_at is None:
            await self._task().defer_async()
        else:
            await self._task().defer_async(t=posted_at)

    async def post_many(self, count: int) -> None:
        await self._task().batch_defer_async(*({} for _ in range(count)))

    def worker(self, dsn: str) -> tuple[list[str], dict[str, str]]:
        cmd = [sys.executable, "-m", "procrastinate", "--app", f"{__name__}.app", "worker"]
        return cmd, {DSN_ENV: dsn}

    async def remaining(self, conn: psycopg.AsyncConnection[Any]) -> int:
        # finished jobs stay, with a final status
        return await fetch_count(
            conn,
            "SELECT count(*) FROM procrastinate_jobs WHERE status = ANY(%s::procrastinate_job_status[])",
            (["todo", "doing"],),
        )
