"""Human durations ("10s", "1.5m", "30d") both ways; used by the CLI and the read-outs."""

import re

from skconsole.errors import ConfigError

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_PATTERN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$")


def parse_duration(text: str) -> float:
    """Seconds in ``text``; a bare number means seconds."""
    match = _PATTERN.match(text)
    if match is None:
        raise ConfigError(
            f"invalid duration {text!r}: use a number with an optional unit, e.g. 500ms, 10s, 5m, 2h, 30d"
        )
    return float(match.group(1)) * _UNITS[match.group(2) or "s"]


def format_age(seconds: float | None) -> str:
    """Compact age for tables: 850ms, 12s, 4m 05s, 3h 12m, 2d 04h."""
    if seconds is None:
        return "-"
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
