"""Resume a paused task type: workers claim it again (see :mod:`skconsole.ops.pause`)."""

from __future__ import annotations

from skconsole.ops.guard import TYPES
from skconsole.ops.spec import TypeAction

RESUME = TypeAction(
    name="resume",
    verb="resume",
    done="resumed",
    paused=False,
    write="ops_resume",
    needs=((TYPES, "update"),),
)
