"""Task handlers for the waves requeue tests: ``t.waves`` succeeds unless its payload says
``"fail": true`` (then it fails at once, for good: one attempt).

A worker subprocess loads them with ``--tasks tests.support.tasks_waves``.
"""

from __future__ import annotations

from typing import Any

from skconsole.worker.registry import TaskOptions, TaskRegistry

tasks = TaskRegistry(TaskOptions(max_attempts=1, timeout=10.0))


@tasks.task("t.waves")
def flaky(payload: dict[str, Any]) -> None:
    if payload.get("fail"):
        raise RuntimeError(f"partner refused n={payload.get('n')}")
