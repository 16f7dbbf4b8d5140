"""Limit a task type across the fleet: at most N jobs running, at most N claims per interval.

The limits live in sk_task_types_t (tt_max_running, tt_rate_count per
tt_rate_seconds) and the claim statement itself applies them
(sql/queries/claim.sql, sql/schema/060_skconsole_limits.sql): each claim of a
limited type locks the type's row, counts its running jobs afresh and charges
its rate window, so the limits hold over every worker process and host with
no coordinator, and a change applies at the workers' next claim. Setting one
limit keeps the other; ``clear_*`` removes one. The audit row records the
limits before and after.

Limits per key (``per``: a payload path, a customer id say) are the same two
limits applied to each distinct value of that path on its own: at most N
running (or N claims per interval) per key, while other keys run in parallel
(``sk_claim_keyed()``, sql/schema/128_skconsole_key_limits.sql). A type has at
most one key path, and its per-key limits sit beside its type-wide ones. The
claim of a keyed type reads an index on the key (ops/key_index.py), built after
the limit commits and dropped when the per-key limits are cleared.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from skconsole.core.errors import ConfigError
from skconsole.core.json_types import Json, JsonObject
from skconsole.core.payload_terms import PayloadTerm
from skconsole.core.text import printable
from skconsole.ops.common import Conn
from skconsole.ops.guard import TYPES
from skconsole.ops.key_index import sync as sync_key_index
from skconsole.ops.spec import Needs, Wording
from skconsole.ops.type_actions import SettingParams, TypeSetting
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
    """A type's limits as sk_task_types_t holds them (None: no such limit); the key path
    is set exactly when a per-key limit is (a list: as the text[] column reads)."""

    max_running: int | None
    rate_count: int | None
    rate_seconds: float | None
    key_path: list[str] | None = None
    key_max_running: int | None = None
    key_rate_count: int | None = None
    key_rate_seconds: float | None = None

    @property
    def per(self) -> str | None:
        """The key path as typed: ``payload.customer``; None without a per-key limit."""
        return "payload." + ".".join(self.key_path) if self.key_path else None


@dataclass(frozen=True)
class LimitParams(SettingParams[Limits]):
    """What to change: a limit to set (None: keep it) or to clear, for each of the two;
    with ``per`` (a payload path), the per-key limits of that path instead."""

    concurrency: int | None = None
    rate: Rate | None = None
    clear_concurrency: bool = False
    clear_rate: bool = False
    per: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.per is not None:
            PayloadTerm(self.per, "")  # checks the path
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

    @property
    def dotted(self) -> str | None:
        return PayloadTerm(self.per, "").dotted if self.per is not None else None

    def _changed(
        self, running: int | None, count: int | None, seconds: float | None
    ) -> tuple[int | None, int | None, float | None]:
        """One pair of limits (the type's, or per key), set or cleared as asked: the most
        running, and the rate as claims per seconds."""
        if self.clear_concurrency:
            running = None
        elif self.concurrency is not None:
            running = self.concurrency
        if self.clear_rate:
            count, seconds = None, None
        elif self.rate is not None:
            count, seconds = self.rate.count, self.rate.seconds
        return running, count, seconds

    def apply(self, old: Limits) -> Limits:
        if self.per is not None:
            return self._apply_per_key(old, self.per)
        running, count, seconds = self._changed(old.max_running, old.rate_count, old.rate_seconds)
        return replace(old, max_running=running, rate_count=count, rate_seconds=seconds)

    def _apply_per_key(self, old: Limits, per: tuple[str, ...]) -> Limits:
        """The per-key limits changed; a type keeps one key path: a set limit on another
        path is refused while the first one holds (clearing takes any path)."""
        setting = self.concurrency is not None or self.rate is not None
        if setting and old.key_path is not None and tuple(old.key_path) != per:
            raise ConfigError(
                f"this type is limited per {old.per} already; a type has one key path:"
                f" clear it first (--clear --per {old.per})"
            )
        running, count, seconds = self._changed(
            old.key_max_running, old.key_rate_count, old.key_rate_seconds
        )
        new = replace(old, key_max_running=running, key_rate_count=count, key_rate_seconds=seconds)
        keyed = new.key_max_running is not None or new.key_rate_count is not None
        return replace(new, key_path=(list(old.key_path or per) if keyed else None))

    def shown(self, settings: Limits) -> JsonObject:
        count, seconds = settings.rate_count, settings.rate_seconds
        key_count, key_seconds = settings.key_rate_count, settings.key_rate_seconds
        shown: JsonObject = {
            "concurrency": settings.max_running,
            "rate": rate_text(count, seconds) if count is not None and seconds else None,
        }
        if settings.per is None:  # the per-key fields only where there is a key path
            return shown
        return {
            **shown,
            "per": settings.per,
            "concurrency_per_key": settings.key_max_running,
            "rate_per_key": (
                rate_text(key_count, key_seconds) if key_count is not None and key_seconds else None
            ),
        }

    def details(self) -> JsonObject:
        return {
            "concurrency": self.concurrency,
            "rate": str(self.rate) if self.rate else None,
            "clear_concurrency": self.clear_concurrency,
            "clear_rate": self.clear_rate,
            "per": self.dotted,
        }

    @classmethod
    def from_details(cls, details: Mapping[str, object]) -> LimitParams | None:
        """Not worded again: the audit row keeps the limits before and after."""
        return None

    def phrase(self) -> str:
        per = f" per {self.dotted}" if self.per is not None else ""
        which = "per-key " if per else ""
        parts = []
        if self.clear_concurrency and self.clear_rate:
            return f": clear its {which}concurrency and rate limits"
        if self.concurrency is not None:
            parts.append(f"concurrency {self.concurrency}{per}")
        if self.rate is not None:
            parts.append(f"rate {self.rate}{per}")
        text = f" to {', '.join(parts)}" if parts else ""
        cleared = "concurrency" if self.clear_concurrency else "rate" if self.clear_rate else ""
        if cleared:
            text += f"{',' if text else ':'} clear its {which}{cleared} limit"
        return text


def describe(limits: Mapping[str, Json]) -> str:
    """Limits as ``shown()`` gives them, in words: "concurrency 2, rate 10/min,
    concurrency 1 per payload.customer"."""
    parts = []
    if limits.get("concurrency") is not None:
        parts.append(f"concurrency {limits['concurrency']}")
    if limits.get("rate") is not None:
        parts.append(f"rate {limits['rate']}")
    per = printable(str(limits["per"])) if limits.get("per") is not None else None
    if per is not None:
        if limits.get("concurrency_per_key") is not None:
            parts.append(f"concurrency {limits['concurrency_per_key']} per {per}")
        if limits.get("rate_per_key") is not None:
            parts.append(f"rate {limits['rate_per_key']} per {per}")
    return ", ".join(parts) or "no limits"


def _sync_key_index(conn: Conn, task_type: str, old: Limits, new: Limits) -> JsonObject:
    """After the limit commits: the key index the new per-key limit needs, built (or an
    invalid one rebuilt), and any other of the type's dropped."""
    if new.key_path is None and old.key_path is None:
        return {}
    return sync_key_index(conn, task_type, tuple(new.key_path) if new.key_path else None)


LIMIT = TypeSetting(
    Wording.of_settings("limit", "limited"),
    params_type=LimitParams,
    settings=Limits,
    needs=Needs(update=(TYPES,), insert=(TYPES,)),
    after=_sync_key_index,
)
