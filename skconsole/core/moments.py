"""A past moment as an operator types it: ``02:47`` (a time of day in UTC, the last one
that has come: today's, or yesterday's if today's is still ahead), ``2h ago`` (a duration
back from now) or a full ISO 8601 time with its zone (``2026-12-06T02:47:00Z``). Used by
``skconsole --at`` and ``skconsole incident export --since/--until``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from skconsole.core.durations import parse_duration, parse_time
from skconsole.core.errors import ConfigError
from skconsole.core.text import quoted

_CLOCK = re.compile(r"^\s*([01]?[0-9]|2[0-3]):([0-5][0-9])\s*$", re.ASCII)
_AGO = re.compile(r"^\s*(.+?)\s+ago\s*$", re.ASCII)


def parse_moment(text: str, *, option: str, now: datetime) -> datetime:
    """The instant ``text`` names, not after ``now``; a ConfigError naming ``option``."""
    clock = _CLOCK.match(text)
    if clock is not None:
        day = now.astimezone(UTC).replace(second=0, microsecond=0)
        at = day.replace(hour=int(clock.group(1)), minute=int(clock.group(2)))
        return at - timedelta(days=1) if at > now else at
    ago = _AGO.match(text)
    if ago is not None:
        return now - timedelta(seconds=parse_duration(ago.group(1), option=option))
    if "T" not in text and " " not in text.strip():
        raise ConfigError(
            f"invalid time {quoted(text)} for {option}: give a time of day in UTC (02:47),"
            " a duration back (2h ago) or an ISO 8601 time with its zone"
            " (2026-12-06T02:47:00Z)"
        )
    at = parse_time(text, option=option)
    if at > now:
        raise ConfigError(f"{option} is in the future: {quoted(text.strip())}")
    return at
