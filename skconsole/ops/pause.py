"""Pause a task type: workers stop claiming it while it is paused.

The engine's claim skips paused types; jobs already running finish. The
switch lives in sk_task_types_t.tt_paused, which the console shows.
"""

from __future__ import annotations

from skconsole.ops.guard import TYPES
from skconsole.ops.spec import Needs, Wording
from skconsole.ops.type_actions import TypeAction

PAUSE = TypeAction(
    Wording("pause", "paused", "task type", outcome="{Done} {target}."),
    paused=True,
    write="ops_pause",
    warning="Workers stop claiming its jobs until it is resumed; jobs running now finish.",
    needs=Needs(update=(TYPES,), insert=(TYPES,)),
)
