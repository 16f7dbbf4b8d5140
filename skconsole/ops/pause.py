"""Pause and resume a task type: workers stop claiming it while it is paused.

The engine's claim skips paused types; jobs already running finish. The
switch lives in sk_task_types_t.tt_paused, which the console shows.
"""

from __future__ import annotations

from typing import Any

import psycopg

from skconsole.db.sqlfiles import load_sql
from skconsole.errors import ConfigError
from skconsole.ops.common import batch_transaction, run_action
from skconsole.ops.model import ActionResult, Actor, Preview, ProgressCallback, Selection

Conn = psycopg.Connection[Any]


def _task_type(action: str, selection: Selection) -> str:
    if (
        selection.task_type is None
        or selection.ids
        or selection.group
        or selection.statuses
        or (selection.older_than_seconds is not None)
    ):
        raise ConfigError(f"{action} applies to a task type: give --type T and nothing else")
    return selection.task_type


def _state(conn: Conn, task_type: str) -> tuple[bool, int, int]:
    row = conn.execute(
        load_sql("queries/ops_type_state"), {"task_type": task_type}, prepare=False
    ).fetchone()
    assert row is not None
    return bool(row[0]), int(row[1]), int(row[2])


def _preview(conn: Conn, action: str, selection: Selection, pause: bool) -> Preview:
    task_type = _task_type(action, selection)
    paused, waiting, running = _state(conn, task_type)
    details: dict[str, Any] = {
        "task_type": task_type,
        "paused": paused,
        "waiting": waiting,
        "in_flight": running,
    }
    return Preview(action, selection, int(paused != pause), (), None, details)


def _execute(conn: Conn, action: str, selection: Selection, actor: Actor) -> ActionResult:
    task_type = _task_type(action, selection)

    def flip(progress: ProgressCallback) -> tuple[int, dict[str, Any]]:
        # one batch: the flip and its audit row commit together
        with batch_transaction(conn, progress) as tally:
            rows = conn.execute(
                load_sql(f"queries/ops_{action}"), {"task_type": task_type}, prepare=False
            ).fetchall()
            tally.add(len(rows))
        progress(len(rows), 1)
        # a type already in the asked state is unchanged, not skipped
        return len(rows), {"task_type": task_type, "unchanged": 0 if rows else 1}

    return run_action(conn, action, selection, actor, 1, flip, None)


def preview(conn: Conn, selection: Selection) -> Preview:
    """Whether pausing the selection's type would change anything, and what it holds."""
    return _preview(conn, "pause", selection, True)


def execute(conn: Conn, selection: Selection, *, actor: Actor) -> ActionResult:
    """Pause the selection's task type (idempotent: already paused changes nothing)."""
    return _execute(conn, "pause", selection, actor)


def preview_resume(conn: Conn, selection: Selection) -> Preview:
    return _preview(conn, "resume", selection, False)


def execute_resume(conn: Conn, selection: Selection, *, actor: Actor) -> ActionResult:
    return _execute(conn, "resume", selection, actor)
