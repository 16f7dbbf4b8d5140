"""The audit row, written one way: who, what, on which selection, how many, the details.

Every writer of ``sk_audit_t`` builds its row here — the operator actions'
trail (:mod:`skconsole.ops.audit`) and the workers' retention rounds
(:mod:`skconsole.worker.retention`, whose statement writes the row with its
deletes) — so the columns, their bounds and their JSON are said once. It sits
below both: the workers may not import ops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from skconsole.core.actor import Origin
from skconsole.db.sqlfiles import query

#: the longest user or host name the audit table keeps
MAX_NAME = 250
#: who the workers' own housekeeping (retention rounds) is recorded as
SYSTEM = "system"


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One audit row; ``selection`` and ``details`` are the JSON documents it stores;
    ``origin``, the face that acted."""

    user: str
    host: str
    action: str
    selection: dict[str, object]
    count: int
    details: dict[str, object]
    origin: Origin = Origin.PYTHON

    def params(self) -> dict[str, object]:
        """The named parameters of ``audit_insert`` (and of any statement writing the row)."""
        return {
            "user": self.user[:MAX_NAME],
            "host": self.host[:MAX_NAME],
            "action": self.action,
            "selection": Jsonb(self.selection),
            "count": self.count,
            "details": Jsonb(self.details),
            "origin": self.origin.value,
        }


def insert(conn: psycopg.Connection[Any], row: AuditRow) -> int:
    """Insert the row (in the caller's transaction); its id."""
    with conn.cursor(row_factory=dict_row) as cur:
        got = cur.execute(query("audit_insert"), row.params()).fetchone()
    assert got is not None
    return int(got["audit_id"])
