"""Periodic task types for the schedule fault tests (``--tasks tests.support.tasks_schedules``).

Each test runs its workers with ``--types`` naming the one periodic type it
is about, so a worker publishes and ticks only that type's schedule. Every
handler logs each execution with its start and its end (``time.time()``), the
job id and the pid, and its attempt as the note, to ``$SKTEST_LOG_DIR/<pid>.runs``
(``tests.support.tasks_faults.execution``: append-only, one file per process,
flushed at once), then sleeps ``RUN_S`` on the loop.

================  ========  ========  =====================================
type              every     missed    test
================  ========  ========  =====================================
s.every2          2 s       once      three workers, one job per tick
s.every1          1 s       once      a worker SIGKILLed at a tick
s.once1           1 s       once      downtime, then one catch-up job
s.skip2           2 s       skip      downtime, no catch-up job
s.skip1h          1 h       skip      a long downtime (simulated in SQL)
s.pause3          3 s       once      paused, then resumed
s.lock2           2 s       once      the schedule's row locked at a tick
s.kill1           1 s       once      its worker SIGKILLed while a tick runs
s.long1           1 s       once      jobs of 3 s: a worker stopping (SIGTERM)
================  ========  ========  =====================================

A schedule's payload ``{"s": seconds}`` makes its jobs run that long instead.
"""

from __future__ import annotations

import asyncio
from typing import Any

from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from tests.support.tasks_faults import execution

tasks = TaskRegistry(TaskOptions(max_attempts=10, backoff=0.05, max_backoff=0.5, timeout=30.0))

#: how long each tick's job runs
RUN_S = 0.05

#: type -> (every=, missed=, payload=)
SCHEDULES: dict[str, tuple[str, str, Any]] = {
    "s.every2": ("2s", "once", None),
    "s.every1": ("1s", "once", None),
    "s.once1": ("1s", "once", None),
    "s.skip2": ("2s", "skip", None),
    "s.skip1h": ("1h", "skip", None),
    "s.pause3": ("3s", "once", None),
    "s.lock2": ("2s", "once", None),
    "s.kill1": ("1s", "once", {"s": 0.5}),
    "s.long1": ("1s", "once", {"s": 3.0}),
}


async def _tick(payload: Any, ctx: JobContext) -> None:
    with execution(ctx.task_id, f"attempt={ctx.attempt}"):
        await asyncio.sleep(float(payload["s"]) if payload else RUN_S)


for _name, (_every, _missed, _payload) in SCHEDULES.items():
    tasks.task(_name, every=_every, missed=_missed, payload=_payload)(_tick)
