"""Failure signatures: one short, stable text per *kind* of error.

Operators triage failures by kind, not by job: "timeout after 30s on host
db-7" and "timeout after 31s on host db-2" are the same problem. The
signature is the error's naming line ("ExcType: message") with the
volatile parts of the message collapsed to placeholders: quoted values, URLs
(the host is kept), paths, UUIDs, hex ids and numbers. An error stored as
Stakhanovise.NET's QueuedTaskError JSON (:mod:`skconsole.core.stored_error`: what
skconsole writes, and what .NET writes) is named by its ``Type`` and the first
line of its ``Message``; a plain text by its final exception line.

This module is the reference implementation. The database computes the same
function in SQL (``sk_error_signature(text)`` in
``sql/schema/030_skconsole_read_models.sql``), kept in a column by a trigger
so grouping a big table stays cheap; a test checks that both agree. On a
database without skconsole's objects (Stakhanovise.NET's alone, read-only),
the failure groups are computed with this one instead, over a capped scan.

Every pattern uses ASCII classes only, so Python and PostgreSQL read them the
same way, and none of them can match its own output, which makes the
normalisation idempotent. The function never raises.

The signature reads a bounded part of the text, so its cost per error is
bounded however long the error is (both implementations follow exactly this
definition; lengths count characters, i.e. code points):

1. The view (``signature_view``): the text itself when it is at most
   ``VIEW_WHOLE`` (32,768) characters long; else its first ``VIEW_HEAD``
   (16,384) characters, a line break, and its last ``VIEW_TAIL`` (16,384)
   characters. When the tail starts in the middle of a line (the character
   before it is not a line break), one space goes before it, so that cut-off
   line reads as indented: it is never taken for a traceback header or for
   the exception line of a traceback.
2. The naming line (``final_exception_line``) is found in the view as
   described there, then cut to its first ``LINE_LIMIT`` (1,024) characters
   and stripped of trailing whitespace; only that goes through the
   normalisation below (the signature keeps at most 300 characters anyway).

Ordinary errors are untouched by these bounds: a text of at most 32,768
characters whose naming line is at most 1,024 characters signs exactly as it
would unbounded. A huge Python traceback keeps its last exception line (in the
tail), a huge .NET text its leading "Type: message" line (in the head). And as
long as both keep at least the view's head and tail, a text shortened by
``cap_error_text`` (the worker stores errors that way) signs exactly like the
whole text.
"""

from __future__ import annotations

import re

from skconsole.core.stored_error import ELLIPSIS, StoredError, parse_json

MAX_LENGTH = 300
PY_TRACEBACK_HEADER = "Traceback (most recent call last):"
NO_ERROR = "(no error text)"

# The bounded part of an error text the signature reads (see the module docstring;
# sk_error_signature_view() and sk_error_final_line() in SQL use the same numbers).
VIEW_WHOLE = 32_768
VIEW_HEAD = 16_384
VIEW_TAIL = 16_384
LINE_LIMIT = 1_024


# Characters that make a neighbouring quote part of a word ("can't", "'1'2").
# Placeholders start with "<" and end with ">", and a truncated signature ends
# with the ellipsis, so these count as word characters too: a second pass then
# sees the same boundaries as the first.
_W = r"A-Za-z0-9_<>" + ELLIPSIS
_WS = " \t\r\n\f\v"

