"""The audit trail: one row per executed operator action (``skconsole audit``).

The row of an action that runs in batches is written with the batches, never
after them: the first batch's transaction inserts it (``details.state`` is
``"in_progress"``), each later batch's transaction adds its changes to the
count, and the end of the action writes the final details (or, best effort,
marks it interrupted). So the committed count always equals the committed
changes, whenever the process dies or the connection drops.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from skconsole.core.actor import Actor, Origin
from skconsole.core.errors import SkconsoleError
from skconsole.core.json_types import JsonObject
from skconsole.db.audit import AuditRow, insert
from skconsole.db.sqlfiles import query
from skconsole.ops.model import ActionResult, Selection
from skconsole.read.query import fetch

Conn = psycopg.Connection[Any]

#: ``details.state`` of an action still running (or whose process died mid-way).
IN_PROGRESS = "in_progress"
#: ``details.state`` of an action stopped by an error; ``details.interrupted`` says which.
INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class AuditEntry:
    audit_id: int
    at: datetime
    user: str
    host: str
    action: str
    selection: JsonObject
    count: int
    details: JsonObject | None
    #: the face that acted (None: a row written before it was recorded)
    origin: Origin | None = None

    @property
    def who(self) -> str:
        """Who acted and through what: "console (maria@vm)", "cli (root@vm)"; a row from
        before the origin was recorded: "root@vm"."""
        person = f"{self.user}@{self.host}"
        return person if self.origin is None else f"{self.origin.value} ({person})"

    def as_dict(self) -> JsonObject:
        return {
            "audit_id": self.audit_id,
            "at": self.at.isoformat(),
            "user": self.user,
            "host": self.host,
            "origin": None if self.origin is None else self.origin.value,
            "action": self.action,
            "selection": self.selection,
            "count": self.count,
            "details": self.details,
        }


def _entry(*, origin: str | None, **cols: Any) -> AuditEntry:
    return AuditEntry(origin=Origin.of(origin), **cols)


def _final_details(result: ActionResult) -> JsonObject:
    return {
        "requested": result.requested,
        "changed": result.changed,
        "skipped_changed_state": result.skipped_changed_state,
        **result.details,
    }


def _insert(
    conn: Conn,
    actor: Actor,
    selection: Selection,
    action: str,
    count: int,
    details: JsonObject,
) -> int:
    return insert(
        conn,
        AuditRow(
            actor.user,
            actor.host,
            action,
            dict(selection.as_dict()),
            count,
            dict(details),
            actor.origin,
        ),
    )


def record(conn: Conn, actor: Actor, selection: Selection, result: ActionResult) -> ActionResult:
    """Write the audit row of an action in one go; returns the result with its audit id.

    Only for an action that committed nothing before (or commits with this
    statement's transaction): one that runs in batches uses :class:`AuditTrail`.
    """
    audit_id = _insert(
        conn, actor, selection, result.action, result.changed, _final_details(result)
    )
    return replace(result, audit_id=audit_id)


class BatchTally:
    """What one batch changed; the batch adds to it before its transaction commits."""

    def __init__(self) -> None:
        self.changed = 0

    def add(self, changed: int) -> int:
        self.changed += changed
        return changed


class AuditLost(SkconsoleError):
    """The audit row of a running action is gone: its batch is rolled back, the action stops."""


class AuditTrail:
    """The audit row of one executing action, kept equal to what the action committed.

    ``batch(conn)`` is a batch's transaction: the batch's changes and the
    row's count commit together or not at all. ``committed`` is the count
    the database holds; ``audit_id`` is None until a batch has committed.
    """

    def __init__(
        self,
        actor: Actor,
        selection: Selection,
        action: str,
        requested: int,
        details: JsonObject | None = None,
    ) -> None:
        self.actor = actor
        self.selection = selection
        self.action = action
        self.requested = requested
        self.details = dict(details or {})
        self.audit_id: int | None = None
        self.committed = 0

    def _running(self, changed: int) -> JsonObject:
        return {
            "requested": self.requested,
            "changed": changed,
            **self.details,
            "state": IN_PROGRESS,
        }

    @contextlib.contextmanager
    def batch(self, conn: Conn) -> Iterator[BatchTally]:
        """One batch's transaction, with the audit row written in it before it commits."""
        tally = BatchTally()
        with conn.transaction():
            yield tally
            audit_id = self._write_batch(conn, tally.changed)
        # committed: only now do the id and the count hold
        self.audit_id = audit_id
        self.committed += tally.changed

    def _write_batch(self, conn: Conn, changed: int) -> int:
        if self.audit_id is None:
            return _insert(
                conn,
                self.actor,
                self.selection,
                self.action,
                changed,
                self._running(changed),
            )
        if changed:
            row = conn.execute(
                query("audit_progress"),
                {
                    "audit_id": self.audit_id,
                    "changed": changed,
                    "details": Jsonb(self._running(self.committed + changed)),
                },
            ).fetchone()
            if row is None:
                raise AuditLost(
                    f"audit row #{self.audit_id} of this {self.action} is gone: "
                    "stopped, the current batch is rolled back"
                )
        return self.audit_id

    def finish(self, conn: Conn, result: ActionResult) -> ActionResult:
        """Write the final details (the shape :func:`record` writes); the result with its id."""
        if self.audit_id is None:  # no batch ran: the row is written now
            return record(conn, self.actor, self.selection, result)
        row = conn.execute(
            query("audit_finish"),
            {"audit_id": self.audit_id, "details": Jsonb(_final_details(result))},
        ).fetchone()
        if row is None:
            raise AuditLost(f"audit row #{self.audit_id} of this {self.action} is gone")
        return replace(result, audit_id=self.audit_id)

    def interrupted(self, conn: Conn, error: BaseException) -> None:
        """Best effort: mark the row interrupted (its count is already exact).

        Nothing committed, no row: nothing to mark, as nothing changed.
        """
        if self.audit_id is None:
            return
        details: JsonObject = {
            "requested": self.requested,
            "changed": self.committed,
            "skipped_changed_state": 0,
            **self.details,
            "state": INTERRUPTED,
            "interrupted": f"{type(error).__name__}: {error}"[:500],
        }
        with contextlib.suppress(psycopg.Error):
            conn.execute(
                query("audit_finish"),
                {"audit_id": self.audit_id, "details": Jsonb(details)},
            )


def entries(conn: Conn, *, limit: int = 50, action: str | None = None) -> list[AuditEntry]:
    """The latest audit rows, newest first (none on a database without skconsole's objects)."""
    return fetch(conn, "audit_list", _entry, {"limit": limit, "action": action})


def entries_between(
    conn: Conn, *, since: datetime | None, until: datetime, limit: int = 1000
) -> list[AuditEntry]:
    """The audit rows from ``since`` (None: the first) until ``until``, newest first, at
    most ``limit`` (none on a database without skconsole's objects): the audit panel of a
    past minute, an incident bundle's."""
    return fetch(conn, "audit_window", _entry, {"since": since, "until": until, "limit": limit})
