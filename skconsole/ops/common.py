"""What the actions share: freezing and resolving a selection, previews, batches."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

import psycopg
from psycopg import sql
from psycopg.rows import kwargs_row

from skconsole.core.actor import Actor
from skconsole.core.errors import BusyError, PoolerError
from skconsole.core.json_types import JsonObject
from skconsole.db.pooled import run_outside_transaction, through_transaction_pooler
from skconsole.ops.audit import AuditTrail, BatchTally
from skconsole.ops.guard import Privilege, ensure_writable, write_errors
from skconsole.ops.model import (
    ActionResult,
    JobRow,
    ProgressCallback,
    Selection,
    count_in,
)
from skconsole.read.find import payload_params
from skconsole.read.query import fetch

Conn = psycopg.Connection[Any]
_GROUP_ID = re.compile(r"[0-9a-f]{12}")


@contextmanager
def index_build_lock(conn: Conn, index: str, what: str) -> Iterator[None]:
    """Hold, for this session, the lock on building ``index`` (the two-key advisory lock of
    class sk_index_build_lock_class(), keyed by the name's hashtext()); refuse with a
    :class:`BusyError` naming ``what`` when another session holds it: its build is in
    progress, and dropping its invalid index would fail it. Through a transaction
    pooler there is no session to hold it: refused (PoolerError) in one line."""
    if through_transaction_pooler(conn):
        raise PoolerError(
            f"building {what} needs a session of its own (a lock held for the whole build), "
            "which a pooler in transaction mode does not give: run this command with a --dsn "
            "that reaches PostgreSQL directly"
        )
    params = {"index": index}
    (taken,) = fetch(conn, "index_build_lock", lambda taken: bool(taken), params)
    if not taken:
        raise BusyError(f"{what} is being built by another session now: wait for it to end")
    try:
        yield
    finally:
        fetch(conn, "index_build_unlock", lambda released: released, params)


def drop_index(conn: Conn, index: sql.Composable) -> None:
    """DROP INDEX CONCURRENTLY IF EXISTS ``index`` (a qualified identifier)."""
    run_outside_transaction(conn, sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(index))


def db_now(conn: Conn) -> datetime:
    (now,) = fetch(conn, "db_now", lambda now: now)
    assert isinstance(now, datetime)
    return now


def freeze(conn: Conn, selection: Selection) -> Selection:
    """Fix the selection's age to an absolute instant on the server's clock."""
    if selection.older_than_seconds is None or selection.cutoff is not None:
        return selection
    return selection.frozen(db_now(conn))


def signature_of(conn: Conn, group: str | None) -> str | None:
    """The signature a ``--group`` names: itself, or the one whose short id it is."""
    if group is None or not _GROUP_ID.fullmatch(group):
        return group
    found = fetch(conn, "ops_resolve_group", lambda signature: str(signature), {"group_id": group})
    return found[0] if len(found) == 1 else group


def selection_params(
    conn: Conn, selection: Selection, statuses: Sequence[int]
) -> dict[str, object]:
    return {
        "ids": list(selection.ids) or None,
        "task_type": selection.task_type,
        "statuses": list(statuses),
        "signature": signature_of(conn, selection.group),
        "cutoff": selection.cutoff,
        **payload_params(selection.where),
    }


def select_rows(
    conn: Conn, sql: LiteralString, params: dict[str, object], limit: int | None
) -> list[JobRow]:
    with conn.cursor(row_factory=kwargs_row(JobRow)) as cur:
        return cur.execute(sql, {**params, "limit": limit}, prepare=False).fetchall()


@dataclass(frozen=True, slots=True)
class Done:
    """What an action's batches did: how many they changed, and what the result and the
    audit row add to the action's details (JSON; ``extra["unchanged"]`` counts what
    matched but already was as asked)."""

    changed: int
    extra: JsonObject


class ActionProgress:
    """What an action's batches report to: its audit trail (each batch's transaction
    writes the audit row, see :func:`batch_transaction`) and the caller's callback."""

    def __init__(
        self, trail: AuditTrail, on_progress: ProgressCallback | None, requested: int
    ) -> None:
        self.trail = trail
        self.on_progress = on_progress
        self.requested = requested

    def report(self, changed_so_far: int, handled: int) -> None:
        if self.on_progress is not None:
            self.on_progress(handled, self.requested)


#: An action's work: its batches, each in its own transaction with the audit row.
Batches = Callable[[ActionProgress], Done]


@contextmanager
def batch_transaction(conn: Conn, progress: ActionProgress) -> Iterator[BatchTally]:
    """One batch's transaction; add what the batch changed to the tally it yields.

    The action's audit row is inserted (first batch) or its count raised
    (later ones) in this same transaction: the batch and its audit commit
    together or not at all.
    """
    with progress.trail.batch(conn) as tally:
        yield tally


def run_action(
    conn: Conn,
    action: str,
    needs: Sequence[Privilege],
    selection: Selection,
    actor: Actor,
    requested: int,
    batches: Batches,
    on_progress: ProgressCallback | None,
    details: JsonObject | None = None,
) -> ActionResult:
    """Check write access, run the batches, audit what changed as it commits.

    ``batches`` does the work, reporting progress, and returns (changed, extra
    details); ``extra["unchanged"]`` counts jobs that matched but were already
    as asked. It runs each batch in ``batch_transaction(conn, progress)`` (as
    ``in_batches`` does), which writes the audit row in the batch's own
    transaction; at the end the row gets its final details, or, when the
    batches raise, is marked interrupted (best effort: its count is exact
    either way). An action that ran no batch gets its row at the end.
    """
    ensure_writable(conn, action, needs)
    trail = AuditTrail(actor, selection, action, requested, details)
    try:
        with write_errors(action):
            done = batches(ActionProgress(trail, on_progress, requested))
    except BaseException as exc:
        trail.interrupted(conn, exc)
        raise
    # jobs that matched but already were as asked ("unchanged") were not left
    # alone for a changed state
    changed, extra = done.changed, done.extra
    unchanged = count_in(extra, "unchanged")
    result = ActionResult(
        action,
        requested,
        changed,
        max(requested - changed - unchanged, 0),
        {**(details or {}), **extra},
    )
    with write_errors(action):
        return trail.finish(conn, result)


def in_batches(
    conn: Conn,
    ids: Sequence[UUID],
    batch_size: int,
    step: Callable[[list[UUID]], int],
    progress: ActionProgress,
) -> int:
    """Apply ``step`` to the ids a batch at a time, each batch in its own transaction
    (with the action's audit row: see :func:`batch_transaction`)."""
    changed = 0
    for start in range(0, len(ids), batch_size):
        batch = list(ids[start : start + batch_size])
        with batch_transaction(conn, progress) as tally:
            tally.add(step(batch))
        changed += tally.changed
        progress.report(changed, start + len(batch))
    return changed
