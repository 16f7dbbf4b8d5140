"""Pipeline and ctx.post handlers for the fault tests (``--tasks tests.support.tasks_pipelines``).

Every handler logs each execution with its start and its end (``time.time()``),
the job id and the pid, and its attempt as the note, to
``$SKTEST_LOG_DIR/<pid>.runs`` (``tests.support.tasks_faults.execution``:
append-only, one file per process, flushed at once).

A three-stage pipeline ``p`` (``p.validate`` then ``p.charge`` then
``p.ship``): each stage awaits about ``STAGE_S`` (+-50%) and returns ``{"n": n, "stage": k}``,
the root's number carried on; the next stage gets it as its payload.

``g.parent`` posts ``CHILDREN`` jobs of type ``g.child`` with ``ctx.post``
(payload ``{"parent": its id, "i": i}``), then awaits about ``PARENT_S``
(+-50%) and returns; its log note also lists the ids of the children it posted
(``attempt=N children=ID,ID,ID``), so a test can tell which execution's
children were written. ``g.child`` returns at once.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from tests.support.tasks_faults import execution

tasks = TaskRegistry(TaskOptions(max_attempts=10, backoff=0.05, max_backoff=0.5, timeout=30.0))

STAGE_S = 0.03
PARENT_S = 0.3
CHILDREN = 3


def _jitter(seconds: float) -> float:
    """Between half and one and a half times ``seconds``: a worker's jobs do not all
    end at once, so a kill finds it running some of them."""
    return random.uniform(0.5, 1.5) * seconds


def _note(ctx: JobContext) -> str:
    return f"attempt={ctx.attempt}"


async def _stage(payload: Any, ctx: JobContext, stage: int) -> dict[str, int]:
    """Stage ``stage`` of the pipeline: it gets what the stage before returned (the root,
    stage 1, gets the root's payload), runs about ``STAGE_S`` and hands ``n`` on."""
    if stage > 1:
        assert payload["stage"] == stage - 1, payload
    with execution(ctx.task_id, _note(ctx)):
        await asyncio.sleep(_jitter(STAGE_S))
    return {"n": int(payload["n"]), "stage": stage}


@tasks.task("p.validate", then="p.charge")
async def validate(payload: Any, ctx: JobContext) -> dict[str, int]:
    return await _stage(payload, ctx, 1)


@tasks.task("p.charge", then="p.ship")
async def charge(payload: Any, ctx: JobContext) -> dict[str, int]:
    return await _stage(payload, ctx, 2)


@tasks.task("p.ship")
async def ship(payload: Any, ctx: JobContext) -> dict[str, int]:
    return await _stage(payload, ctx, 3)


@tasks.task("g.parent")
async def parent(payload: Any, ctx: JobContext) -> None:
    kids = [ctx.post("g.child", {"parent": str(ctx.task_id), "i": i}) for i in range(CHILDREN)]
    with execution(ctx.task_id, f"{_note(ctx)} children={','.join(map(str, kids))}"):
        await asyncio.sleep(_jitter(PARENT_S))


@tasks.task("g.child")
async def child(payload: Any, ctx: JobContext) -> None:
    with execution(ctx.task_id, _note(ctx)):
        pass
