"""The advice rules of queue health: a few sentences on what the facts call for.

Each rule is a pure function over the read facts (tables, horizon, lock waits), so each
is tested on made-up data; :func:`advise` runs them all, most urgent first. ``rule`` on
each :class:`Advice` names the rule that spoke (stable, for scripts and ``skconsole check``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from skconsole.core.durations import format_age
from skconsole.core.json_types import JsonObject
from skconsole.read.health.horizon import Horizon, LockWait, Session
from skconsole.read.health.tables import TableHealth, is_on

#: Advice thresholds (defaults of :class:`Thresholds`).
HORIZON_WARN_S = 300.0  # a transaction open this long while dead rows pile up
DEAD_SHARE_WARN = 0.2  # this share of a table's rows dead ...
DEAD_ROWS_WARN = 1_000  # ... and at least this many
LOCK_WAIT_WARN_S = 5.0  # a wait on a queue table this long


@dataclass(frozen=True)
class Advice:
    """One finding in words. ``rule`` names the rule that made it (stable, for scripts)."""

    rule: str
    text: str

    def as_dict(self) -> JsonObject:
        return {"rule": self.rule, "text": self.text}


@dataclass(frozen=True)
class Thresholds:
    """When the advice rules speak up."""

    horizon_s: float = HORIZON_WARN_S
    dead_share: float = DEAD_SHARE_WARN
    dead_rows: int = DEAD_ROWS_WARN
    lock_wait_s: float = LOCK_WAIT_WARN_S


def _held_back(tables: Sequence[TableHealth]) -> str:
    """ "1,234,567 dead rows in sk_tasks_queue_t" for the tables with dead rows."""
    parts = [f"{t.dead_rows:,} dead rows in {t.table}" for t in tables if t.dead_rows]
    return ", ".join(parts) or "the dead rows it leaves"


def _horizon_advice(h: Horizon, tables: Sequence[TableHealth], limits: Thresholds) -> list[Advice]:
    advice = []
    pinned = _held_back(tables)
    for s in h.sessions:
        if s.horizon_age is None or s.xact_age_s is None or s.xact_age_s < limits.horizon_s:
            continue
        idle = " (idle in transaction)" if (s.state or "").startswith("idle in") else ""
        advice.append(
            Advice(
                "horizon_session",
                f"a transaction open for {format_age(s.xact_age_s)} ({s.describe()}){idle}"
                f" holds the xmin horizon: {pinned} cannot be vacuumed;"
                " claims slow down until it ends",
            )
        )
    for p in h.prepared:
        if p.age_s >= limits.horizon_s:
            advice.append(
                Advice(
                    "horizon_prepared",
                    f"prepared transaction {p.gid!r} (owner {p.owner}), prepared"
                    f" {format_age(p.age_s)} ago, holds the xmin horizon and its locks: {pinned}"
                    " cannot be vacuumed until COMMIT PREPARED or ROLLBACK PREPARED",
                )
            )
    for slot in h.slots:
        if slot.xmin_age is not None and not slot.active:
            advice.append(
                Advice(
                    "horizon_slot",
                    f"inactive replication slot {slot.name} holds the xmin horizon"
                    f" ({slot.xmin_age:,} transactions back): {pinned} cannot be vacuumed"
                    " until its standby reconnects or the slot is dropped",
                )
            )
    return advice


def _autovacuum_advice(server: Mapping[str, str], tables: Sequence[TableHealth]) -> list[Advice]:
    if not is_on(server.get("autovacuum")) or not is_on(server.get("track_counts")):
        setting = "autovacuum" if not is_on(server.get("autovacuum")) else "track_counts"
        return [
            Advice(
                "autovacuum_off",
                f"autovacuum is off for the whole server ({setting} = off): nothing"
                " removes the queue's dead rows unless you run VACUUM",
            )
        ]
    return [
        Advice(
            "autovacuum_off",
            f"autovacuum is off for {t.table} (autovacuum_enabled = false):"
            " its dead rows stay until you run VACUUM",
        )
        for t in tables
        if not t.autovacuum.enabled
    ]


def _dead_advice(tables: Sequence[TableHealth], limits: Thresholds, now: datetime) -> list[Advice]:
    advice = []
    for t in tables:
        if t.dead_rows < limits.dead_rows or t.dead_share < limits.dead_share:
            continue
        last = t.last_vacuumed
        when = (
            "never vacuumed"
            if last is None
            else f"last vacuumed {format_age((now - last).total_seconds())} ago"
        )
        running = f"; {t.vacuum_running} is running on it now" if t.vacuum_running else ""
        advice.append(
            Advice("dead_rows", f"{t.table}: {t.dead_share:.0%} dead rows, {when}{running}")
        )
    return advice


def _lock_advice(
    waits: Sequence[LockWait], blockers: Mapping[int, Session], limits: Thresholds
) -> list[Advice]:
    advice = []
    for w in waits:
        if w.waited_s is None or w.waited_s < limits.lock_wait_s:
            continue
        who = []
        for pid in w.blocked_by:
            b = blockers.get(pid)
            if b is None:
                who.append(f"pid {pid}")
                continue
            state = f", {b.state}" if b.state else ""
            age = f" for {format_age(b.xact_age_s)}" if b.xact_age_s is not None else ""
            who.append(f"{b.describe()}{state}{age}")
        app = f" ({w.application})" if w.application else ""
        advice.append(
            Advice(
                "lock_wait",
                f"pid {w.pid}{app} has waited {format_age(w.waited_s)} for a {w.mode}"
                f" ({w.lock_type}) on {w.table}, blocked by {'; '.join(who) or 'nobody now'}",
            )
        )
    return advice


def advise(
    tables: Sequence[TableHealth],
    horizon: Horizon,
    waits: Sequence[LockWait],
    blockers: Sequence[Session],
    server: Mapping[str, str],
    now: datetime,
    limits: Thresholds | None = None,
) -> list[Advice]:
    """The advice the facts call for, most urgent first: what holds the horizon, autovacuum
    off, tables mostly dead, long lock waits. Pure, so each rule is tested on made-up data."""
    limits = limits or Thresholds()
    return [
        *_horizon_advice(horizon, tables, limits),
        *_autovacuum_advice(server, tables),
        *_dead_advice(tables, limits, now),
        *_lock_advice(waits, {b.pid: b for b in blockers}, limits),
    ]
