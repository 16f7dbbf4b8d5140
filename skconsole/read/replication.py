"""What replication buys the queue, and the last failover it went through.

A promoted standby may lack the old primary's last commits when replication
is asynchronous: acknowledged posts can be lost and finished jobs run again
(never twice at once: docs/explanation/safety-model.md#failover). This read
model says which mode the server runs in, in words a person acts on, and when
the queue last changed timeline (``sk_timelines_t``): the console, ``status
health``, ``check`` and the exporter all say it from here.

The mode is read from this session's settings (``synchronous_standby_names``,
``synchronous_commit``) and from the WAL senders every role may count; whether
one of them is synchronous is shown only to roles with ``pg_read_all_stats``
(otherwise ``sync_state`` is hidden, and so is the answer).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from skconsole.core.durations import format_age
from skconsole.core.json_types import JsonObject, attributes
from skconsole.read.query import Conn, fetch, iso

#: synchronous_commit values that make a commit wait for a synchronous standby
WAITING_COMMITS = ("on", "remote_apply", "remote_write")
#: where the docs say how to choose and configure a mode
DOCS = "docs/howto/high-availability.md"


class ReplicationMode(enum.Enum):
    """What a crash of this server followed by a failover can lose."""

    SYNCHRONOUS = "synchronous"
    #: synchronous_standby_names is set, yet no synchronous standby is connected
    STALLED = "synchronous, no standby connected"
    ASYNCHRONOUS = "asynchronous"
    #: synchronous_standby_names is set; whether a standby is synchronous is hidden
    HIDDEN = "synchronous (not visible to this role)"
    NO_STANDBY = "no standby"
    #: this server is itself a standby
    STANDBY = "standby"


@dataclass(frozen=True)
class LastFailover:
    """The newest timeline the queue moved to, as our statements first saw it."""

    timeline: int
    previous: int
    at: datetime
    claims_held_until: datetime
    age_s: float
    #: how much longer claims are held (0: no more)
    held_for_s: float

    @property
    def held(self) -> bool:
        return self.held_for_s > 0

    def text(self) -> str:
        """ "failover to timeline 2 (from 1) at 2026-12-03 21:13:04 UTC, 5m ago; claims
        held for 7s more" """
        said = (
            f"failover to timeline {self.timeline} (from {self.previous}) at"
            f" {self.at:%Y-%m-%d %H:%M:%S} UTC, {format_age(self.age_s)} ago"
        )
        if self.held:
            said += f"; claims held for {format_age(self.held_for_s)} more"
        return said

    def as_dict(self) -> JsonObject:
        return {
            **attributes(self, "timeline previous age_s held_for_s held"),
            "at": iso(self.at),
            "claims_held_until": iso(self.claims_held_until),
        }


