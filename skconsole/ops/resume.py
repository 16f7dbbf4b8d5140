"""Resume a paused task type: workers claim it again (see :mod:`skconsole.ops.pause`)."""

from __future__ import annotations

from skconsole.ops.guard import TYPES
from skconsole.ops.spec import Needs, Wording
from skconsole.ops.type_actions import TypeAction

RESUME = TypeAction(
    Wording("resume", "resumed", "task type", outcome="{Done} {target}."),
    paused=False,
    write="ops_resume",
    warning="Workers claim its waiting jobs again at once.",
    needs=Needs(update=(TYPES,)),
)
