"""Set or clear a task type's SLO: the longest a ready job of the type should wait.

The objective lives in sk_task_types_t (tt_slo_max_wait_seconds,
sql/schema/090_skconsole_slo.sql). Nothing in the engine enforces it: the
flow read model (:mod:`skconsole.read.flow`) says how long until the oldest ready
job breaches it, and ``skconsole check`` turns a breach into a CRITICAL for
monitoring. Like a limit, the change is audited with the value before and
after, and refused in read-only mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from skconsole.core.durations import format_age, format_limit
from skconsole.core.errors import ConfigError
from skconsole.core.json_types import Json, JsonObject
from skconsole.ops.guard import TYPES
from skconsole.ops.spec import Confirm, Needs, SettingParams, TypeSetting, Wording

#: the bounds of --max-wait: below a second the queue's own claim latency is the
#: noise; beyond 30 days a job that waits is forgotten, not late
MIN_MAX_WAIT_S = 1.0
MAX_MAX_WAIT_S = 30 * 86_400.0


@dataclass(frozen=True, slots=True)
class Slo:
    """A type's SLO as sk_task_types_t holds it (None: none)."""

    slo_max_wait_seconds: float | None


@dataclass(frozen=True)
class SloParams(SettingParams[Slo]):
    """What to change: set the max wait (seconds), or clear it."""

    max_wait_s: float | None = None
    clear: bool = False

    def __post_init__(self) -> None:
        if self.clear and self.max_wait_s is not None:
            raise ConfigError("slo: set a max wait or clear it, not both")
        if not self.clear and self.max_wait_s is None:
            raise ConfigError("slo needs --max-wait DURATION (or `slo clear TYPE`)")
        if self.max_wait_s is not None and not (
            MIN_MAX_WAIT_S <= self.max_wait_s <= MAX_MAX_WAIT_S
        ):
            raise ConfigError(
                f"--max-wait must be between {format_limit(MIN_MAX_WAIT_S)} and"
                f" {format_limit(MAX_MAX_WAIT_S)}, got {self.max_wait_s:g}s"
            )

    def apply(self, old: Slo) -> Slo:
        return Slo(None if self.clear else self.max_wait_s)

    def shown(self, settings: Slo) -> JsonObject:
        value = settings.slo_max_wait_seconds
        return {"max_wait_s": float(value) if value is not None else None}

    def details(self) -> JsonObject:
        return {"max_wait_s": self.max_wait_s, "clear": self.clear}

    def phrase(self) -> str:
        if self.clear:
            return ": clear its SLO"
        assert self.max_wait_s is not None
        return f" to a max wait of {format_age(self.max_wait_s)}"


def describe(slo: Mapping[str, Json]) -> str:
    """An SLO as ``shown()`` gives it, in words: "max wait 30s", "no SLO"."""
    value = slo.get("max_wait_s")
    return f"max wait {format_age(value)}" if isinstance(value, int | float) else "no SLO"


SLO = TypeSetting(
    Wording(
        "slo",
        "set the SLO of",
        "task type",
        outcome="{Done} {target}{phrase}.",
        nothing="Nothing changed: {target} already has these settings.",
    ),
    params_type=SloParams,
    read="ops_slo_state",
    lock="ops_slo_lock",
    write="ops_slo",
    settings=Slo,
    needs=Needs(update=(TYPES,), insert=(TYPES,)),
    # reversible and changes no job; the CLI still asks (or takes --yes)
    confirm=Confirm.NONE,
)
