"""Handlers for the per-key limit fault tests (``--tasks tests.support.tasks_keys``).

``keys.run`` records each run in the test's table ``sk_test_key_runs`` (the
database in ``SKTEST_RUNS_DSN``): a row when it starts, its end when it ends,
both by the server's clock, so runs of several processes compare on one clock.
A process killed mid-run leaves a start without an end. It runs ``payload["s"]``
seconds; up to 3 attempts, so a job reaped from a killed worker runs again.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

import psycopg

from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry

TYPE = "keys.run"

tasks = TaskRegistry(TaskOptions(max_attempts=3, backoff=0.01, max_backoff=0.05, timeout=60.0))


@tasks.task(TYPE)
async def run(payload: Any, ctx: JobContext) -> None:
    run_id = uuid.uuid4()
    async with await psycopg.AsyncConnection.connect(
        os.environ["SKTEST_RUNS_DSN"], autocommit=True
    ) as conn:
        await conn.execute(
            "INSERT INTO sk_test_key_runs (run_id, task_id, key, pid) VALUES (%s, %s, %s, %s)",
            (run_id, ctx.task_id, str(payload["customer"]), os.getpid()),
        )
        await asyncio.sleep(float(payload.get("s", 0.05)))
        await conn.execute(
            "UPDATE sk_test_key_runs SET ended = clock_timestamp() WHERE run_id = %s", (run_id,)
        )
