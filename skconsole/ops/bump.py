"""Bump: change the priority of waiting jobs (a lower number runs first).

``by`` lowers the number (floor 0); ``to`` sets it. Only jobs that still wait
in the queue change; a job being claimed at that instant is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import psycopg

from skconsole.db.sqlfiles import load_sql
from skconsole.errors import ConfigError
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

ACTION = "bump"
WAITING = (1, 4, 5)
QUERY = "ops_select_queued"
MAX_PRIORITY = 2**31 - 1

Conn = psycopg.Connection[Any]


def check_change(by: int | None, to: int | None) -> None:
    """Exactly one of ``by`` (1 to 2**31-1) and ``to`` (0 to 2**31-1), whole numbers."""
    if (by is None) == (to is None):
        raise ConfigError("bump needs exactly one of --by N or --to N")
    for option, value in (("--by", by), ("--to", to)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigError(f"{option} must be a whole number, got {value!r}")
    if by is not None and not 1 <= by <= MAX_PRIORITY:
        raise ConfigError(f"--by must be between 1 and {MAX_PRIORITY}, got {by}")
    if to is not None and not 0 <= to <= MAX_PRIORITY:
        raise ConfigError(f"--to must be between 0 and {MAX_PRIORITY}, got {to}")


def _params(conn: Conn, selection: Selection) -> dict[str, Any]:
    return selection_params(
        conn, selection, effective_statuses(ACTION, selection, WAITING, WAITING)
    )


def preview(
    conn: Conn,
    selection: Selection,
    *,
    by: int | None = None,
    to: int | None = None,
    sample_size: int = SAMPLE_SIZE,
) -> Preview:
    """The waiting jobs a bump would reprioritise."""
    check_change(by, to)
    require_criteria(ACTION, selection)
    selection = freeze(conn, selection)
    return capture(
        conn,
        ACTION,
        selection,
        QUERY,
        _params(conn, selection),
        sample_size=sample_size,
        details={"by": by, "to": to},
    )


def execute(
    conn: Conn,
    selection: Selection,
    *,
    actor: Actor,
    ids: Sequence[UUID] | None = None,
    by: int | None = None,
    to: int | None = None,
    batch_size: int = BATCH_SIZE,
    on_progress: ProgressCallback | None = None,
) -> ActionResult:
    """Bump ``ids`` (from a preview) or else the selection's waiting jobs as of now.

    ``details["unchanged"]`` counts jobs that still matched but already had
    the priority asked for (at 0, or at ``to``).
    """
    check_change(by, to)
    require_criteria(ACTION, selection)
    selection = freeze(conn, selection)
    params = _params(conn, selection)
    todo = ids_or_capture(conn, ids, QUERY, params)
    unchanged = {"n": 0}

    def step(batch: list[UUID]) -> int:
        row = conn.execute(
            load_sql("queries/ops_bump"),
            {**params, "ids": batch, "by": by, "to": to},
            prepare=False,
        ).fetchone()
        assert row is not None
        matched, changed = int(row[0]), int(row[1])
        unchanged["n"] += matched - changed
        return changed

    def batches(progress: ProgressCallback) -> tuple[int, dict[str, Any]]:
        changed = in_batches(conn, todo, batch_size, step, progress)
        return changed, {"unchanged": unchanged["n"]}

    return run_action(
        conn, ACTION, selection, actor, len(todo), batches, on_progress, {"by": by, "to": to}
    )
