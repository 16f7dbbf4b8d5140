"""Cancel: waiting jobs out of the queue, their results 7 Cancelled.

Only jobs that still wait change: one a worker claims at that instant, or
has claimed since the preview, runs on and is reported as left alone.
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

ACTION = "cancel"
WAITING = (1, 4, 5)
QUERY = "ops_select_queued"

Conn = psycopg.Connection[Any]


def _params(conn: Conn, selection: Selection) -> dict[str, Any]:
    return selection_params(
        conn, selection, effective_statuses(ACTION, selection, WAITING, WAITING)
    )


def preview(conn: Conn, selection: Selection, *, sample_size: int = SAMPLE_SIZE) -> Preview:
    """The waiting jobs a cancel would remove from the queue."""
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
    batch_size: int = BATCH_SIZE,
    on_progress: ProgressCallback | None = None,
) -> ActionResult:
    """Cancel ``ids`` (from a preview) or else the selection's waiting jobs as of now."""
    require_criteria(ACTION, selection)
    selection = freeze(conn, selection)
    params = _params(conn, selection)
    todo = ids_or_capture(conn, ids, QUERY, params)

    def step(batch: list[UUID]) -> int:
        rows = conn.execute(
            load_sql("queries/ops_cancel"), {**params, "ids": batch}, prepare=False
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
    )
