"""Reap: re-post hung jobs on demand, as the in-flight read model judges them.

Uses the engine's own reaper statement (queries/reap.sql) and so the one
definition of "hung" (sk_inflight_tasks(): the owner's lease has lapsed, so
the owner has stopped the job or is dead); an operator cannot reap a job
whose worker is still alive, since it would then run twice at once. The
reason goes into the job's error, the reap counts as a failed attempt (past
max attempts the job is parked as 5 Faulted), and the verdict, status and
fencing token are re-checked in the statement, so a job that finished
meanwhile is left alone and no job is posted twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import psycopg

from skconsole.db.sqlfiles import load_sql
from skconsole.errors import ConfigError
from skconsole.ops.common import capture, freeze, ids_or_capture, in_batches, run_action
from skconsole.ops.model import (
    BATCH_SIZE,
    SAMPLE_SIZE,
    ActionResult,
    Actor,
    Preview,
    ProgressCallback,
    Selection,
)
from skconsole.stats import HungPolicy

ACTION = "reap"
QUERY = "ops_select_hung"
#: Max attempts for a type whose workers never published theirs (TaskOptions' default).
DEFAULT_MAX_ATTEMPTS = 5

Conn = psycopg.Connection[Any]


def _params(selection: Selection, policy: HungPolicy) -> dict[str, Any]:
    if selection.group is not None:
        raise ConfigError("reap selects hung jobs by --id, --type or --older-than, not --group")
    if selection.statuses and set(selection.statuses) != {2}:
        raise ConfigError("reap acts on jobs in status 2 Processing only")
    return {
        **policy.params(),
        "ids": list(selection.ids) or None,
        "task_type": selection.task_type,
        "cutoff": selection.cutoff,
    }


def preview(
    conn: Conn,
    selection: Selection | None = None,
    *,
    policy: HungPolicy | None = None,
    sample_size: int = SAMPLE_SIZE,
) -> Preview:
    """The hung jobs a reap would re-post (all of them for an empty selection)."""
    selection = freeze(conn, selection or Selection())
    params = _params(selection, policy or HungPolicy())
    return capture(conn, ACTION, selection, QUERY, params, sample_size=sample_size)


def execute(
    conn: Conn,
    selection: Selection | None = None,
    *,
    actor: Actor,
    ids: Sequence[UUID] | None = None,
    policy: HungPolicy | None = None,
    default_max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    batch_size: int = BATCH_SIZE,
    on_progress: ProgressCallback | None = None,
) -> ActionResult:
    """Reap ``ids`` (from a preview) or else the selection's hung jobs as of now."""
    selection = freeze(conn, selection or Selection())
    policy = policy or HungPolicy()
    params = _params(selection, policy)
    todo = ids_or_capture(conn, ids, QUERY, params)
    faulted = {"n": 0}

    def step(batch: list[UUID]) -> int:
        rows = conn.execute(
            load_sql("queries/reap"),
            {
                **policy.params(),
                "default_max_attempts": default_max_attempts,
                "ids": batch,
                "limit": len(batch),
                "exclude_owner": None,  # an operator may reap any worker's hung jobs
            },
            prepare=False,
        ).fetchall()
        faulted["n"] += sum(1 for r in rows if r[2] == 5)
        return len(rows)

    def batches(progress: ProgressCallback) -> tuple[int, dict[str, Any]]:
        changed = in_batches(conn, todo, batch_size, step, progress)
        return changed, {"parked_faulted": faulted["n"]}

    return run_action(conn, ACTION, selection, actor, len(todo), batches, on_progress)
