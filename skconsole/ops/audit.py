"""The audit trail: one row per executed operator action (``skconsole audit``)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from skconsole.db.sqlfiles import load_sql
from skconsole.ops.model import ActionResult, Actor, Selection

Conn = psycopg.Connection[Any]


@dataclass(frozen=True)
class AuditEntry:
    audit_id: int
    at: datetime
    user: str
    host: str
    action: str
    selection: dict[str, Any]
    count: int
    details: dict[str, Any] | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "audit_id": self.audit_id,
            "at": self.at.isoformat(),
            "user": self.user,
            "host": self.host,
            "action": self.action,
            "selection": self.selection,
            "count": self.count,
            "details": self.details,
        }


def record(conn: Conn, actor: Actor, selection: Selection, result: ActionResult) -> ActionResult:
    """Write the audit row of an executed action; returns the result with its audit id."""
    details = {
        "requested": result.requested,
        "changed": result.changed,
        "skipped_changed_state": result.skipped_changed_state,
        **result.details,
    }
    row = conn.execute(
        load_sql("queries/audit_insert"),
        {
            "user": actor.user[:250],
            "host": actor.host[:250],
            "action": result.action,
            "selection": Jsonb(selection.as_dict()),
            "count": result.changed,
            "details": Jsonb(details),
        },
    ).fetchone()
    assert row is not None
    return ActionResult(
        result.action,
        result.requested,
        result.changed,
        result.skipped_changed_state,
        result.details,
        int(row[0]),
    )


def record_interrupted(
    conn: Conn, actor: Actor, selection: Selection, result: ActionResult, error: BaseException
) -> None:
    """Best effort: audit what an interrupted action changed before it stopped."""
    failed = ActionResult(
        result.action,
        result.requested,
        result.changed,
        result.skipped_changed_state,
        {**result.details, "interrupted": f"{type(error).__name__}: {error}"[:500]},
    )
    with contextlib.suppress(psycopg.Error):
        record(conn, actor, selection, failed)


def entries(conn: Conn, *, limit: int = 50, action: str | None = None) -> list[AuditEntry]:
    """The latest audit rows, newest first."""
    rows = conn.execute(
        load_sql("queries/audit_list"), {"limit": limit, "action": action}, prepare=False
    ).fetchall()
    return [AuditEntry(int(r[0]), r[1], r[2], r[3], r[4], r[5], int(r[6]), r[7]) for r in rows]
