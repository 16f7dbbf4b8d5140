"""Queue-table health: dead rows, vacuum, the xmin horizon and the locks around the queue.

A delete-heavy queue lives or dies by vacuum. Every claim and finish leaves a
dead row; vacuum can only remove the dead rows no open snapshot may still
see, so one forgotten transaction (an ``idle in transaction`` psql, a
stuck prepared transaction, a replication slot) pins them all, the queue's
indexes fill with dead entries and claims slow down until it ends. This read
model shows what a person needs to find that culprit: per hot table its
dead rows and vacuum history, who holds the xmin horizon, who waits for a
lock on the queue and who blocks them, and a few sentences of advice.

It works without superuser. Without ``pg_read_all_stats`` PostgreSQL hides
other roles' sessions (query, state, times, client); :attr:`Health.hidden`
says so, and the horizon still shows their pids and transaction ages.

Like :mod:`skconsole.read`, it imports no UI library: the CLI and the console
both draw these dataclasses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg

from skconsole.core.durations import format_age
from skconsole.db.sqlfiles import active_mapping, query

Conn = psycopg.Connection[Any]

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

#: Advice thresholds (defaults of :func:`health`).
HORIZON_WARN_S = 300.0  # a transaction open this long while dead rows pile up
DEAD_SHARE_WARN = 0.2  # this share of a table's rows dead ...
DEAD_ROWS_WARN = 1_000  # ... and at least this many
LOCK_WAIT_WARN_S = 5.0  # a wait on a queue table this long

#: The server settings that decide when autovacuum runs; a table's reloptions override some.
SERVER_SETTINGS = (
    "autovacuum",
    "track_counts",
    "autovacuum_naptime",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_threshold",
    "autovacuum_analyze_scale_factor",
    "autovacuum_analyze_threshold",
    "autovacuum_vacuum_cost_delay",
    "autovacuum_vacuum_cost_limit",
    "vacuum_cost_delay",
    "vacuum_cost_limit",
)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _reloptions(options: Sequence[str] | None) -> dict[str, str]:
    """``["autovacuum_enabled=false", ...]`` as a mapping."""
    pairs = (o.partition("=") for o in options or ())
    return {name: value for name, _, value in pairs}


def _on(value: str | None) -> bool:
    return (value or "").strip().lower() in ("on", "true", "yes", "1")


# -- per table -------------------------------------------------------------------------
@dataclass(frozen=True)
class AutovacuumSettings:
    """The autovacuum settings in force for one table: its own storage options where set
    (named in ``from_table``), else the server's. ``enabled`` is false when autovacuum
    is off for the server, for the table, or when ``track_counts`` is off (without
    statistics autovacuum never knows a table needs it)."""

    enabled: bool
    vacuum_scale_factor: float
    vacuum_threshold: int
    analyze_scale_factor: float
    analyze_threshold: int
    vacuum_cost_delay_ms: float
    vacuum_cost_limit: int
    from_table: tuple[str, ...] = ()

    def vacuum_after(self, live_rows: int) -> int:
        """Dead rows that make autovacuum pick the table: threshold + scale factor * rows."""
        return self.vacuum_threshold + int(self.vacuum_scale_factor * live_rows)

    def as_dict(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "vacuum_scale_factor": self.vacuum_scale_factor,
            "vacuum_threshold": self.vacuum_threshold,
            "analyze_scale_factor": self.analyze_scale_factor,
            "analyze_threshold": self.analyze_threshold,
            "vacuum_cost_delay_ms": self.vacuum_cost_delay_ms,
            "vacuum_cost_limit": self.vacuum_cost_limit,
            "from_table": list(self.from_table),
        }


def autovacuum_settings(
    server: Mapping[str, str], reloptions: Sequence[str] | None
) -> AutovacuumSettings:
    """The settings in force for a table with these reloptions on a server with these settings."""
    table = _reloptions(reloptions)

    def pick(name: str) -> str:
        return table.get(name) or server.get(name, "0")

    delay = float(pick("autovacuum_vacuum_cost_delay"))
    limit = int(float(pick("autovacuum_vacuum_cost_limit")))
    enabled = (
        _on(server.get("autovacuum"))
        and _on(server.get("track_counts"))
        and _on(table.get("autovacuum_enabled", "on"))
    )
    return AutovacuumSettings(
        enabled=enabled,
        vacuum_scale_factor=float(pick("autovacuum_vacuum_scale_factor")),
        vacuum_threshold=int(pick("autovacuum_vacuum_threshold")),
        analyze_scale_factor=float(pick("autovacuum_analyze_scale_factor")),
        analyze_threshold=int(pick("autovacuum_analyze_threshold")),
        # -1: the plain vacuum_cost_* setting applies
        vacuum_cost_delay_ms=float(server.get("vacuum_cost_delay", "0")) if delay < 0 else delay,
        vacuum_cost_limit=int(server.get("vacuum_cost_limit", "200")) if limit < 0 else limit,
        from_table=tuple(sorted(n for n in table if n.startswith("autovacuum"))),
    )


@dataclass(frozen=True)
class TableHealth:
    """One hot table: its rows (statistics, live and dead), sizes, vacuum and analyze history,
    the vacuum running on it now (``vacuum_running``: "autovacuum" or "vacuum", None when
    none), and its autovacuum settings."""

    table: str
    live_rows: int
    dead_rows: int
    table_bytes: int
    index_bytes: int
    last_vacuum: datetime | None
    last_autovacuum: datetime | None
    last_analyze: datetime | None
    last_autoanalyze: datetime | None
    vacuum_running: str | None
    vacuum_phase: str | None
    autovacuum: AutovacuumSettings

    @property
    def dead_share(self) -> float:
        total = self.live_rows + self.dead_rows
        return self.dead_rows / total if total else 0.0

    @property
    def bloat_bytes_estimate(self) -> int:
        """An estimate: the dead share of the table's size. It counts space dead rows take
        now, not free space an earlier vacuum left inside the file (pgstattuple measures
        both, but needs an extension and reads the whole table)."""
        return int(self.dead_share * self.table_bytes)

    @property
    def last_vacuumed(self) -> datetime | None:
        times = [t for t in (self.last_vacuum, self.last_autovacuum) if t is not None]
        return max(times) if times else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "live_rows": self.live_rows,
            "dead_rows": self.dead_rows,
            "dead_share": round(self.dead_share, 4),
            "table_bytes": self.table_bytes,
            "index_bytes": self.index_bytes,
            "bloat_bytes_estimate": self.bloat_bytes_estimate,
            "last_vacuum": _iso(self.last_vacuum),
            "last_autovacuum": _iso(self.last_autovacuum),
            "last_analyze": _iso(self.last_analyze),
            "last_autoanalyze": _iso(self.last_autoanalyze),
            "vacuum_running": self.vacuum_running,
            "vacuum_phase": self.vacuum_phase,
            "autovacuum": self.autovacuum.as_dict(),
        }


# -- the xmin horizon --------------------------------------------------------------------
@dataclass(frozen=True)
class Session:
    """A backend holding a snapshot, a transaction id or a lock. ``visible`` is false for
    another role's session seen without pg_read_all_stats: then only pid, user,
    application and the transaction ages are known (the rest is None)."""

    pid: int
    user: str | None
    application: str | None
    client: str | None
    state: str | None
    backend_type: str | None
    backend_start: datetime | None
    xact_age_s: float | None
    xmin_age: int | None  # transactions since its snapshot's xmin
    xid_age: int | None  # transactions since its own transaction id
    query: str | None
    wait_event: str | None
    visible: bool = True

    @property
    def horizon_age(self) -> int | None:
        """How far back it holds the horizon, in transactions (None: it holds nothing)."""
        ages = [a for a in (self.xmin_age, self.xid_age) if a is not None]
        return max(ages) if ages else None

    def describe(self) -> str:
        """ "pid 4242, psql" (the application when known)."""
        return f"pid {self.pid}" + (f", {self.application}" if self.application else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "user": self.user,
            "application": self.application,
            "client": self.client,
            "state": self.state,
            "backend_type": self.backend_type,
            "backend_start": _iso(self.backend_start),
            "xact_age_s": self.xact_age_s,
            "xmin_age": self.xmin_age,
            "xid_age": self.xid_age,
            "horizon_age": self.horizon_age,
            "query": self.query,
            "wait_event": self.wait_event,
            "visible": self.visible,
        }


@dataclass(frozen=True)
class SlotHold:
    """A replication slot holding the horizon: ``xmin`` holds every table back,
    ``catalog_xmin`` (logical decoding) the system catalogs only."""

    name: str
    slot_type: str
    database: str | None
    active: bool
    active_pid: int | None
    xmin_age: int | None
    catalog_xmin_age: int | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "slot_type": self.slot_type,
            "database": self.database,
            "active": self.active,
            "active_pid": self.active_pid,
            "xmin_age": self.xmin_age,
            "catalog_xmin_age": self.catalog_xmin_age,
        }


@dataclass(frozen=True)
class PreparedXact:
    """A prepared (two-phase) transaction: it holds the horizon and its locks, with no session."""

    gid: str
    owner: str
    prepared_at: datetime
    age_s: float
    xid_age: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "gid": self.gid,
            "owner": self.owner,
            "prepared_at": self.prepared_at.isoformat(),
            "age_s": self.age_s,
            "xid_age": self.xid_age,
        }


@dataclass(frozen=True)
class Horizon:
    """Who holds back this database's xmin horizon (the oldest row version vacuum must
    keep), oldest first: sessions, replication slots (their ``xmin``), prepared
    transactions. ``age`` and ``age_s`` are those of the oldest holder, ``holder`` names
    it ("pid 4242, psql", "slot standby1", "prepared transaction 'g1'"); age_s is None
    when unknown (a slot, or a session whose times are hidden)."""

    age: int | None
    age_s: float | None
    holder: str | None
    sessions: list[Session]
    slots: list[SlotHold]
    prepared: list[PreparedXact]

    def as_dict(self) -> dict[str, Any]:
        return {
            "age": self.age,
            "age_s": self.age_s,
            "holder": self.holder,
            "sessions": [s.as_dict() for s in self.sessions],
            "slots": [s.as_dict() for s in self.slots],
            "prepared": [p.as_dict() for p in self.prepared],
        }


def _horizon(
    sessions: list[Session], slots: list[SlotHold], prepared: list[PreparedXact]
) -> Horizon:
    candidates: list[tuple[int, float | None, str]] = [
        (s.horizon_age, s.xact_age_s, s.describe()) for s in sessions if s.horizon_age is not None
    ]
    candidates += [(s.xmin_age, None, f"slot {s.name}") for s in slots if s.xmin_age is not None]
    candidates += [(p.xid_age, p.age_s, f"prepared transaction {p.gid!r}") for p in prepared]
    if not candidates:
        return Horizon(None, None, None, sessions, slots, prepared)
    age, age_s, holder = max(candidates, key=lambda c: c[0])
    return Horizon(age, age_s, holder, sessions, slots, prepared)


# -- locks -------------------------------------------------------------------------------
@dataclass(frozen=True)
class LockWait:
    """A session waiting for a lock on a hot table, and the pids that block it."""

    pid: int
    user: str | None
    application: str | None
    query: str | None
    waited_s: float | None
    lock_type: str  # relation, tuple, transactionid (a row lock: wait for its holder's xact)
    mode: str
    table: str
    blocked_by: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "user": self.user,
            "application": self.application,
            "query": self.query,
            "waited_s": self.waited_s,
            "lock_type": self.lock_type,
            "mode": self.mode,
            "table": self.table,
            "blocked_by": list(self.blocked_by),
        }


# -- advice ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Advice:
    """One finding in words. ``rule`` names the rule that made it (stable, for scripts)."""

    rule: str
    text: str

    def as_dict(self) -> dict[str, Any]:
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
    if not _on(server.get("autovacuum")) or not _on(server.get("track_counts")):
        setting = "autovacuum" if not _on(server.get("autovacuum")) else "track_counts"
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


# -- the whole -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Health:
    """Everything above, as of ``taken_at`` (the server's clock). ``blockers``: the sessions
    named in a lock wait's ``blocked_by``; ``hidden``: what this role cannot see;
    ``settings``: the server's autovacuum settings."""

    taken_at: datetime
    tables: list[TableHealth]
    horizon: Horizon
    lock_waits: list[LockWait]
    blockers: list[Session]
    advice: list[Advice]
    settings: dict[str, str]
    role: str
    hidden: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "taken_at": self.taken_at.isoformat(),
            "tables": [t.as_dict() for t in self.tables],
            "horizon": self.horizon.as_dict(),
            "lock_waits": [w.as_dict() for w in self.lock_waits],
            "blockers": [b.as_dict() for b in self.blockers],
            "advice": [a.as_dict() for a in self.advice],
            "settings": self.settings,
            "role": self.role,
            "hidden": self.hidden,
            "estimated": ["bloat_bytes_estimate"],
        }