@dataclass(frozen=True)
class Replication:
    """The server's replication as this role can see it, and the last failover."""

    standby: bool
    #: the WAL timeline (None: not known)
    timeline: int | None
    #: WAL senders: standbys (or backup tools) streaming from this server
    senders: int
    sync_senders: int
    #: senders whose state this role may not see (no pg_read_all_stats)
    hidden_senders: int
    sync_names: str
    synchronous_commit: str
    last_failover: LastFailover | None
    #: the newest timeline the queue's statements have seen (None: none recorded)
    recorded_timeline: int | None = None
    #: a standby's: how long ago its data is known to have reflected the primary's (None:
    #: not a standby, or unknown: nothing replayed yet)
    lag_s: float | None = None
    #: a standby's: whether it streams from a primary now
    receiving: bool = False

    @property
    def unseen_failover(self) -> bool:
        """The server is on a newer timeline than any the queue has seen: it failed over and
        no worker has reached it yet (the first to do so holds claims)."""
        return (
            not self.standby
            and self.timeline is not None
            and self.recorded_timeline is not None
            and self.timeline > self.recorded_timeline
        )

    @property
    def failover_pending(self) -> bool:
        """A failover is not behind the queue yet: no worker has reached the new primary,
        or claims are still held there."""
        return self.unseen_failover or (self.last_failover is not None and self.last_failover.held)

    def standby_note(self) -> str | None:
        """ "as of 1.2s ago on standby": how old what a standby shows may be (None: not a
        standby)."""
        if not self.standby:
            return None
        as_of = (
            "as of an unknown moment"
            if self.lag_s is None
            else f"as of {format_age(self.lag_s)} ago"
        )
        if not self.receiving:
            return f"standby not receiving from its primary: {as_of}"
        return f"{as_of} on standby"

    def failover_note(self) -> str | None:
        """What a person should know about failovers now: one not seen yet, claims held
        after one, or the last one (None: none recorded)."""
        if self.unseen_failover:
            return (
                f"the server is on timeline {self.timeline}, the queue last ran on timeline"
                f" {self.recorded_timeline}: a failover no worker has reached yet (the first"
                " one holds claims for its lease + margin)"
            )
        return self.last_failover.text() if self.last_failover is not None else None

    @property
    def mode(self) -> ReplicationMode:
        if self.standby:
            return ReplicationMode.STANDBY
        waits = bool(self.sync_names.strip()) and self.synchronous_commit in WAITING_COMMITS
        if waits and self.sync_senders:
            return ReplicationMode.SYNCHRONOUS
        if waits and self.hidden_senders:
            return ReplicationMode.HIDDEN
        if waits:
            return ReplicationMode.STALLED
        return ReplicationMode.ASYNCHRONOUS if self.senders else ReplicationMode.NO_STANDBY

    def says(self) -> str:
        """What the mode buys, in one sentence."""
        mode, n = self.mode, self.senders
        standbys = f"{n} standby" if n == 1 else f"{n} standbys"
        if mode is ReplicationMode.STANDBY:
            return "this server is a standby: it serves reads; jobs are claimed on the primary"
        if mode is ReplicationMode.SYNCHRONOUS:
            return (
                f"synchronous replication ({self.sync_senders} of {standbys} synchronous):"
                " a commit returns once a standby has it, so a failover loses no acknowledged"
                " post and runs no finished job again"
            )
        if mode is ReplicationMode.HIDDEN:
            return (
                f"synchronous_standby_names is set ({self.sync_names}); whether one of the"
                f" {standbys} is synchronous is hidden from this role (pg_read_all_stats)"
            )
        if mode is ReplicationMode.STALLED:
            return (
                f"synchronous_standby_names is set ({self.sync_names}) but no synchronous"
                " standby is connected: every commit (posts, claims, results) waits until one is"
            )
        if mode is ReplicationMode.ASYNCHRONOUS:
            local = (
                f" (synchronous_commit = {self.synchronous_commit}: commits do not wait)"
                if self.sync_names.strip()
                else ""
            )
            return (
                f"asynchronous replication to {standbys}{local}: a failover can lose the posts"
                " acknowledged in the primary's last moments and run again jobs whose results"
                " the standby had not received (never two at once); synchronous replication"
                f" loses none ({DOCS})"
            )
        return (
            "no standby streams from this server: nothing committed is lost in a crash, but"
            " there is no standby to fail over to (a managed service may replicate where"
            " PostgreSQL does not show it)"
        )

    def brief(self) -> str:
        """The mode and what it buys in a few words, for a line of the console."""
        mode, n = self.mode, self.senders
        standbys = f"{n} standby" if n == 1 else f"{n} standbys"
        return {
            ReplicationMode.STANDBY: "this server is a standby",
            ReplicationMode.SYNCHRONOUS: f"synchronous ({self.sync_senders} of {standbys}):"
            " a failover loses nothing acknowledged",
            ReplicationMode.HIDDEN: "synchronous_standby_names set; whether a standby is"
            " synchronous is hidden (pg_read_all_stats)",
            ReplicationMode.STALLED: "synchronous, but no synchronous standby connected:"
            " every commit waits",
            ReplicationMode.ASYNCHRONOUS: f"asynchronous to {standbys}: a failover can lose"
            " the last acknowledged posts (synchronous loses none)",
            ReplicationMode.NO_STANDBY: "no standby streams from this server",
        }[mode]

    def as_dict(self) -> JsonObject:
        return {
            **attributes(
                self,
                "standby timeline recorded_timeline unseen_failover senders sync_senders"
                " hidden_senders sync_names synchronous_commit lag_s receiving",
            ),
            "mode": self.mode.value,
            "says": self.says(),
            "last_failover": self.last_failover.as_dict() if self.last_failover else None,
        }


def _row(
    *,
    failover_timeline: int | None,
    failover_previous: int | None,
    failover_at: datetime | None,
    claims_held_until: datetime | None,
    failover_age_s: float | None,
    held_for_s: float | None,
    **replication: Any,
) -> Replication:
    """replication.sql's row: the last failover's columns (all set, or none recorded),
    the rest named as :class:`Replication` names them."""
    last = None
    if (
        failover_timeline is not None
        and failover_previous is not None
        and failover_at is not None
        and claims_held_until is not None
    ):
        last = LastFailover(
            timeline=failover_timeline,
            previous=failover_previous,
            at=failover_at,
            claims_held_until=claims_held_until,
            age_s=failover_age_s or 0.0,
            held_for_s=held_for_s or 0.0,
        )
    return Replication(**replication, last_failover=last)


def replication(conn: Conn) -> Replication:
    """The replication mode and the last failover (none recorded on a database without
    skconsole's objects)."""
    (found,) = fetch(conn, "replication", _row)
    if found.standby:
        (lag,) = fetch(conn, "standby_lag", StandbyLag)
        found = replace(found, lag_s=lag.lag_s, receiving=lag.receiving)
    return found


@dataclass(frozen=True)
class StandbyLag:
    """standby_lag.sql's answer."""

    lag_s: float | None
    receiving: bool
