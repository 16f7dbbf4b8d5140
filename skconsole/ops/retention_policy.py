"""Retention: how long finished results are kept, per task type and as a default.

Policies live in ``sk_retention_t``; setting or clearing one is audited in the
same transaction. Workers purge what is past them
(:mod:`skconsole.worker.retention`). With no policy, nothing is purged
automatically: retention is off until someone sets it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.types.json import Jsonb

from skconsole.core.durations import format_limit
from skconsole.core.status import FINAL, JobStatus
from skconsole.db.sqlfiles import query

if TYPE_CHECKING:  # the engine reads policies; only the CLI sets them, as an Actor
    from skconsole.core.actor import Actor

Conn = psycopg.Connection[Any]

#: the key of the default policy (a task type is never empty)
DEFAULT = ""
#: results counted at most when a preview says how many a policy makes eligible
ELIGIBLE_CAP = 1_000_000


@dataclass(frozen=True)
class Policy:
    """Keep finished results of ``task_type`` (None: every type without a policy of
    its own) for ``older_than_s`` seconds after they finished."""

    task_type: str | None
    older_than_s: float
    include_faulted: bool = False
    set_at: datetime | None = None
    set_by: str | None = None

    @property
    def statuses(self) -> list[int]:
        """What the policy purges: 3, 6, 7, and 5 Faulted only when it says so."""
        kept = (*FINAL, JobStatus.FAULTED) if self.include_faulted else FINAL
        return sorted(int(s) for s in kept)

    def scope(self, policies: list[Policy]) -> dict[str, Any]:
        """Its statements' parameters: its type, or (the default) every type but
        those with a policy of their own."""
        typed = [p.task_type for p in policies if p.task_type is not None]
        return {
            "task_type": self.task_type,
            "except_types": typed if self.task_type is None else None,
            "statuses": self.statuses,
            "older_than_s": self.older_than_s,
        }

    def describe(self) -> str:
        scope = self.task_type if self.task_type is not None else "default (every other type)"
        faulted = ", 5 Faulted included" if self.include_faulted else ""
        return f"{scope}: finished results older than {format_limit(self.older_than_s)}{faulted}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "task_type": self.task_type,
            "default": self.task_type is None,
            "older_than_s": self.older_than_s,
            "include_faulted": self.include_faulted,
            "set_at": self.set_at.isoformat() if self.set_at else None,
            "set_by": self.set_by,
        }


def policies(conn: Conn) -> list[Policy]:
    return [
        Policy(r[0] or None, float(r[1]), bool(r[2]), r[3], r[4])
        for r in conn.execute(query("retention_policies")).fetchall()
    ]


def eligible(conn: Conn, policy: Policy) -> int:
    """How many results ``policy`` would purge now (counted up to ELIGIBLE_CAP)."""
    others = [p for p in policies(conn) if p.task_type != policy.task_type] + [policy]
    row = conn.execute(
        query("retention_eligible"), {**policy.scope(others), "cap": ELIGIBLE_CAP}
    ).fetchone()
    return int(row[0]) if row else 0


def set_policy(conn: Conn, policy: Policy, actor: Actor) -> Policy | None:
    """Store ``policy`` (replacing the type's) and its audit row, in one transaction;
    returns the policy it replaced."""
    with conn.transaction():
        row = conn.execute(
            query("retention_set"),
            {
                "task_type": policy.task_type or DEFAULT,
                "older_than_s": policy.older_than_s,
                "include_faulted": policy.include_faulted,
                "set_by": f"{actor.user}@{actor.host}"[:250],
            },
        ).fetchone()
        old = (
            Policy(policy.task_type, float(row[0]), bool(row[1]))
            if row and row[0] is not None
            else None
        )
        _audit(conn, actor, "retention set", policy, old)
    return old


def clear_policy(conn: Conn, task_type: str | None, actor: Actor) -> Policy | None:
    """Remove the type's policy (None: the default) and audit it; returns it (None: none)."""
    with conn.transaction():
        row = conn.execute(query("retention_clear"), {"task_type": task_type or DEFAULT}).fetchone()
        if row is None:
            return None
        old = Policy(task_type, float(row[0]), bool(row[1]))
        _audit(conn, actor, "retention clear", None, old)
    return old


def _audit(conn: Conn, actor: Actor, action: str, new: Policy | None, old: Policy | None) -> None:
    subject = new or old
    assert subject is not None
    conn.execute(
        query("audit_insert"),
        {
            "user": actor.user[:250],
            "host": actor.host[:250],
            "action": action,
            "selection": Jsonb(
                {"task_type": subject.task_type, "default": subject.task_type is None}
            ),
            "count": 1,
            "details": Jsonb(
                {
                    "old": old.as_dict() if old else None,
                    "new": new.as_dict() if new else None,
                }
            ),
        },
    )
