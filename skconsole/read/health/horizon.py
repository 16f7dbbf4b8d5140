"""Who holds the xmin horizon back, and who waits for a lock on the queue.

Vacuum can only remove the dead rows no open snapshot may still see: a session with an
old snapshot or transaction id, a replication slot or a prepared transaction pins them
all. These are the backends, slots and transactions a person looks at to find the
culprit, and the lock waits on the hot tables with the pids that block them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from skconsole.core.json_types import JsonObject, attributes
from skconsole.read.query import iso


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

    def as_dict(self) -> JsonObject:
        return {
            **attributes(
                self,
                "pid user application client state backend_type backend_start xact_age_s"
                " xmin_age xid_age horizon_age query wait_event visible",
            ),
            "backend_start": iso(self.backend_start),
        }


def session_row(*, query: str | None, visible: bool, **cols: Any) -> Session:
    """A row of health_sessions.sql: a hidden session's query reads
    "<insufficient privilege>", which is no query, so it is left out."""
    return Session(query=query if visible else None, visible=visible, **cols)


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

    def as_dict(self) -> JsonObject:
        return asdict(self)


@dataclass(frozen=True)
class PreparedXact:
    """A prepared (two-phase) transaction: it holds the horizon and its locks, with no session."""

    gid: str
    owner: str
    prepared_at: datetime
    age_s: float
    xid_age: int

    def as_dict(self) -> JsonObject:
        return {**asdict(self), "prepared_at": self.prepared_at.isoformat()}


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

    def as_dict(self) -> JsonObject:
        return {
            **attributes(self, "age age_s holder"),
            "sessions": [s.as_dict() for s in self.sessions],
            "slots": [s.as_dict() for s in self.slots],
            "prepared": [p.as_dict() for p in self.prepared],
        }


def horizon_of(
    sessions: list[Session], slots: list[SlotHold], prepared: list[PreparedXact]
) -> Horizon:
    """The horizon these hold: its age and holder are the oldest one's."""
    candidates: list[tuple[int, float | None, str]] = [
        (s.horizon_age, s.xact_age_s, s.describe()) for s in sessions if s.horizon_age is not None
    ]
    candidates += [(s.xmin_age, None, f"slot {s.name}") for s in slots if s.xmin_age is not None]
    candidates += [(p.xid_age, p.age_s, f"prepared transaction {p.gid!r}") for p in prepared]
    if not candidates:
        return Horizon(None, None, None, sessions, slots, prepared)
    age, age_s, holder = max(candidates, key=lambda c: c[0])
    return Horizon(age, age_s, holder, sessions, slots, prepared)


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

    def as_dict(self) -> JsonObject:
        return {**asdict(self), "blocked_by": list(self.blocked_by)}


def lock_wait_row(*, blocked_by: list[int] | None, **cols: Any) -> LockWait:
    """A row of health_lock_waits.sql (pg_blocking_pids' array kept as a tuple)."""
    return LockWait(blocked_by=tuple(blocked_by or ()), **cols)
