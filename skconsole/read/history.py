"""Jobs posted, processed and failed per minute: the trend lines of the console and
``skconsole status history``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from skconsole.core.json_types import JsonObject
from skconsole.db.layout import has_skconsole_objects
from skconsole.read.query import Conn, fetch
from skconsole.read.record import record


@dataclass(frozen=True)
class Minute:
    minute: datetime
    posted: int
    processed: int
    failed: int


@dataclass
class History:
    """Per minute over the last ``len(minutes)`` minutes, oldest first; the last is partial."""

    minutes: list[Minute] = field(default_factory=list)

    def series(self, name: str) -> list[int]:
        """One line of the trend: "posted", "processed" or "failed"."""
        return [int(getattr(m, name)) for m in self.minutes]

    def as_dict(self) -> JsonObject:
        return {
            "minutes": [
                {
                    "minute": m.minute.isoformat(),
                    "posted": m.posted,
                    "processed": m.processed,
                    "failed": m.failed,
                }
                for m in self.minutes
            ]
        }


@dataclass(frozen=True)
class _Counted:
    """A minute as history.sql answers it (a database without skconsole's record)."""

    minute: datetime
    posted: int
    processed: int
    failed: int


def history(conn: Conn, *, minutes: int = 60) -> History:
    """Jobs posted, processed (succeeded) and failed per minute, the current minute last.

    From the per-minute record (:mod:`skconsole.read.record`): failed counts every failed
    attempt in the minute it failed (a reap too), and a purge changes nothing. A
    database with Stakhanovise.NET's tables alone has no record: there the minutes are
    counted from the job rows (history.sql), failed being the jobs whose latest attempt
    failed, and purged jobs are gone from them.
    """
    minutes = max(1, minutes)
    if not has_skconsole_objects(conn):
        rows = fetch(conn, "history", _Counted, {"minutes": minutes})
        return History([Minute(r.minute, r.posted, r.processed, r.failed) for r in rows])
    (now,) = fetch(conn, "db_now", lambda now: now)
    last = now.replace(second=0, microsecond=0)
    kept = record(
        conn,
        since=last - timedelta(minutes=minutes - 1),
        until=last + timedelta(minutes=1),
        latency=False,
        combined=True,
        signatures=False,
    )
    return History(
        [
            Minute(at, c.posted, c.succeeded, c.failed)
            for at, c in zip(kept.steps, kept.series(), strict=True)
        ]
    )
