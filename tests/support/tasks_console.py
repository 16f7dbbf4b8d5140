"""Handlers for the console tests: every failure is final at once (max_attempts=1),
so a burst run leaves a known set of failure groups behind."""

from __future__ import annotations

from typing import Any

from skconsole.core.errors import FatalTaskError
from skconsole.producer import Job
from skconsole.worker.registry import TaskOptions, TaskRegistry

tasks = TaskRegistry(TaskOptions(max_attempts=1, backoff=0.1, timeout=10.0))


class UpstreamTimeout(Exception):
    pass


@tasks.task("tui.timeout")
async def timeout(payload: Any) -> None:
    n = payload["n"]
    raise UpstreamTimeout(f"timeout after {n}s calling https://api.example.test/v2/orders/{n}")


@tasks.task("tui.declined")
async def declined(payload: Any) -> None:
    raise FatalTaskError(f"card declined for customer cus_{payload['n']:08d}")


@tasks.task("tui.ok")
async def ok(payload: Any) -> None:
    """Succeeds."""


def failed_and_ok(timeouts: int, declined: int, processed: int) -> list[Job]:
    """Jobs that a burst run leaves as two failure groups and some successes: ``timeouts``
    failed with a timeout, ``declined`` declined (fatal), ``processed`` processed."""
    return (
        [Job("tui.timeout", {"n": 30 + i}) for i in range(timeouts)]
        + [Job("tui.declined", {"n": 100 + i}) for i in range(declined)]
        + [Job("tui.ok", {"i": i}) for i in range(processed)]
    )
