"""Handlers for the limit fault tests (``--tasks tests.support.tasks_limits``).

``lim.slow`` runs 0.2 s (the type the tests limit), ``lim.fast`` returns at
once (the type that must keep flowing meanwhile).
"""

from __future__ import annotations

import asyncio
from typing import Any

from skconsole.worker.registry import TaskOptions, TaskRegistry

RUN_S = 0.2

tasks = TaskRegistry(TaskOptions(max_attempts=1, timeout=30.0))


@tasks.task("lim.slow")
async def slow(payload: Any) -> None:
    await asyncio.sleep(RUN_S)


@tasks.task("lim.fast")
async def fast(payload: Any) -> None:
    """Succeeds at once."""
