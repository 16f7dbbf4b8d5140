"""Refusing writes clearly: read-only sessions, standbys and read-only roles.

Checked before an action changes anything, so a refusal never leaves half a
job done; the errors PostgreSQL itself raises are translated the same way, as
a second guard.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg

from skconsole.core.errors import ReadOnlyError
from skconsole.db.context import mapping_of
from skconsole.read.query import fetch

Conn = psycopg.Connection[Any]

RESULTS, QUEUE, TYPES, AUDIT = (
    "sk_task_results_t",
    "sk_tasks_queue_t",
    "sk_task_types_t",
    "sk_audit_t",
)

#: (table, privilege) an action needs, e.g. (QUEUE, "update").
Privilege = tuple[str, str]


@dataclass(frozen=True, slots=True)
class WriteAccess:
    """What the session may do, as ``ops_write_access`` reads it."""

    read_only: bool  # the session (or its role's default) is read-only
    standby: bool  # the server is a standby
    role: str
    missing: list[str]  # the privileges the action needs and the role lacks, in words


def ensure_writable(conn: Conn, action: str, privileges: Sequence[Privilege]) -> None:
    """Raise ReadOnlyError unless this session may carry out ``action`` (which needs
    ``privileges``, besides writing its audit row)."""
    # the audit row is inserted with the first batch and updated with each later one
    needs: Sequence[Privilege] = (*privileges, (AUDIT, "insert"), (AUDIT, "update"))
    (access,) = fetch(
        conn,
        "ops_write_access",
        WriteAccess,
        {
            "tables": [mapping_of(conn).regname(t) for t, _ in needs],
            "privileges": [p for _, p in needs],
        },
    )
    # a standby's sessions are read-only too: say the cause, not the symptom
    if access.standby:
        raise ReadOnlyError(
            f"refused: {action} changes the queue and this server is a read-only standby:"
            " run it against the primary (--dsn PRIMARY; --read-dsn STANDBY reads the standby)"
        )
    if access.read_only:
        raise ReadOnlyError(
            f"refused: {action} changes the queue and this session is read-only "
            "(--read-only, SKCONSOLE_READ_ONLY=1 or the role's default_transaction_read_only)"
        )
    if access.missing:
        raise ReadOnlyError(
            f"refused: database role {access.role!r} may only read the queue (no"
            f" {', '.join(access.missing)}): connect with a role that may write to run {action}"
        )


@contextmanager
def write_errors(action: str) -> Iterator[None]:
    """Turn PostgreSQL's own refusals into the same clear ReadOnlyError."""
    try:
        yield
    except psycopg.errors.ReadOnlySqlTransaction:
        raise ReadOnlyError(
            f"refused: {action} changes the queue and this session is read-only"
        ) from None
    except psycopg.errors.InsufficientPrivilege as exc:
        first = (str(exc).strip().splitlines() or ["permission denied"])[0]
        raise ReadOnlyError(
            f"refused: the database role may not {action} ({first}): "
            "connect with a role that may write"
        ) from None
