"""Resume a paused task type: workers claim it again (see :mod:`skconsole.ops.pause`)."""

from __future__ import annotations

from typing import Any

import psycopg

from skconsole.ops import pause
from skconsole.ops.model import ActionResult, Actor, Preview, Selection

Conn = psycopg.Connection[Any]


def preview(conn: Conn, selection: Selection) -> Preview:
    """Whether resuming the selection's type would change anything, and what it holds."""
    return pause.preview_resume(conn, selection)


def execute(conn: Conn, selection: Selection, *, actor: Actor) -> ActionResult:
    """Resume the selection's task type (idempotent: a running type changes nothing)."""
    return pause.execute_resume(conn, selection, actor=actor)
