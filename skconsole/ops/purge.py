"""Purge: delete old final results (3 Processed, 6 Fatal, 7 Cancelled; 5
Faulted only when asked), a batch per transaction so no lock is held long.

Never a waiting or in-flight job: the statuses and the absence of a queue row
are re-checked in the DELETE itself, so a job re-posted meanwhile survives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import psycopg

from skconsole.db.sqlfiles import load_sql
from skconsole.errors import ConfigError
from skconsole.ops.common import (
    batch_transaction,
    freeze,
    in_batches,
    run_action,
    select_rows,
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

ACTION = "purge"
FINAL = (3, 6, 7)
FAULTED = 5
QUERY = "ops_select_results"
#: A preview captures the ids of at most this many results; beyond, execute
#: re-evaluates the frozen selection (same effect, no huge id list in memory).
CAPTURE_LIMIT = 50_000

Conn = psycopg.Connection[Any]


def _statuses(selection: Selection, include_faulted: bool) -> tuple[int, ...]:
    allowed = (*FINAL, FAULTED) if include_faulted else FINAL
    if FAULTED in selection.statuses and not include_faulted:
        raise ConfigError("Faulted (5) results are purged only when asked: add --include-faulted")
    return effective_statuses(ACTION, selection, allowed, tuple(sorted(allowed)))


def _check(selection: Selection) -> None:
    if selection.older_than_seconds is None and selection.cutoff is None and not selection.ids:
        raise ConfigError("purge needs --older-than (e.g. --older-than 30d) or --id")


def _params(conn: Conn, selection: Selection, include_faulted: bool) -> dict[str, Any]:
    return selection_params(conn, selection, _statuses(selection, include_faulted))


def _count(conn: Conn, params: dict[str, Any]) -> int:
    row = conn.execute(load_sql("queries/ops_count_results"), params, prepare=False).fetchone()
    return int(row[0]) if row else 0


def preview(
    conn: Conn,
    selection: Selection,
    *,
    include_faulted: bool = False,
    sample_size: int = SAMPLE_SIZE,
) -> Preview:
    """The final results a purge would delete (ids captured up to CAPTURE_LIMIT)."""
    _check(selection)
    selection = freeze(conn, selection)
    params = _params(conn, selection, include_faulted)
    count = _count(conn, params)
    details = {"include_faulted": include_faulted}
    if count <= CAPTURE_LIMIT:
        rows = select_rows(conn, QUERY, params, None)
        ids: tuple[UUID, ...] | None = tuple(r.task_id for r in rows)
        return Preview(ACTION, selection, len(rows), tuple(rows[:sample_size]), ids, details)
    sample = select_rows(conn, QUERY, params, sample_size)
    return Preview(ACTION, selection, count, tuple(sample), None, details)


def execute(
    conn: Conn,
    selection: Selection,
    *,
    actor: Actor,
    ids: Sequence[UUID] | None = None,
    include_faulted: bool = False,
    batch_size: int = BATCH_SIZE,
    on_progress: ProgressCallback | None = None,
) -> ActionResult:
    """Delete ``ids`` (from a preview) or else the frozen selection's results, in batches."""
    _check(selection)
    selection = freeze(conn, selection)
    params = _params(conn, selection, include_faulted)
    details = {"include_faulted": include_faulted}

    def step(batch: list[UUID]) -> int:
        rows = conn.execute(
            load_sql("queries/ops_purge"),
            {**params, "ids": batch, "batch": len(batch)},
            prepare=False,
        ).fetchall()
        return len(rows)

    if ids is not None:
        todo = list(dict.fromkeys(ids))
        return run_action(
            conn,
            ACTION,
            selection,
            actor,
            len(todo),
            lambda progress: (in_batches(conn, todo, batch_size, step, progress), {}),
            on_progress,
            details,
        )

    total = _count(conn, params)

    def by_selection(progress: ProgressCallback) -> tuple[int, dict[str, Any]]:
        deleted = 0
        while True:
            with batch_transaction(conn, progress) as tally:
                n = tally.add(
                    len(
                        conn.execute(
                            load_sql("queries/ops_purge"),
                            {**params, "batch": batch_size},
                            prepare=False,
                        ).fetchall()
                    )
                )
            deleted += n
            progress(deleted, min(deleted, total))
            if n < batch_size:
                return deleted, {}

    return run_action(conn, ACTION, selection, actor, total, by_selection, on_progress, details)
