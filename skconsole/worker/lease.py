"""The worker's lease: renewed every second on a connection of its own.

Safety rests on two clocks measuring the same interval. The worker notes, on
its monotonic clock, the moment it *sends* each renewal; the database stamps
the renewal with ``now()``, which is later. If no renewal has come back for
``lease - margin`` seconds, the worker stops its own jobs (self-fencing,
:meth:`LeaseKeeper.watch`). Other workers reap its jobs only once ``lease +
margin`` seconds have passed since the last renewal they can see
(``sk_worker_liveness()``), so the stopped execution and the next one are at
least ``2 x margin`` apart, whatever cut the worker off: a crash, a
partition, a frozen connection, a lock held on its row.

A failover can make the database forget the last renewals, and the claims
made with them (asynchronous replication: the promoted standby lacks the old
primary's last commits). Each renewal therefore also returns the timeline the
database is on; one renewal on a new timeline counts only once the worker
has checked what it runs against what the database says it owns and stopped
what the database lost (``on_failover``). Until then its lease ages as if the
renewal had failed; claims are held on a new timeline for longer than any
lease (``sk_timeline_state()``), so no lost claim is handed out again before
its execution has stopped.

The control connection also holds a session advisory lock (two-key form,
class ``sk_lock_class()``) while it lives. It tells the console whether the
worker's connection is up; it plays no part in deciding that a job is hung,
because a free lock does not mean a dead process (a blip frees it too) and a
held one does not mean a live one (a partitioned worker's session lingers on
the server). Through a pooler in transaction mode the worker has no session
of its own to hold it in: it registers without one (``session_lock``), and its
liveness is its lease alone.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from typing import Any, TypedDict

import psycopg

from skconsole.db.pooled import through_transaction_pooler
from skconsole.db.rows import aone, avalue
from skconsole.db.schema import LOCK_CLASS
from skconsole.db.sqlfiles import query
from skconsole.worker.links import Link, LinkLost, Throttle

log = logging.getLogger("skconsole.worker")


@dataclass
class Lease:
    """The worker's own view of its lease, on its monotonic clock."""

    length: float
    margin: float
    renewed_at: float = float("-inf")  # when the last successful renewal was *sent*

    def age(self, now: float | None = None) -> float:
        return (time.monotonic() if now is None else now) - self.renewed_at

    def renewed(self, sent_at: float) -> None:
        self.renewed_at = max(self.renewed_at, sent_at)

    @property
    def fence_after(self) -> float:
        """Age at which the worker must have stopped its jobs."""
        return self.length - self.margin

    @property
    def expired(self) -> bool:
        return self.age() > self.fence_after

    @property
    def good_for_claims(self) -> bool:
        """Fresh enough to start new jobs: half the time before fencing remains."""
        return self.age() < self.fence_after / 2

    @property
    def deadline(self) -> float:
        """Monotonic time by which a fenced worker must have stopped every job."""
        return self.renewed_at + self.length


@dataclass(frozen=True)
class Renewal:
    """What a registration or a renewal returns (register_worker.sql, heartbeat.sql):
    the liveness lock's key, the timeline the database is on (None: unknown) and
    until when claims are held on it."""

    lock_key: int
    timeline: int | None
    held_until: datetime | None


@dataclass(frozen=True)
class Failover:
    """The database is on another timeline than this worker's last renewal was made on."""

    previous: int
    timeline: int
    held_until: datetime | None


