"""How numbers, durations and times read in the console's narrow columns.

Text from the database (task types, errors, hosts, payloads) is shown through
:func:`printable` (from :mod:`skconsole.core.text`): a control character becomes a
visible escape such as ``\x1b``. Textual drops only BEL, BS, VT, FF and CR
from what it draws, so an ESC in a cell would otherwise reach the terminal as
the start of an escape sequence. The keyed tables, the job view and the
confirmations apply it themselves; anything else that shows data should too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from rich.cells import cell_len, set_cell_size

from skconsole.core.durations import format_age
from skconsole.core.text import printable
from skconsole.db.timestamps import EARLIEST_TIME, LATEST_TIME

__all__ = [
    "ELLIPSIS",
    "beyond_signature",
    "cut",
    "first_line",
    "fmt_age_s",
    "fmt_ago",
    "fmt_bytes",
    "fmt_count",
    "fmt_estimate",
    "fmt_int",
    "fmt_ms",
    "fmt_rate",
    "fmt_seconds",
    "format_age",
    "printable",
    "short_id",
    "shorten_signature",
    "spark",
]

#: the mark of a cut: text it ends (or starts) was longer
ELLIPSIS = "…"

_BARS = "▁▂▃▄▅▆▇█"
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


def short_id(task_id: str) -> str:
    return printable(task_id[:8])


def spark(values: Sequence[int], width: int = 12) -> str:
    """A one-line trend of the last ``width`` values, scaled to their own range."""
    tail = list(values)[-width:]
    if not tail:
        return ""
    low, high = min(tail), max(tail)
    if high == low:
        return (_BARS[0] if high == 0 else _BARS[3]) * len(tail)
    span = high - low
    return "".join(_BARS[min(int((v - low) * (len(_BARS) - 1) / span + 0.5), 7)] for v in tail)


def first_line(text: str | None, limit: int = 200) -> str:
    """The first line of ``text``, printable, cut to ``limit`` characters."""
    if not text:
        return ""
    line = text.strip().splitlines()[0] if text.strip() else ""
    line = printable(line)
    return line if len(line) <= limit else line[: limit - 1] + "…"


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


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` terminal cells: whole when it fits, else cut so that
    "…" is its last cell (a wide character is never split; trailing spaces go)."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    return set_cell_size(text, width - 1).rstrip() + ELLIPSIS


# "a.b.TypeName: message": a dotted exception type (at least one dot) and its message
_DOTTED_TYPE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(: .*)", re.DOTALL)


def shorten_signature(signature: str, width: int) -> str:
    """A failure signature in at most ``width`` cells, keeping as much of its message as
    it can: the message is what tells two groups of one exception type apart.

    Whole when it fits. Otherwise the module path of its exception type shortens
    first, as log frameworks abbreviate logger names: package by package from the
    left, each to its initial, until the signature fits or every package is one
    letter (``skconsole.demo.handlers.PaymentDeclined: card declined for order <n>``
    reads ``s.d.handlers.PaymentDeclined: …``, then ``s.d.h.PaymentDeclined: …``);
    the class name is never shortened. Then the message is cut at its end, with "…"
    (:func:`cut`). A signature without a dotted type is only cut.
    """
    if cell_len(signature) <= width:
        return signature
    named = _DOTTED_TYPE.fullmatch(signature)
    if named is None:
        return cut(signature, width)
    *path, name = named.group(1).split(".")
    message = named.group(2)
    shortened = signature
    for i in range(len(path)):
        shortened = ".".join([p[0] for p in path[: i + 1]] + path[i + 1 :] + [name]) + message
        if cell_len(shortened) <= width:
            return shortened
    return cut(shortened, width)


def beyond_signature(line: str, signature: str) -> str:
    """What a job's error line says beyond its group's ``signature`` (the line with its
    values in place of the signature's ``<n>``, ``<str>``, ...): "" when the line is the
    signature itself; else the line from the start of the word where the two part,
    after "…" (``…31s calling https://api.partner.example/v2/orders/48213``); the whole
    line when they part in its first word."""
    if line == signature:
        return ""
    same = 0
    for a, b in zip(line, signature, strict=False):
        if a != b:
            break
        same += 1
    start = line.rfind(" ", 0, same) + 1
    return ELLIPSIS + line[start:] if start > 0 else line
