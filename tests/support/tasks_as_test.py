"""Handlers for ``skconsole job ID --as-test``: a bug, and the same handler fixed.

The generated test names one registry (``--tasks tests.support.tasks_as_test:tasks``,
the buggy one, as a worker in production ran it); pointing it at ``:fixed`` stands for
the developer's fix. The bug: a name with a quote in it cannot be rendered.
"""

from __future__ import annotations

from typing import Any

from skconsole.worker.registry import TaskOptions, TaskRegistry

TYPE = "invoice.render"

tasks = TaskRegistry(TaskOptions(max_attempts=2, backoff=0.05, timeout=10.0))
fixed = TaskRegistry(TaskOptions(max_attempts=2, backoff=0.05, timeout=10.0))


class RenderError(Exception):
    pass


@tasks.task(TYPE)
def render(payload: Any) -> None:
    """Fails on a name with a double quote, its message holding the name as it is."""
    name = payload["customer"]["name"]
    if '"' in name:
        raise RenderError(f"cannot render the name {name}")


@fixed.task(TYPE)
def render_fixed(payload: Any) -> None:
    """Renders any name."""
    str(payload["customer"]["name"])
