"""A task type's fleet-wide settings as stored in sk_task_types_t: its limits and its SLO.

The values operators set (``skconsole limit``, ``skconsole slo``), read back here once
for every face that shows them: the depth view's limit column, the flow view, the
console's depth panel, the exporter and check.
"""

from __future__ import annotations

from dataclasses import dataclass

from skconsole.core.json_types import JsonObject
from skconsole.db.layout import has_skconsole_objects
from skconsole.read.query import Conn, fetch


def rate_text(count: int, seconds: float) -> str:
    """A rate limit as the CLI takes it: "10/s", "600/min" (other windows: "5/90s")."""
    unit = {1.0: "s", 60.0: "min"}.get(float(seconds), f"{seconds:g}s")
    return f"{count}/{unit}"


@dataclass(frozen=True)
class TypeLimit:
    """A task type's fleet-wide limits (None: none) and its jobs running now."""

    task_type: str
    concurrency: int | None
    rate_count: int | None
    rate_seconds: float | None
    running: int

    @property
    def rate(self) -> str | None:
        if self.rate_count is None or self.rate_seconds is None:
            return None
        return rate_text(self.rate_count, self.rate_seconds)

    @property
    def slots(self) -> str | None:
        """Running/concurrency limit: "2/5"; None without a concurrency limit."""
        return None if self.concurrency is None else f"{self.running}/{self.concurrency}"

    def summary(self, sep: str = " · ") -> str:
        """Running/concurrency limit, then the rate limit: "2/5 · 10/min"."""
        return sep.join(p for p in (self.slots, self.rate) if p)

    @property
    def saturated(self) -> bool:
        """Running at its concurrency limit: its claims wait for a slot."""
        return self.concurrency is not None and self.running >= self.concurrency

    def as_dict(self) -> JsonObject:
        return {
            "task_type": self.task_type,
            "concurrency": self.concurrency,
            "rate": self.rate,
            "running": self.running,
        }


def limits(conn: Conn) -> list[TypeLimit]:
    """The task types with a concurrency or rate limit, by name (none on a database
    without skconsole's objects)."""
    if not has_skconsole_objects(conn):
        return []
    return fetch(conn, "limits", TypeLimit)


@dataclass(frozen=True)
class TypeSlo:
    """A task type's SLOs (None: not set): the longest a ready job may wait (seconds), and
    the largest share of its finished jobs that may fail (0 to 1, over the flow window)."""

    task_type: str
    max_wait_s: float | None
    max_failure_rate: float | None


def slos(conn: Conn) -> dict[str, TypeSlo]:
    """Each task type with an SLO, by type; none on Stakhanovise.NET's tables alone."""
    if not has_skconsole_objects(conn):
        return {}
    return {s.task_type: s for s in fetch(conn, "slos", TypeSlo)}
