"""Requeue: failed or cancelled jobs back to the queue, ready now, status 1.

4 Error jobs (still queued, backing off) are made ready at once; 5 Faulted,
6 Fatal and 7 Cancelled ones are posted again from their result rows. The
state is re-checked in the statement itself: a job that a worker finished or
claimed meanwhile is left alone, never resurrected or posted twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import psycopg

from skconsole.db.sqlfiles import load_sql
from skconsole.ops.common import (
    capture,
    freeze,
    ids_or_capture,
    in_batches,
    require_criteria,
    run_action,
    selection_params,
)
from skconsole.ops.model import (
    BATCH_SIZE,
    SAMPLE_SIZE,
    ActionResult,
    Actor,
    Preview,
    ProgressCallback,
    Selection,
    effective_statuses,
)

ACTION = "requeue"
ALLOWED = (4, 5, 6, 7)
DEFAULT = (4, 5, 6)
QUERY = "ops_select_results"

Conn = psycopg.Connection[Any]


def _params(conn: Conn, selection: Selection) -> dict[str, Any]:
    return selection_params(
        conn, selection, effective_statuses(ACTION, selection, ALLOWED, DEFAULT)
    )


def preview(conn: Conn, selection: Selection, *, sample_size: int = SAMPLE_SIZE) -> Preview:
    """The failed (4, 5, 6; 7 when selected) jobs a requeue would post again."""
    require_criteria(ACTION, selection)
    selection = freeze(conn, selection)
    return capture(
        conn, ACTION, selection, QUERY, _params(conn, selection), sample_size=sample_size
    )


def execute(
    conn: Conn,
    selection: Selection,
    *,
    actor: Actor,
    ids: Sequence[UUID] | None = None,
    reset_errors: bool = False,
    batch_size: int = BATCH_SIZE,
    on_progress: ProgressCallback | None = None,
) -> ActionResult:
    """Requeue ``ids`` (from a preview) or else the selection's jobs as of now."""
    require_criteria(ACTION, selection)
    selection = freeze(conn, selection)
    params = _params(conn, selection)
    todo = ids_or_capture(conn, ids, QUERY, params)

    def step(batch: list[UUID]) -> int:
        rows = conn.execute(
            load_sql("queries/ops_requeue"),
            {**params, "ids": batch, "reset_errors": reset_errors},
            prepare=False,
        ).fetchall()
        return len(rows)

    return run_action(
        conn,
        ACTION,
        selection,
        actor,
        len(todo),
        lambda progress: (in_batches(conn, todo, batch_size, step, progress), {}),
        on_progress,
        {"reset_errors": reset_errors},
    )
