"""A task type's fleet-wide settings as stored in sk_task_types_t: its limits and its SLO.

The values operators set (``skconsole limit``, ``skconsole slo``), read back here once
for every face that shows them: the depth view's limit column, the flow view, the
console's depth panel, the exporter and check.
"""

from __future__ import annotations

from dataclasses import dataclass

from skconsole.core.json_types import JsonObject, attributes
from skconsole.core.text import printable
from skconsole.read.query import Conn, fetch


def rate_text(count: int, seconds: float) -> str:
    """A rate limit as the CLI takes it: "10/s", "600/min" (other windows: "5/90s")."""
    unit = {1.0: "s", 60.0: "min"}.get(float(seconds), f"{seconds:g}s")
    return f"{count}/{unit}"


def _rate(count: int | None, seconds: float | None) -> str | None:
    """A rate limit that may be unset, in words (None: none)."""
    return None if count is None or seconds is None else rate_text(count, seconds)


@dataclass(frozen=True)
class TypeLimit:
    """A task type's fleet-wide limits (None: none) and its jobs running now."""

    task_type: str
    concurrency: int | None
    rate_count: int | None
    rate_seconds: float | None
    running: int
    #: the payload path of its per-key limits (None: none), as the text[] column reads
    key_path: list[str] | None = None
    key_concurrency: int | None = None
    key_rate_count: int | None = None
    key_rate_seconds: float | None = None
    #: keys with key_concurrency jobs running: their other jobs wait
    keys_at_limit: int = 0

    @property
    def rate(self) -> str | None:
        return _rate(self.rate_count, self.rate_seconds)

    @property
    def per(self) -> str | None:
        """The key path as typed: ``payload.customer``."""
        return "payload." + ".".join(self.key_path) if self.key_path else None

    @property
    def key_rate(self) -> str | None:
        return _rate(self.key_rate_count, self.key_rate_seconds)

    @property
    def per_key(self) -> str | None:
        """The per-key limits in words: "1 per payload.customer", "1 · 5/s per
        payload.customer" (the path made printable: an operator typed it); None without any."""
        if self.per is None:
            return None
        parts = [str(p) for p in (self.key_concurrency, self.key_rate) if p is not None]
        return f"{' · '.join(parts)} per {printable(self.per)}" if parts else None

    @property
    def keys_note(self) -> str | None:
        """How many keys are at their limit: "3 keys at limit"; None without a per-key
        concurrency limit."""
        if self.key_concurrency is None:
            return None
        return f"{self.keys_at_limit:,} key{'s' if self.keys_at_limit != 1 else ''} at limit"

    @property
    def slots(self) -> str | None:
        """Running/concurrency limit: "2/5"; None without a concurrency limit."""
        return None if self.concurrency is None else f"{self.running}/{self.concurrency}"

    def summary(self, sep: str = " · ") -> str:
        """Running/concurrency limit, then the rate limit, then the per-key limits:
        "2/5 · 10/min · 1 per payload.customer (3 keys at limit)"."""
        keyed = self.per_key
        if keyed is not None and self.keys_note is not None:
            keyed += f" ({self.keys_note})"
        return sep.join(p for p in (self.slots, self.rate, keyed) if p)

    @property
    def saturated(self) -> bool:
        """Running at its concurrency limit: its claims wait for a slot."""
        return self.concurrency is not None and self.running >= self.concurrency

    def as_dict(self) -> JsonObject:
        return {
            **attributes(self, "task_type concurrency rate running per"),
            "concurrency_per_key": self.key_concurrency,
            "rate_per_key": self.key_rate,
            "keys_at_limit": self.keys_at_limit if self.key_concurrency is not None else None,
        }


def limits(conn: Conn) -> list[TypeLimit]:
    """The task types with a concurrency or rate limit, by name (none on a database
    without skconsole's objects)."""
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
    return {s.task_type: s for s in fetch(conn, "slos", TypeSlo)}
