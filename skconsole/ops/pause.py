"""Pause a task type: workers stop claiming it while it is paused.

The engine's claim skips paused types; jobs already running finish. The
switch lives in sk_task_types_t.tt_paused, which the console shows.
"""

from __future__ import annotations

from skconsole.ops.guard import TYPES
from skconsole.ops.spec import TypeAction

PAUSE = TypeAction(
    name="pause",
    verb="pause",
    done="paused",
    paused=True,
    write="ops_pause",
    needs=((TYPES, "insert"), (TYPES, "update")),
)
