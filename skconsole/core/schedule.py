"""When a periodic task type is due: its ticks, from a cron expression or an interval.

Every worker that runs a scheduled type computes the same ticks from the same
definition and the server's clock, so none of them has to lead: the tick is
posted by whichever gets to it first (``worker/schedules.py``). Cron
expressions are read by ``cronsim`` (Healthchecks' parser: no dependencies,
both directions, DST-aware with zoneinfo), not by a parser of our own.
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from skconsole.core.durations import format_limit, parse_duration
from skconsole.core.errors import ConfigError
from skconsole.core.text import quoted

Missed = Literal["once", "skip"]
MISSED_CHOICES: tuple[Missed, ...] = ("once", "skip")
#: shortest interval: ticks are looked for a few times a second, no faster
MIN_EVERY_S = 1.0
#: cronsim reads five fields; these are the usual shorthands for them
_ALIASES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
#: the namespace of tick ids: uuid5(TICK_NAMESPACE, "type@tick-iso-time")
TICK_NAMESPACE = uuid.UUID("0e5b7c1a-53a5-4c2e-9a43-8f1d2b6c7e10")
_ONE_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class Schedule:
    """A type's period: a cron expression in a time zone, or a fixed interval.

    Interval ticks are multiples of the interval since the Unix epoch (UTC), so
    every worker finds the same ones; cron ticks are the expression's times in
    ``timezone`` (a time skipped by a DST change runs at the next valid time).
    ``missed`` says what happens to ticks nobody posted (all workers down, or
    the type paused): ``once`` posts the latest of them, ``skip`` none.
    """

    cron: str | None = None
    every: float | None = None
    timezone: str = "UTC"
    payload: str | None = None  # JSON text, as stored
    missed: Missed = "once"

    def __post_init__(self) -> None:
        if (self.cron is None) == (self.every is None):
            raise ConfigError("a schedule needs exactly one of cron= and every=")
        if self.every is not None and not (math.isfinite(self.every) and self.every >= MIN_EVERY_S):
            raise ConfigError(
                f"every= must be at least {format_limit(MIN_EVERY_S)}, got {self.every!r}"
            )
        if self.cron is not None:
            try:
                CronSim(self._expression, datetime.now(UTC))
            except (CronSimError, ValueError) as exc:
                raise ConfigError(
                    f"invalid cron expression {quoted(self.cron)}: {exc} "
                    "(five fields: minute hour day-of-month month day-of-week, or @daily ...)"
                ) from None
        _zone(self.timezone)
        if self.missed not in MISSED_CHOICES:
            raise ConfigError(f"missed= must be 'once' or 'skip', got {self.missed!r}")

    @classmethod
    def define(
        cls,
        *,
        cron: str | None,
        every: str | float | None,
        timezone: str | None,
        payload: Any,
        missed: str,
    ) -> Schedule:
        """A schedule from a decorator's arguments (``every`` may be "30s", "5m"...)."""
        seconds = (
            parse_duration(every, option="every=", minimum=MIN_EVERY_S)
            if isinstance(every, str)
            else every
        )
        try:
            text = None if payload is None else json.dumps(payload, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"a schedule's payload must be JSON: {exc}") from None
        return cls(
            cron=cron,
            every=None if seconds is None else float(seconds),
            timezone=timezone or "UTC",
            payload=text,
            missed=missed,  # type: ignore[arg-type]  # checked in __post_init__
        )

    @classmethod
    def stored(
        cls,
        *,
        cron: str | None,
        every_s: float | None,
        timezone: str,
        payload: str | None,
        missed: str,
    ) -> Schedule:
        """A definition as sk_schedules_t holds it: any version may have written it, so
        every part is checked here as a decorator's would be (ConfigError)."""
        return cls(
            cron=cron,
            every=every_s,
            timezone=timezone,
            payload=payload,
            missed=missed,  # type: ignore[arg-type]  # checked in __post_init__
        )

    @property
    def _expression(self) -> str:
        assert self.cron is not None
        return _ALIASES.get(self.cron.strip().lower(), self.cron)

    def latest_tick(self, now: datetime) -> datetime:
        """The latest tick at or before ``now``."""
        if self.every is not None:
            n = math.floor(now.timestamp() / self.every)
            return datetime.fromtimestamp(n * self.every, UTC)
        local = (now + _ONE_MICROSECOND).astimezone(_zone(self.timezone))
        return next(CronSim(self._expression, local, reverse=True)).astimezone(UTC)

    def next_tick(self, now: datetime) -> datetime:
        """The first tick after ``now``."""
        if self.every is not None:
            n = math.floor(now.timestamp() / self.every) + 1
            return datetime.fromtimestamp(n * self.every, UTC)
        local = now.astimezone(_zone(self.timezone))
        return next(CronSim(self._expression, local)).astimezone(UTC)

    def describe(self) -> str:
        """``every 30s`` or ``cron 0 3 * * * (Europe/Paris)``."""
        if self.every is not None:
            return f"every {format_limit(self.every)}"
        zone = "" if self.timezone == "UTC" else f" ({self.timezone})"
        return f"cron {self.cron}{zone}"


def tick_id(task_type: str, tick: datetime) -> uuid.UUID:
    """The id of ``task_type``'s job for ``tick``: the same in every worker."""
    return uuid.uuid5(TICK_NAMESPACE, f"{task_type}@{tick.astimezone(UTC).isoformat()}")


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(
            f"unknown time zone {quoted(name)}: use an IANA name such as UTC or Europe/Paris"
        ) from None
