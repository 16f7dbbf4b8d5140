"""What the actions share: freezing and resolving a selection, previews, batches."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from skconsole.db.sqlfiles import load_sql
from skconsole.errors import ConfigError
from skconsole.ops.audit import record, record_interrupted
from skconsole.ops.guard import ensure_writable, write_errors
from skconsole.ops.model import (
    BATCH_SIZE,
    SAMPLE_SIZE,
    ActionResult,
    Actor,
    JobRow,
    Preview,
    ProgressCallback,
    Selection,
)

Conn = psycopg.Connection[Any]
_GROUP_ID = re.compile(r"[0-9a-f]{12}")


def db_now(conn: Conn) -> datetime:
    row = conn.execute(load_sql("queries/db_now")).fetchone()
    assert row is not None
    return row[0]  # type: ignore[no-any-return]


def freeze(conn: Conn, selection: Selection) -> Selection:
    """Fix the selection's age to an absolute instant on the server's clock."""
    if selection.older_than_seconds is None or selection.cutoff is not None:
        return selection
    return selection.frozen(db_now(conn))


def require_criteria(action: str, selection: Selection) -> None:
    if selection.is_empty:
        raise ConfigError(
            f"{action} needs a selection: --id, --group, --type, --status or --older-than"
        )


def signature_of(conn: Conn, group: str | None) -> str | None:
    """The signature a ``--group`` names: itself, or the one whose short id it is."""
    if group is None or not _GROUP_ID.fullmatch(group):
        return group
    rows = conn.execute(
        load_sql("queries/ops_resolve_group"), {"group_id": group}, prepare=False
    ).fetchall()
    return str(rows[0][0]) if len(rows) == 1 else group


def selection_params(conn: Conn, selection: Selection, statuses: Sequence[int]) -> dict[str, Any]:
    return {
        "ids": list(selection.ids) or None,
        "task_type": selection.task_type,
        "statuses": list(statuses),
        "signature": signature_of(conn, selection.group),
        "cutoff": selection.cutoff,
    }


def select_rows(conn: Conn, query: str, params: dict[str, Any], limit: int | None) -> list[JobRow]:
    rows = conn.execute(
        load_sql(f"queries/{query}"), {**params, "limit": limit}, prepare=False
    ).fetchall()
    return [JobRow(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), r[5], r[6]) for r in rows]


def capture(
    conn: Conn,
    action: str,
    selection: Selection,
    query: str,
    params: dict[str, Any],
    *,
    sample_size: int = SAMPLE_SIZE,
    details: dict[str, Any] | None = None,
) -> Preview:
    """A preview that captures every matching id (oldest activity first)."""
    rows = select_rows(conn, query, params, None)
    return Preview(
        action,
        selection,
        len(rows),
        tuple(rows[:sample_size]),
        tuple(r.task_id for r in rows),
        details or {},
    )


def ids_or_capture(
    conn: Conn, ids: Sequence[UUID] | None, query: str, params: dict[str, Any]
) -> list[UUID]:
    """The ids to act on: as given (from a preview), else the selection's now."""
    if ids is not None:
        return list(dict.fromkeys(ids))
    return [r.task_id for r in select_rows(conn, query, params, None)]


def run_action(
    conn: Conn,
    action: str,
    selection: Selection,
    actor: Actor,
    requested: int,
    batches: Callable[[ProgressCallback], tuple[int, dict[str, Any]]],
    on_progress: ProgressCallback | None,
    details: dict[str, Any] | None = None,
) -> ActionResult:
    """Check write access, run the batches, audit what changed (even if interrupted).

    ``batches`` does the work, reporting progress, and returns (changed, extra
    details); ``extra["unchanged"]`` counts jobs that matched but were already
    as asked.
    """
    ensure_writable(conn, action)
    done = {"changed": 0}

    def progress(changed_so_far: int, handled: int) -> None:
        done["changed"] = changed_so_far
        if on_progress is not None:
            on_progress(handled, requested)

    try:
        with write_errors(action):
            changed, extra = batches(progress)
    except BaseException as exc:
        partial = ActionResult(
            action, requested, done["changed"], 0, {**(details or {}), "batch_size": BATCH_SIZE}
        )
        if done["changed"]:
            record_interrupted(conn, actor, selection, partial, exc)
        raise
    # jobs that matched but already were as asked ("unchanged") were not left
    # alone for a changed state
    unchanged = int(extra.get("unchanged", 0) or 0)
    result = ActionResult(
        action,
        requested,
        changed,
        max(requested - changed - unchanged, 0),
        {**(details or {}), **extra},
    )
    with write_errors(action):
        return record(conn, actor, selection, result)


def in_batches(
    conn: Conn,
    ids: Sequence[UUID],
    batch_size: int,
    step: Callable[[list[UUID]], int],
    progress: ProgressCallback,
) -> int:
    """Apply ``step`` to the ids a batch at a time, each batch in its own transaction."""
    changed = 0
    for start in range(0, len(ids), batch_size):
        batch = list(ids[start : start + batch_size])
        with conn.transaction():
            changed += step(batch)
        progress(changed, start + len(batch))
    return changed
