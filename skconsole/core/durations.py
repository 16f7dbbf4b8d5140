"""Human durations ("10s", "1.5m", "30d") both ways, and absolute times; used by the
CLI and the read-outs."""

import math
import re
from datetime import UTC, datetime, timedelta

from skconsole.core.errors import ConfigError
from skconsole.core.text import quoted

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_PATTERN = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h|d|w)?\s*$", re.ASCII)

#: No duration means anything beyond 100 years (36,500 days): past it a delay
#: or an age no longer fits a date, on either side of now.
MAX_DURATION_S = 36_500 * 86_400.0


def parse_duration(
    text: str,
    *,
    option: str | None = None,
    minimum: float = 0.0,
    maximum: float = MAX_DURATION_S,
) -> float:
    """Seconds in ``text``; a bare number means seconds.

    Anything below ``minimum`` or above ``maximum`` (100 years unless told) is
    refused with a ConfigError that names ``option`` (e.g. ``--older-than``).
    """
    match = _PATTERN.match(text)
    if match is None:
        where = f" for {option}" if option else ""
        raise ConfigError(
            f"invalid duration {quoted(text)}{where}: use a number with an optional unit,"
            " e.g. 500ms, 10s, 5m, 2h, 30d"
        )
    seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    if not math.isfinite(seconds) or not minimum <= seconds <= maximum:
        raise ConfigError(
            f"{option or 'a duration'} must be between {format_limit(minimum)}"
            f" and {format_limit(maximum)}, got {quoted(text.strip())}"
        )
    return seconds


def check_seconds(
    value: object, *, option: str, maximum: float, shown_maximum: str | None = None
) -> None:
    """Refuse a number of seconds given as a number (not typed as a duration) that is
    none, or outside 0 to ``maximum`` (written ``shown_maximum``, else as typed: 7d),
    with a ConfigError that names ``option`` (e.g. ``--spread``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{option} must be a number of seconds, got {value!r}")
    if not math.isfinite(value) or not 0 <= value <= maximum:
        shown = shown_maximum or format_limit(maximum)
        raise ConfigError(f"{option} must be between 0s and {shown}, got {value:g}s")


def format_limit(seconds: float) -> str:
    """A bound as typed: 0s, 10ms, 1h, 36500d."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    for unit in ("d", "h", "m"):
        size = _UNITS[unit]
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def format_age(seconds: float | None) -> str:
    """Compact age for tables: 850ms, 12s, 4m 05s, 3h 12m, 2d 04h.

    "unknown" past MAX_DURATION_S (or not a number): such an age comes from a
    time nobody meant (infinity, year 1, written by another application), and
    a count of days in the hundreds of thousands would read as a fact.
    """
    if seconds is None:
        return "-"
    if not math.isfinite(seconds) or seconds > MAX_DURATION_S:
        return "unknown"
    if seconds < 0:
        seconds = 0.0
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.0f}s" if seconds >= 10 else f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h {minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours:02d}h"


def parse_time(text: str, *, option: str, within_s: float = MAX_DURATION_S) -> datetime:
    """An ISO 8601 time with its zone (``2027-01-01T06:00:00Z``, ``...+01:00``), at most
    ``within_s`` (100 years unless told) from now, either way.

    A time without a zone is refused: read in the server's zone or the
    client's, it could mean two different moments. One further off is a
    sentinel ("never", year 9999) rather than a time: no age or wait could be
    told from it.
    """
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(
            f"invalid time {quoted(text)} for {option}: use ISO 8601 with a zone,"
            " e.g. 2027-01-01T06:00:00Z or 2027-01-01T07:00:00+01:00"
        ) from None
    if value.tzinfo is None or value.utcoffset() is None:
        raise ConfigError(f"{option} needs a time zone, e.g. {quoted(text.strip() + 'Z')} for UTC")
    now, reach = datetime.now(UTC), timedelta(seconds=within_s)
    if not now - reach <= value <= now + reach:
        raise ConfigError(
            f"{option} must be within {format_limit(within_s)} ({within_s / 31_536_000:g} years)"
            f" of now, got {quoted(text.strip())}"
        )
    return value
