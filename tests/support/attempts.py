"""One attempt run on the engine's executor, without a database or an engine: the
middleware and tracing tests of tests/unit."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from skconsole.worker.execution import Executor, Threads
from skconsole.worker.jobs import Claimed, JobRun, Outcome
from skconsole.worker.registry import JobContext, TaskRegistry


def a_run(tasks: TaskRegistry, task_type: str, payload: Any = None) -> JobRun:
    """A claimed attempt of a ``task_type`` job, as the engine would start it."""
    job = Claimed(uuid.uuid4(), task_type, "s", json.dumps(payload), 0, datetime.now(UTC), 1, 1, 0)
    ctx = JobContext(
        task_id=job.task_id,
        task_type=task_type,
        source="s",
        priority=0,
        attempt=1,
        error_count=0,
        posted_at=job.posted_at,
    )
    return JobRun(job, ctx, tasks.get(task_type))


async def run_attempt(tasks: TaskRegistry, run: JobRun) -> Outcome:
    """``run`` on an executor with the middleware a worker of ``tasks`` would run."""
    threads = Threads(on_exit=lambda: None)
    executor = Executor(threads, on_linger=lambda _run: None, middleware=tasks.worker_middleware())
    try:
        return await executor.run(run)
    finally:
        threads.close()
