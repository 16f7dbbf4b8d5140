"""How numbers, durations and times read in narrow columns, said once for every face.

The console's panels and ``skconsole status`` draw a view's columns
(:mod:`skconsole.views`) with these: a count, an estimate, a size, a duration
in its most readable unit, an age from a point in time. Plain text, no UI
library.
"""

from __future__ import annotations

from datetime import UTC, datetime

from skconsole.core.durations import format_age

#: What a timestamptz past datetime's range reads as (``infinity``, year 10000 on).
LATEST_TIME = datetime.max.replace(tzinfo=UTC)
#: What one before it reads as (``-infinity``, BC dates).
EARLIEST_TIME = datetime.min.replace(tzinfo=UTC)

_SCALES = ((1e9, "G"), (1e6, "M"), (1e3, "k"))


def fmt_int(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def fmt_estimate(value: int) -> str:
    """An estimated count, no more precise than it is: "≈950", "≈40.1k", "≈3.87M"."""
    if value < 1000:
        return f"≈{value}"
    # the largest unit that does not round to 1,000 of the next smaller one
    size, unit = next((s, u) for s, u in _SCALES if value >= s * 0.9995)
    return f"≈{value / size:.3g}{unit}"


def fmt_count(value: int, estimated: bool) -> str:
    """A count: exact as "12,345", estimated as "≈12.3k"."""
    return fmt_estimate(value) if estimated else f"{value:,}"


def fmt_bytes(n: int) -> str:
    """A size in a narrow column: "512 B", "456 kB", "318 MB", "1.9 GB"."""
    size = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" or size >= 10 else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"


def fmt_ms(ms: float | None) -> str:
    """Milliseconds as the most readable unit: 4ms, 850ms, 1.2s, 4m 05s."""
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms:.0f}ms"
    return format_age(ms / 1000.0)


def fmt_rate(per_s: float | None) -> str:
    if per_s is None:
        return "-"
    if per_s == 0:
        return "0/s"
    if per_s < 0.1:
        return f"{per_s * 60:.1f}/min"
    return f"{per_s:,.1f}/s"


def fmt_ago(at: datetime | None, now_epoch: float, *, suffix: bool = True) -> str:
    """``at`` as an age relative to the console clock ("4m 05s ago"); "-" for none, and for
    a time no clock can tell an age from (infinity, written by another application)."""
    if at is None or at in (EARLIEST_TIME, LATEST_TIME):
        return "-"
    age = format_age(max(now_epoch - at.timestamp(), 0.0))
    return f"{age} ago" if suffix else age


def fmt_seconds(seconds: float) -> str:
    """A duration as typed: "0.5s", "3s", "30m", "7d"; else a compact age ("4m 05s")."""
    if seconds < 1:
        return f"{seconds:g}s"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    if seconds < 60:
        return f"{int(seconds)}s"
    return format_age(seconds)


def fmt_age_s(seconds: float) -> str:
    """A data age in whole seconds under a minute ("0s", "47s"), else a compact age."""
    return f"{int(seconds)}s" if seconds < 60 else format_age(seconds)
