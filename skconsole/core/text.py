"""Text from elsewhere, made safe to show in a terminal; and a check for text we send on.

Task types, error messages, hosts, payloads and metric ids come from upstream
systems and may hold control characters. Written raw to a terminal, an ESC
starts an escape sequence (colours, cursor moves, a window title, a hyperlink,
on some terminals a clipboard write), an 8-bit C1 character (``\\x9b`` is a
CSI) does the same, and Unicode bidi controls reorder what is shown so one
text reads as another. :func:`printable` replaces each of them with a visible
escape written in plain ASCII (``\\x1b``, ``\\x9b``, ``\\u202e``), the way
Python's ``repr`` writes them, and leaves every other character alone:
accents, CJK, emoji and their zero-width joiners.

This module imports nothing beyond the standard library, so the engine, the
CLI and the console can all use it.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["is_printable", "is_valid_utf8", "printable", "quoted"]

#: One or more characters that must never reach a terminal raw:
#: C0 controls, DEL, C1 controls; the bidi marks, embeddings, overrides and
#: isolates (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069); the line
#: and paragraph separators U+2028/U+2029; and lone surrogates (what Python
#: makes of bytes that are not UTF-8).
_UNSAFE_CLASS: Final = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE: Final = re.compile(f"[{_UNSAFE_CLASS}]+")
#: The same, but a newline and a tab are kept, for multi-line views; a CR is
#: matched on its own, so that a CRLF (kept as a newline) is always seen whole.
_UNSAFE_KEEPING_LINES: Final = re.compile(
    "\r\n?|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]+"
)
_SURROGATE: Final = re.compile("[\ud800-\udfff]")

_NAMED: Final = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape_char(code: int) -> str:
    named = _NAMED.get(chr(code))
    if named is not None:
        return named
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


#: code point -> its visible escape, for every character the patterns match
_ESCAPES: Final = {
    code: _escape_char(code)
    for low, high in (
        (0x00, 0x1F),
        (0x7F, 0x9F),
        (0x061C, 0x061C),
        (0x200E, 0x200F),
        (0x2028, 0x202E),
        (0x2066, 0x2069),
        (0xD800, 0xDFFF),
    )
    for code in range(low, high + 1)
}


def _escape_run(match: re.Match[str]) -> str:
    return match.group().translate(_ESCAPES)


def _escape_run_keeping_lines(match: re.Match[str]) -> str:
    run = match.group()
    return "\n" if run == "\r\n" else run.translate(_ESCAPES)


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character replaced by a visible escape.

    ``keep_newlines`` keeps ``\\n`` and ``\\t`` (and turns ``\\r\\n`` into
    ``\\n``) for multi-line views such as a traceback; otherwise they are
    escaped too, so the result is one line. The result holds no unsafe
    character, so applying this again changes nothing. Text without any is
    returned as it is, after one scan.
    """
    if text.isprintable():  # the common case, decided in C: nothing to escape
        return text
    if keep_newlines:
        if text.replace("\n", "").replace("\t", "").isprintable():
            return text
        return _UNSAFE_KEEPING_LINES.sub(_escape_run_keeping_lines, text)
    return _UNSAFE.sub(_escape_run, text)


def is_printable(text: str, *, keep_newlines: bool = False) -> bool:
    """True when :func:`printable` would return ``text`` unchanged."""
    pattern = _UNSAFE_KEEPING_LINES if keep_newlines else _UNSAFE
    return pattern.search(text) is None


def is_valid_utf8(text: str) -> bool:
    """False when ``text`` holds a lone surrogate, so it cannot be written as UTF-8.

    Python turns command-line bytes that are not UTF-8 into lone surrogates
    (``b"\\xff"`` becomes ``"\\udcff"``); PostgreSQL, JSON consumers and uuid5
    all refuse them later, with less helpful errors.
    """
    return text.isascii() or _SURROGATE.search(text) is None


def quoted(text: str, limit: int = 60) -> str:
    """``text`` quoted for an error message: Python's repr (which escapes every
    non-printable character) of at most ``limit`` characters."""
    return repr(text[:limit]) + ("…" if len(text) > limit else "")