def _session(r: Sequence[Any]) -> Session:
    visible = bool(r[12])
    return Session(
        pid=int(r[0]),
        user=r[1],
        application=r[2],
        client=r[3],
        state=r[4],
        backend_type=r[5],
        backend_start=r[6],
        xact_age_s=r[7],
        xmin_age=r[8],
        xid_age=r[9],
        query=r[10] if visible else None,  # not "<insufficient privilege>"
        wait_event=r[11],
        visible=visible,
    )


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


def regnames(tables: Sequence[str] = HOT_TABLES) -> list[str]:
    """The tables as to_regclass reads them (Stakhanovise.NET's mapping may rename them)."""
    return [active_mapping().regname(t) for t in tables]


def health(
    conn: Conn,
    *,
    tables: Sequence[str] = HOT_TABLES,
    limits: Thresholds | None = None,
) -> Health:
    """Read the queue tables' health, the xmin horizon and the lock waits, with advice."""
    now_row = conn.execute(query("db_now")).fetchone()
    assert now_row is not None
    now: datetime = now_row[0]
    role_row = conn.execute(query("health_privileges")).fetchone()
    assert role_row is not None
    role, superuser, read_all_stats = str(role_row[0]), bool(role_row[1]), bool(role_row[2])
    server = {
        str(n): str(v)
        for n, v in conn.execute(
            query("health_settings"), {"names": list(SERVER_SETTINGS)}, prepare=False
        ).fetchall()
    }
    table_rows = conn.execute(
        query("health_tables"), {"tables": regnames(tables)}, prepare=False
    ).fetchall()
    found = [
        TableHealth(
            table=r[0],
            live_rows=int(r[1]),
            dead_rows=int(r[2]),
            table_bytes=int(r[3]),
            index_bytes=int(r[4]),
            last_vacuum=r[5],
            last_autovacuum=r[6],
            last_analyze=r[7],
            last_autoanalyze=r[8],
            vacuum_running=(
                None
                if r[10] is None and r[11] is None
                else ("autovacuum" if r[11] == "autovacuum worker" else "vacuum")
            ),
            vacuum_phase=r[10],
            autovacuum=autovacuum_settings(server, r[9]),
        )
        for r in table_rows
    ]
    waits = [
        LockWait(
            pid=int(r[0]),
            user=r[1],
            application=r[2],
            query=r[3],
            waited_s=r[4],
            lock_type=r[5],
            mode=r[6],
            table=r[7],
            blocked_by=tuple(int(p) for p in r[8] or ()),
        )
        for r in conn.execute(
            query("health_lock_waits"),
            {"tables": regnames(tables), "query_cap": QUERY_CAP, "limit": LOCK_WAIT_LIMIT},
            prepare=False,
        ).fetchall()
    ]
    blocking = sorted({p for w in waits for p in w.blocked_by})
    listed = [
        _session(r)
        for r in conn.execute(
            query("health_sessions"),
            {"query_cap": QUERY_CAP, "limit": SESSION_LIMIT + len(blocking), "pids": blocking},
            prepare=False,
        ).fetchall()
    ]
    slots = [
        SlotHold(r[0], r[1], r[2], bool(r[3]), r[4], r[5], r[6])
        for r in conn.execute(query("health_slots"), prepare=False).fetchall()
    ]
    prepared = [
        PreparedXact(r[0], r[1], r[2], float(r[3]), int(r[4]))
        for r in conn.execute(query("health_prepared"), prepare=False).fetchall()
    ]
    # oldest first (the query lists the blockers first, so its limit never drops one)
    holding = sorted(
        (s for s in listed if s.horizon_age is not None or s.pid not in blocking),
        key=lambda s: (s.horizon_age is None, -(s.horizon_age or 0)),
    )
    horizon = _horizon(holding[:SESSION_LIMIT], slots, prepared)
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
        role=role,
        hidden=_hidden(superuser or read_all_stats, listed),
    )