_TYPE_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*): (.*)", re.DOTALL)
# a quoted value; "<" and ">" may not be inside, so a placeholder is never re-quoted
_QUOTED = re.compile(rf"(?<![{_W}])(?:'[^'\n<>]*'|\"[^\"\n<>]*\"|`[^`\n<>]*`)(?![{_W}])")
# a URL keeps its scheme and host; its path goes (a URL without one is left as it is)
_URL_PATH = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[A-Za-z0-9.\-]*)/[^ \t\r\n\f\v'\"`<>()]*")
_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
_HEX_PREFIXED = re.compile(r"0[xX][0-9A-Fa-f]+")
_HEX_LONG = re.compile(
    r"(?<![A-Za-z0-9_])(?=[0-9A-Fa-f]*[0-9])(?=[0-9A-Fa-f]*[A-Fa-f])[0-9A-Fa-f]{8,}(?![A-Za-z0-9_])"
)
_PATH = re.compile(
    r"(?<![A-Za-z0-9_.<>/:\\])(?:[A-Za-z]:\\|~?/)[A-Za-z0-9_.\-~]+(?:[\\/][A-Za-z0-9_.\-~]+)*[\\/]?"
)
# a message that is one quoted string as a whole (Python's KeyError repr): the
# quotes go, the text inside is normalised like any other message
_WHOLLY_QUOTED = re.compile(r"'[^'\n<>]*'|\"[^\"\n<>]*\"|`[^`\n<>]*`")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_SPACES = re.compile(r"[ \t\r\n\f\v]+")


def _as_text(error: str | bytes | None) -> str:
    if error is None:
        return ""
    if isinstance(error, bytes | bytearray):
        return bytes(error).decode("utf-8", errors="replace")
    return str(error)


def signature_view(error: str | bytes | None) -> str:
    """The bounded part of an error text the signature reads: the text itself
    up to ``VIEW_WHOLE`` characters, else its first ``VIEW_HEAD`` and last
    ``VIEW_TAIL`` characters joined by a line break (plus one space when the
    tail starts mid-line). ``sk_error_signature_view(text)`` in SQL is the same."""
    text = _as_text(error)
    if len(text) <= VIEW_WHOLE:
        return text
    seam = "\n" if text[-VIEW_TAIL - 1] == "\n" else "\n "
    return text[:VIEW_HEAD] + seam + text[-VIEW_TAIL:]


def _naming_line(text: str) -> str:
    lines = [line.rstrip(_WS) for line in text.split("\n")]
    header_at = max(
        (i for i, line in enumerate(lines) if line == PY_TRACEBACK_HEADER), default=None
    )
    if header_at is not None:
        for line in lines[header_at + 1 :]:
            if line and line[0] not in _WS:
                return line
        non_blank = [line.strip(_WS) for line in lines if line.strip(_WS)]
        return non_blank[-1] if non_blank else ""
    for line in lines:
        if line.strip(_WS):
            return line.strip(_WS)
    return ""


def final_exception_line(error: str | bytes | None) -> str:
    """The line that names the error. For QueuedTaskError JSON, ``Type: first line of
    Message`` (:attr:`StoredError.headline`). Otherwise read in ``signature_view(error)``:
    the last exception of a Python traceback (the first unindented line after the
    last "Traceback (most recent call last):" line, else the last non-blank
    line), otherwise the first non-blank line (a one-liner, or .NET's
    ``Type: message`` that precedes its stack frames). At most ``LINE_LIMIT``
    characters, stripped; "" for an empty text."""
    text = _as_text(error)
    parsed = parse_json(text)
    line = parsed.headline if parsed is not None else _naming_line(signature_view(text))
    return line[:LINE_LIMIT].rstrip(_WS)


def read_error(error: str | None) -> StoredError | None:
    """A stored error in either shape: QueuedTaskError JSON as it is; a plain text
    (written before schema 7, or by hand) split at its naming line into type and
    message, the whole text kept as its stack trace when it holds more than that
    line. None for no error."""
    if error is None or not error.strip(_WS):
        return None
    parsed = parse_json(error)
    if parsed is not None:
        return parsed
    line = final_exception_line(error)
    stack = error if error.strip(_WS) != line else None  # more than the naming line
    typed = _TYPE_LINE.fullmatch(line)
    if typed is not None:
        return StoredError(typed.group(1), typed.group(2), stack)
    return StoredError("", line, stack)


def normalize_message(message: str) -> str:
    """Collapse the volatile parts of an error message to placeholders."""
    text = _QUOTED.sub("<str>", message)
    text = _URL_PATH.sub(r"\1<path>", text)
    text = _UUID.sub("<uuid>", text)
    text = _HEX_PREFIXED.sub("<hex>", text)
    text = _HEX_LONG.sub("<hex>", text)
    text = _PATH.sub("<path>", text)
    text = _NUMBER.sub("<n>", text)
    return _SPACES.sub(" ", text).strip(_WS)


def error_signature(error: str | bytes | None) -> str:
    """The failure-group key of an error text (deterministic and idempotent)."""
    line = final_exception_line(error)
    if not line:
        return NO_ERROR
    typed = _TYPE_LINE.fullmatch(line)
    if typed is not None:
        message = typed.group(2)
        if _WHOLLY_QUOTED.fullmatch(message):
            message = message[1:-1]
        signature = f"{typed.group(1)}: {normalize_message(message)}"
    else:
        signature = normalize_message(line)
    signature = _SPACES.sub(" ", signature).strip(_WS) or NO_ERROR
    if len(signature) > MAX_LENGTH:
        signature = signature[: MAX_LENGTH - 1] + ELLIPSIS
    return signature
