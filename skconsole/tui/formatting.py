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

from rich.cells import cell_len, set_cell_size

from skconsole.core.durations import format_age
from skconsole.core.figures import (
    fmt_age_s,
    fmt_ago,
    fmt_bytes,
    fmt_count,
    fmt_estimate,
    fmt_int,
    fmt_ms,
    fmt_rate,
    fmt_seconds,
)
from skconsole.core.text import printable

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


def short_id(task_id: str) -> str:
    return printable(task_id[:8])


def spark(values: Sequence[int], width: int = 12, *, from_zero: bool = False) -> str:
    """A one-line trend of the last ``width`` values, scaled to their own range (or, with
    ``from_zero``, from 0 to their highest: a count's quiet minutes stay at the bottom)."""
    tail = list(values)[-width:]
    if not tail:
        return ""
    low, high = (0 if from_zero else min(tail)), max(tail)
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
