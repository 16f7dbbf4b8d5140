"""Jobs posted, processed and failed per minute: the trend lines of the console and
``skconsole status history``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

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


def history(conn: Conn, *, minutes: int = 60) -> History:
    """Jobs posted, processed and failed per minute (failed: jobs whose latest attempt failed)."""
    return History(fetch(conn, "history", Minute, {"minutes": max(1, minutes)}))
