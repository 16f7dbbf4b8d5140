"""Set or clear a task type's SLOs: the longest a ready job of the type should wait,
and the largest share of its finished jobs that may fail.

The objectives live in sk_task_types_t (tt_slo_max_wait_seconds,
sql/schema/090_skconsole_slo.sql; tt_slo_max_failure_rate,
124_skconsole_failure_slo.sql). Nothing in the engine enforces them: the flow
read model (:mod:`skconsole.read.flow`) says how long until the oldest ready job
breaches the max wait and what share of the window's finished jobs failed, and
``skconsole check`` turns a breach into a CRITICAL (a failure rate over its
max: WARNING; over twice it: CRITICAL) for monitoring. Setting one leaves the
other as it is; clearing clears both. Like a limit, the change is audited with the value before and
after, and refused in read-only mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from skconsole.core.durations import format_age, format_limit
from skconsole.core.errors import ConfigError
from skconsole.core.json_types import Json, JsonObject, attributes
from skconsole.ops.guard import TYPES
from skconsole.ops.spec import Confirm, Needs, Wording
from skconsole.ops.type_actions import SettingParams, TypeSetting

#: the bounds of --max-wait: below a second the queue's own claim latency is the
#: noise; beyond 30 days a job that waits is forgotten, not late
MIN_MAX_WAIT_S = 1.0
MAX_MAX_WAIT_S = 30 * 86_400.0


def parse_percent(text: str, *, option: str = "--max-failure-rate") -> float:
    """A share from "10%", "2.5%" or "0.1" (a fraction), strictly between 0 and 100%.

    Raises ConfigError naming ``option`` with what it takes."""
    raw = text.strip()
    hint = f"{option} takes a percentage above 0% and below 100%, e.g. 10% or 2.5%"
    try:
        share = float(raw[:-1].strip()) / 100.0 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ConfigError(f"{hint}, not {text!r}") from None
    if not (0.0 < share < 1.0):  # NaN fails too
        raise ConfigError(f"{hint}, not {text!r}")
    return share


@dataclass(frozen=True, slots=True)
class Slo:
    """A type's SLO as sk_task_types_t holds it (None: none)."""

    slo_max_wait_seconds: float | None
    slo_max_failure_rate: float | None = None


def _percent(share: float) -> str:
    return f"{share * 100:g}%"


@dataclass(frozen=True)
class SloParams(SettingParams[Slo]):
    """What to change: set the max wait (seconds) and/or the max failure rate (a share,
    0 to 1; the one not given stays as it is), or clear both."""

    max_wait_s: float | None = None
    clear: bool = False
    max_failure_rate: float | None = None

    def __post_init__(self) -> None:
        setting = self.max_wait_s is not None or self.max_failure_rate is not None
        if self.clear and setting:
            raise ConfigError("slo: set an SLO or clear it, not both")
        if not self.clear and not setting:
            raise ConfigError(
                "slo needs --max-wait DURATION and/or --max-failure-rate PERCENT"
                " (or `slo clear TYPE`)"
            )
        if self.max_wait_s is not None and not (
            MIN_MAX_WAIT_S <= self.max_wait_s <= MAX_MAX_WAIT_S
        ):
            raise ConfigError(
                f"--max-wait must be between {format_limit(MIN_MAX_WAIT_S)} and"
                f" {format_limit(MAX_MAX_WAIT_S)}, got {self.max_wait_s:g}s"
            )
        if self.max_failure_rate is not None and not (0.0 < self.max_failure_rate < 1.0):
            raise ConfigError(
                f"--max-failure-rate must be above 0% and below 100%, got {self.max_failure_rate:g}"
            )

    def apply(self, old: Slo) -> Slo:
        if self.clear:
            return Slo(None, None)
        return Slo(
            self.max_wait_s if self.max_wait_s is not None else old.slo_max_wait_seconds,
            (
                self.max_failure_rate
                if self.max_failure_rate is not None
                else old.slo_max_failure_rate
            ),
        )

    def shown(self, settings: Slo) -> JsonObject:
        wait, rate = settings.slo_max_wait_seconds, settings.slo_max_failure_rate
        return {
            "max_wait_s": float(wait) if wait is not None else None,
            "max_failure_rate": float(rate) if rate is not None else None,
        }

    def details(self) -> JsonObject:
        return attributes(self, "max_wait_s max_failure_rate clear")

    def phrase(self) -> str:
        if self.clear:
            return ": clear its SLOs"
        parts = []
        if self.max_wait_s is not None:
            parts.append(f"a max wait of {format_age(self.max_wait_s)}")
        if self.max_failure_rate is not None:
            parts.append(f"a max failure rate of {_percent(self.max_failure_rate)}")
        return " to " + " and ".join(parts)


def describe(slo: Mapping[str, Json]) -> str:
    """SLOs as ``shown()`` gives them, in words: "max wait 30s", "max wait 30s, max
    failure rate 10%", "no SLO"."""
    wait, rate = slo.get("max_wait_s"), slo.get("max_failure_rate")
    parts = []
    if isinstance(wait, int | float):
        parts.append(f"max wait {format_age(wait)}")
    if isinstance(rate, int | float):
        parts.append(f"max failure rate {_percent(rate)}")
    return ", ".join(parts) or "no SLO"


SLO = TypeSetting(
    Wording.of_settings("slo", "set the SLO of"),
    params_type=SloParams,
    settings=Slo,
    needs=Needs(update=(TYPES,), insert=(TYPES,)),
    # reversible and changes no job; the CLI still asks (or takes --yes)
    confirm=Confirm.NONE,
)
