"""One reading of queue health: the tables, the horizon, the lock waits and the advice,
as of the server's clock, read by column name (each statement in sql/queries/health_*)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from skconsole.core.json_types import JsonObject
from skconsole.db.context import mapping_of
from skconsole.db.mapping import TableMapping
from skconsole.read.health.advice import Advice, Thresholds, advise
from skconsole.read.health.horizon import (
    Horizon,
    LockWait,
    PreparedXact,
    Session,
    SlotHold,
    horizon_of,
    lock_wait_row,
    session_row,
)
from skconsole.read.health.tables import SERVER_SETTINGS, TableHealth, table_row
from skconsole.read.query import Conn, fetch
from skconsole.read.replication import Replication, replication

#: The tables the engine writes all the time, in the order shown.
HOT_TABLES = (
    "sk_tasks_queue_t",
    "sk_task_results_t",
    "sk_metrics_t",
    "sk_task_execution_time_stats_t",
)
#: Statement text is cut to this many characters.
QUERY_CAP = 300
#: Sessions listed as (possible) horizon holders, oldest first.
SESSION_LIMIT = 20
LOCK_WAIT_LIMIT = 50


@dataclass(frozen=True)
class Health:
    """Everything above, as of ``taken_at`` (the server's clock). ``blockers``: the sessions
    named in a lock wait's ``blocked_by``; ``hidden``: what this role cannot see;
    ``settings``: the server's autovacuum settings; ``replication``: what a failover
    would lose, and the last one (:mod:`skconsole.read.replication`)."""

    taken_at: datetime
    tables: list[TableHealth]
    horizon: Horizon
    lock_waits: list[LockWait]
    blockers: list[Session]
    advice: list[Advice]
    settings: dict[str, str]
    role: str
    replication: Replication
    hidden: list[str] = field(default_factory=list)

    def as_dict(self) -> JsonObject:
        return {
            "taken_at": self.taken_at.isoformat(),
            "tables": [t.as_dict() for t in self.tables],
            "horizon": self.horizon.as_dict(),
            "lock_waits": [w.as_dict() for w in self.lock_waits],
            "blockers": [b.as_dict() for b in self.blockers],
            "advice": [a.as_dict() for a in self.advice],
            "settings": self.settings,
            "role": self.role,
            "replication": self.replication.as_dict(),
            "hidden": self.hidden,
            "estimated": ["bloat_bytes_estimate"],
        }


@dataclass(frozen=True)
class _Role:
    """What this role may see (health_privileges.sql)."""

    role: str
    superuser: bool
    read_all_stats: bool

    @property
    def reads_all_stats(self) -> bool:
        return self.superuser or self.read_all_stats


@dataclass(frozen=True)
class _Setting:
    name: str
    setting: str


def _now(*, now: datetime) -> datetime:
    return now


def _hidden(can_read_stats: bool, sessions: Sequence[Session]) -> list[str]:
    if can_read_stats:
        return []
    notes = [
        "without pg_read_all_stats, other roles' sessions show only pid, user, application"
        " and transaction ages: their query, state, start times, client and waits are hidden",
        "a vacuum run by another role may show no phase",
    ]
    others = sum(1 for s in sessions if not s.visible)
    if others:
        notes.append(f"{others} session(s) listed here belong to other roles (details hidden)")
    return notes


def regnames(mapping: TableMapping, tables: Sequence[str] = HOT_TABLES) -> list[str]:
    """The tables as to_regclass reads them (Stakhanovise.NET's mapping may rename them)."""
    return [mapping.regname(t) for t in tables]


def health(
    conn: Conn,
    *,
    tables: Sequence[str] = HOT_TABLES,
    limits: Thresholds | None = None,
) -> Health:
    """Read the queue tables' health, the xmin horizon and the lock waits, with advice."""
    (now,) = fetch(conn, "db_now", _now)
    (role,) = fetch(conn, "health_privileges", _Role)
    server = {
        s.name: s.setting
        for s in fetch(conn, "health_settings", _Setting, {"names": list(SERVER_SETTINGS)})
    }
    found = fetch(
        conn, "health_tables", table_row(server), {"tables": regnames(mapping_of(conn), tables)}
    )
    waits = fetch(
        conn,
        "health_lock_waits",
        lock_wait_row,
        {
            "tables": regnames(mapping_of(conn), tables),
            "query_cap": QUERY_CAP,
            "limit": LOCK_WAIT_LIMIT,
        },
    )
    blocking = sorted({p for w in waits for p in w.blocked_by})
    listed = fetch(
        conn,
        "health_sessions",
        session_row,
        {"query_cap": QUERY_CAP, "limit": SESSION_LIMIT + len(blocking), "pids": blocking},
    )
    slots = fetch(conn, "health_slots", SlotHold)
    prepared = fetch(conn, "health_prepared", PreparedXact)
    # oldest first (the query lists the blockers first, so its limit never drops one)
    holding = sorted(
        (s for s in listed if s.horizon_age is not None or s.pid not in blocking),
        key=lambda s: (s.horizon_age is None, -(s.horizon_age or 0)),
    )
    horizon = horizon_of(holding[:SESSION_LIMIT], slots, prepared)
    blockers = [s for s in listed if s.pid in blocking]
    limits = limits or Thresholds()
    return Health(
        taken_at=now,
        tables=found,
        horizon=horizon,
        lock_waits=waits,
        blockers=blockers,
        advice=advise(found, horizon, waits, blockers, server, now, limits),
        settings=server,
        role=role.role,
        replication=replication(conn),
        hidden=_hidden(role.reads_all_stats, listed),
    )
