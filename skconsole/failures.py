"""Failure signatures: one short, stable text per *kind* of error.

Operators triage failures by kind, not by job: "timeout after 30s on host
db-7" and "timeout after 31s on host db-2" are the same problem. The
signature is the error's final exception line ("ExcType: message") with the
volatile parts of the message collapsed to placeholders: quoted values, URLs
(the host is kept), paths, UUIDs, hex ids and numbers.

This module is the reference implementation. The database computes the same
function in SQL (``sk_error_signature(text)`` in
``sql/schema/030_skconsole_read_models.sql``), kept in a column by a trigger
so grouping a big table stays cheap; a test checks that both agree.

Every pattern uses ASCII classes only, so Python and PostgreSQL read them the
same way, and none of them can match its own output, which makes the
normalisation idempotent. The function never raises.
"""

from __future__ import annotations

import re

MAX_LENGTH = 300
ELLIPSIS = "\u2026"
PY_TRACEBACK_HEADER = "Traceback (most recent call last):"
NO_ERROR = "(no error text)"

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


def final_exception_line(error: str | bytes | None) -> str:
    """The line that names the error: the last exception of a Python traceback,
    else the first non-blank line (a one-liner, or .NET's ``Type: message``
    that precedes its stack frames). Stripped; "" for an empty text."""
    text = _as_text(error)
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


def cap_error_text(
    text: str, limit: int = 65_536
) -> str:  # placeholder until the helper's version lands
    if len(text) <= limit:
        return text
    marker = f"\n… [{len(text) - limit + 100:,} characters omitted] …\n"
    keep = (limit - len(marker)) // 2
    return text[:keep] + marker + text[-keep:]
