"""Capping a handler's error text for storing: huge errors keep their head and tail.

A handler can fail with a message of any size (a 40 MB response body in an
exception); stored whole it would cost the signature trigger and every read
of the failure groups dearly. The reference signature
(:mod:`skconsole.signature`) and ``sk_error_signature`` in SQL read only
a bounded head and tail, so a text capped here signs exactly like the whole.
"""

from __future__ import annotations

ELLIPSIS = "\u2026"
#: Longest error text the worker stores.
ERROR_TEXT_LIMIT = 65_536


def cap_error_text(text: str, limit: int = ERROR_TEXT_LIMIT) -> str:
    """``text`` shortened to at most ``limit`` characters for storing.

    A text up to the limit comes back unchanged. A longer one keeps its head
    and its tail (a Python traceback ends with its exception line, .NET starts
    with "Type: message"), half the room each, around an indented marker line
    that says how many characters were left out::

        <head>
          … [1,234,567 characters omitted] …
        <tail>

    The result is then exactly ``limit`` characters long; if the marker leaves
    no room, only the first ``limit`` characters are kept. Slicing only: a
    40 MB text costs a copy of what is kept. ``limit`` must not be negative.
    """
    if limit < 0:
        raise ValueError(f"limit must not be negative, got {limit}")
    size = len(text)
    if size <= limit:
        return text
    # room for text beside a marker sized for the most that could be omitted;
    # then grown while the real, shorter marker leaves more (it never grows back)
    room = limit - len(_omitted_marker(size))
    if room <= 0:
        return text[:limit]
    while (more := limit - len(_omitted_marker(size - room))) > room:
        room = more
    head = room - room // 2
    tail = room // 2
    return text[:head] + _omitted_marker(size - room) + text[size - tail :]


def _omitted_marker(omitted: int) -> str:
    return f"\n  {ELLIPSIS} [{omitted:,} characters omitted] {ELLIPSIS}\n"
