"""Handlers for the chaos test (``--tasks tests.support.tasks_chaos``).

``chaos-async`` awaits and ``chaos-sync`` sleeps in its thread (ignoring
JobContext.stop on purpose: the worst kind of handler) for ``payload["s"]``
seconds. Both log every execution with its start and end, and each success,
through the fault tests' logs (tests.support.tasks_faults: ``execution``,
``log_completion``). Attempts are plentiful: a job reaped from killed
workers several times must still end 3 Processed. ``chaos-mutex`` (one running
per customer) and ``chaos-parent`` (fan-in parents, purged by retention) are
async.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from tests.support.tasks_faults import execution, log_completion

tasks = TaskRegistry(TaskOptions(max_attempts=1000, backoff=0.05, max_backoff=1.0, timeout=60.0))


@tasks.task("chaos-async")
async def chaos_async(payload: Any, ctx: JobContext) -> None:
    with execution(ctx.task_id, f"v{payload.get('v', 1)}"):
        await asyncio.sleep(float(payload["s"]))
    log_completion(ctx.task_id)


@tasks.task("chaos-sync")
def chaos_sync(payload: Any, ctx: JobContext) -> None:
    with execution(ctx.task_id, f"v{payload.get('v', 1)}"):
        time.sleep(float(payload["s"]))
    log_completion(ctx.task_id)


@tasks.task("chaos-limited")
async def chaos_limited(payload: Any, ctx: JobContext) -> None:
    """A type with a fleet-wide concurrency limit, posted by key inside the posting
    application's own transactions (see test_chaos)."""
    with execution(ctx.task_id, f"v{payload.get('v', 1)}"):
        await asyncio.sleep(float(payload["s"]))
    log_completion(ctx.task_id)


#: the periodic type's interval: the chaos test changes it mid-run (the workers it
#: restarts after the change get the new one, as in a rolling deploy)
EVERY = os.environ.get("SKTEST_CHAOS_EVERY", "2s")


@tasks.task("chaos-tick", every=EVERY, payload={"s": 0.01})
async def chaos_tick(payload: Any, ctx: JobContext) -> None:
    with execution(ctx.task_id, "tick"):
        await asyncio.sleep(float(payload["s"]))
    log_completion(ctx.task_id)


@tasks.task("chaos-mutex")
async def chaos_mutex(payload: Any, ctx: JobContext) -> None:
    """A type limited to one running job per customer (a mutex per payload.cust), posted
    by key and re-posted by key with another customer while it runs (see test_chaos):
    its execution's note is ``CUSTOMER/vN``."""
    with execution(ctx.task_id, f"{payload['cust']}/v{payload.get('v', 1)}"):
        await asyncio.sleep(float(payload["s"]))
    log_completion(ctx.task_id)


@tasks.task("chaos-parent")
async def chaos_parent(payload: Any, ctx: JobContext) -> None:
    """A parent of fan-in jobs; its finished results are purged by a 1 s retention
    policy while its siblings still run (see test_chaos)."""
    await asyncio.sleep(float(payload["s"]))
    log_completion(ctx.task_id)
