"""Jobs posted, processed and failed per minute: the trend lines of the console and
``skconsole status history``."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from skconsole.core.json_types import JsonObject
from skconsole.read.query import Conn, fetch


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


#: the minutes before the last an earlier answer is not trusted for: a post's time is its
#: transaction's start, so a transaction still open then may add to them when it commits
RECOUNTED_MINUTES = 3


@dataclass(frozen=True)
class _Counted:
    """A minute as the query answers it: posted and processed None where not counted."""

    minute: datetime
    posted: int | None
    processed: int | None
    failed: int


def history(conn: Conn, *, minutes: int = 60, known: History | None = None) -> History:
    """Jobs posted, processed and failed per minute (failed: jobs whose latest attempt failed).

    With ``known`` (an earlier answer, as the console keeps), the posted and processed
    counts of its minutes but the last :data:`RECOUNTED_MINUTES` are taken from it rather
    than counted again: counting an hour of posts is this read's cost on a big table, and
    a minute long past does not change. Failed is read afresh for every minute (a failed
    job retried and succeeded leaves its minute).
    """
    kept = {m.minute: m for m in known.minutes[:-RECOUNTED_MINUTES]} if known else {}
    recount_from = max(kept) + timedelta(minutes=1) if kept else None
    params = {"minutes": max(1, minutes), "recount_from": recount_from}
    rows = fetch(conn, "history", _Counted, params)
    if any(r.posted is None and r.minute not in kept for r in rows):
        return history(conn, minutes=minutes)  # ``known`` was of other minutes
    return History([_whole(row, kept) for row in rows])


def _whole(row: _Counted, kept: dict[datetime, Minute]) -> Minute:
    """``row`` with the counts it was not read with taken from ``kept``."""
    if row.posted is None or row.processed is None:
        return replace(kept[row.minute], failed=row.failed)
    return Minute(row.minute, row.posted, row.processed, row.failed)
