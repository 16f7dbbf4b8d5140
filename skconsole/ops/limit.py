"""Limit a task type across the fleet: at most N jobs running, at most N claims per interval.

The limits live in sk_task_types_t (tt_max_running, tt_rate_count per
tt_rate_seconds) and the claim statement itself applies them
(sql/queries/claim.sql, sql/schema/060_skconsole_limits.sql): each claim of a
limited type locks the type's row, counts its running jobs afresh and charges
its rate window, so the limits hold over every worker process and host with
no coordinator, and a change applies at the workers' next claim. Setting one
limit keeps the other; ``clear_*`` removes one. The audit row records the
limits before and after.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from skconsole.core.errors import ConfigError
from skconsole.core.json_types import Json, JsonObject
from skconsole.ops.guard import TYPES
from skconsole.ops.spec import Needs, SettingParams, TypeSetting, Wording
from skconsole.read import rate_text

#: interval units of a rate, in seconds
RATE_UNITS = {"s": 1.0, "min": 60.0}
#: the largest limit accepted (the columns are integers)
MAX_LIMIT = 1_000_000
_RATE = re.compile(r"\s*(\d+)\s*/\s*([a-z]+)\s*")


@dataclass(frozen=True)
class Rate:
    """At most ``count`` claims in each window of ``seconds``."""

    count: int
    seconds: float

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_LIMIT:
            raise ConfigError(f"--rate must allow 1 to {MAX_LIMIT:,} claims, not {self.count}")
        if self.seconds not in RATE_UNITS.values():
            raise ConfigError("--rate is per second or per minute: N/s or N/min")

    @classmethod
    def parse(cls, text: str) -> Rate:
        """``10/s`` or ``600/min``; a clear one-line error otherwise."""
        m = _RATE.fullmatch(text.lower())
        if m is None or m.group(2) not in RATE_UNITS:
            raise ConfigError(
                f"invalid --rate {text.strip()[:40]!r}: expected N/s or N/min, e.g. 10/s or 600/min"
            )
        return cls(int(m.group(1)), RATE_UNITS[m.group(2)])

    def __str__(self) -> str:
        return rate_text(self.count, self.seconds)


@dataclass(frozen=True, slots=True)
class Limits:
    """A type's limits as sk_task_types_t holds them (None: no such limit)."""

    max_running: int | None
    rate_count: int | None
    rate_seconds: float | None


@dataclass(frozen=True)
class LimitParams(SettingParams[Limits]):
    """What to change: a limit to set (None: keep it) or to clear, for each of the two."""

    concurrency: int | None = None
    rate: Rate | None = None
    clear_concurrency: bool = False
    clear_rate: bool = False

    def __post_init__(self) -> None:
        if self.concurrency is not None and not 1 <= self.concurrency <= MAX_LIMIT:
            raise ConfigError(
                f"--concurrency must be 1 to {MAX_LIMIT:,} (--clear removes it), "
                f"not {self.concurrency}"
            )
        if (self.concurrency is not None and self.clear_concurrency) or (
            self.rate is not None and self.clear_rate
        ):
            raise ConfigError("limit: set a limit or clear it, not both")
        if self.concurrency is None and self.rate is None and not self.clearing:
            raise ConfigError("limit needs --concurrency N, --rate N/s|N/min or --clear")

    @property
    def clearing(self) -> bool:
        return self.clear_concurrency or self.clear_rate

    def apply(self, old: Limits) -> Limits:
        new = old
        if self.clear_concurrency:
            new = replace(new, max_running=None)
        elif self.concurrency is not None:
            new = replace(new, max_running=self.concurrency)
        if self.clear_rate:
            new = replace(new, rate_count=None, rate_seconds=None)
        elif self.rate is not None:
            new = replace(new, rate_count=self.rate.count, rate_seconds=self.rate.seconds)
        return new

    def shown(self, settings: Limits) -> JsonObject:
        count, seconds = settings.rate_count, settings.rate_seconds
        return {
            "concurrency": settings.max_running,
            "rate": rate_text(count, seconds) if count is not None and seconds else None,
        }

    def details(self) -> JsonObject:
        return {
            "concurrency": self.concurrency,
            "rate": str(self.rate) if self.rate else None,
            "clear_concurrency": self.clear_concurrency,
            "clear_rate": self.clear_rate,
        }

    def phrase(self) -> str:
        parts = []
        if self.clear_concurrency and self.clear_rate:
            return ": clear its concurrency and rate limits"
        if self.concurrency is not None:
            parts.append(f"concurrency {self.concurrency}")
        if self.rate is not None:
            parts.append(f"rate {self.rate}")
        text = f" to {', '.join(parts)}" if parts else ""
        cleared = "concurrency" if self.clear_concurrency else "rate" if self.clear_rate else ""
        if cleared:
            text += f"{',' if text else ':'} clear its {cleared} limit"
        return text


def describe(limits: Mapping[str, Json]) -> str:
    """Limits as ``shown()`` gives them, in words: "concurrency 2, rate 10/min"."""
    parts = []
    if limits.get("concurrency") is not None:
        parts.append(f"concurrency {limits['concurrency']}")
    if limits.get("rate") is not None:
        parts.append(f"rate {limits['rate']}")
    return ", ".join(parts) or "no limits"


LIMIT = TypeSetting(
    Wording.of_settings("limit", "limited"),
    params_type=LimitParams,
    read="ops_limit_state",
    lock="ops_limit_lock",
    write="ops_limit",
    settings=Limits,
    needs=Needs(update=(TYPES,), insert=(TYPES,)),
)