@dataclass(eq=False)
class LeaseKeeper:
    """Registers the worker, renews its lease, holds its liveness lock, and
    calls ``on_expired`` / ``on_renewed`` when the lease lapses and comes back,
    ``on_failover`` (on the control connection) before a renewal on a new timeline
    counts: if it raises, the renewal does not count and the next one tries again."""

    link: Link
    lease: Lease
    _: KW_ONLY
    worker_id: uuid.UUID
    registration: Registration
    interval: float
    on_expired: Callable[[], None]
    on_renewed: Callable[[], None]
    on_failover: Callable[[psycopg.AsyncConnection[Any], Failover], Awaitable[None]]
    lock_key: int | None = field(default=None, init=False)
    #: the timeline of the last renewal that counted (None: not known)
    timeline: int | None = field(default=None, init=False)
    expired: bool = field(default=False, init=False)
    renewals: int = field(default=0, init=False)
    _lock_held_by: psycopg.AsyncConnection[Any] | None = field(default=None, init=False)
    _throttle: Throttle = field(default_factory=Throttle, init=False)

    async def register(self) -> None:
        """First registration (also the first renewal); retried until it succeeds."""
        sent = time.monotonic()
        renewal = await self.link.run(self._register)
        self.timeline = renewal.timeline
        self.lease.renewed(sent)
        await self.link.run(self._take_lock)

    async def _register(self, conn: psycopg.AsyncConnection[Any]) -> Renewal:
        params = {**self.registration, "session_lock": not through_transaction_pooler(conn)}
        renewal = await aone(conn, query("register_worker"), Renewal, params)
        assert renewal is not None
        self.lock_key = renewal.lock_key
        return renewal

    async def _take_lock(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Take the liveness lock on this connection if it does not hold it yet. It may
        fail while an earlier session of ours still holds it: tried again each round.
        Through a transaction pooler there is no session of ours to hold it in."""
        if self._lock_held_by is conn or through_transaction_pooler(conn):
            return
        taken = await avalue(
            conn, query("take_worker_lock"), {"lock_class": LOCK_CLASS, "lock_key": self.lock_key}
        )
        if taken:
            self._lock_held_by = conn

    async def _renew(self, conn: psycopg.AsyncConnection[Any]) -> bool:
        params = {"worker_id": self.worker_id, "hold_s": self.lease.length + self.lease.margin}
        renewal = await aone(conn, query("heartbeat"), Renewal, params)
        if renewal is None:  # the registration was deleted by hand, or lost: register again
            log.warning("worker %s was no longer registered; registering again", self.worker_id)
            renewal = await self._register(conn)
        known = self.timeline
        if renewal.timeline is not None and known is not None and renewal.timeline != known:
            await self.on_failover(conn, Failover(known, renewal.timeline, renewal.held_until))
        if renewal.timeline is not None:
            self.timeline = renewal.timeline
        await self._take_lock(conn)
        return True

    async def renew_once(self) -> bool:
        sent = time.monotonic()
        try:
            await self.link.run(self._renew, retry=False)
        except LinkLost as exc:
            self._throttle.warning("renew", "lease not renewed: %s", exc)
            return False
        except psycopg.Error as exc:  # a lock or statement timeout: not renewed, try again
            self._throttle.warning("renew", "lease not renewed: %s", str(exc).strip())
            return False
        self.lease.renewed(sent)
        self.renewals += 1
        return True

    async def renew_forever(self) -> None:
        while True:
            started = time.monotonic()
            await self.renew_once()
            await asyncio.sleep(max(0.0, self.interval - (time.monotonic() - started)))

    async def watch(self, tick: float = 0.1) -> None:
        """Fence the moment the lease is too old; lift the fence once it is renewed."""
        while True:
            if self.lease.expired and not self.expired:
                self.expired = True
                self.on_expired()
            elif self.expired and not self.lease.expired:
                self.expired = False
                self.on_renewed()
            await asyncio.sleep(tick)


class Registration(TypedDict):
    """register_worker.sql's parameters: who the worker is, what it runs, its lease."""

    schedules: list[str]
    worker_id: uuid.UUID
    process_id: str
    host: str
    pid: int
    concurrency: int
    types: list[str]
    lease_s: float
    margin_s: float
    app_version: str | None


def registration(
    worker_id: uuid.UUID,
    process_id: str,
    concurrency: int,
    types: list[str],
    lease: Lease,
    schedules: list[str],
    app_version: str | None = None,
) -> Registration:
    return {
        "schedules": schedules,
        "worker_id": worker_id,
        "process_id": process_id,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "concurrency": concurrency,
        "types": types,
        "lease_s": lease.length,
        "margin_s": lease.margin,
        "app_version": app_version,
    }
