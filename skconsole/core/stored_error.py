"""The error of a job's attempt as stored in ``task_last_error``: Stakhanovise.NET's
``QueuedTaskError`` (``{"Type": ..., "Message": ..., "StackTrace": ...}``).

A .NET consumer reads ``task_last_error`` back when it dequeues a job again and
deserialises it as a ``QueuedTaskError``. Plain text there makes its deserialiser
throw, its transaction roll back and its poller stop, so every error skconsole
writes has that shape: the exception's type, its message, and (for a Python
handler) the whole traceback as the stack trace. Readers take both shapes, since
rows written as plain text (by skconsole before schema 7, or by hand) remain.

Which texts count as the JSON shape is one rule, kept by :func:`parse_json` here
and ``sk_error_json()`` in SQL alike (a test checks they agree): at most
``JSON_LIMIT`` characters, a JSON object once leading whitespace is skipped, with
``Type`` or ``Message`` among its keys, and each of ``Type``, ``Message`` and
``StackTrace`` a string or null when present. Anything PostgreSQL's ``jsonb`` would
refuse (NaN, ``\\u0000``, a lone surrogate) is refused here too.

Stored texts are bounded: a handler can fail with a message of any size (a 40 MB
response body in an exception), which stored whole would cost every read of the
failure groups dearly. :func:`cap_error_text` keeps a huge text's head and tail.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass
from typing import Any

ELLIPSIS = "\u2026"
#: Longest error text the worker stores (a legacy plain-text error, capped).
ERROR_TEXT_LIMIT = 65_536
#: Longest message and stack trace stored in the JSON shape (their sum stays under
#: ERROR_TEXT_LIMIT with room for the type and the JSON around them).
MESSAGE_LIMIT = 16_384
STACK_TRACE_LIMIT = 47_104
TYPE_LIMIT = 1_024
#: Longest text read as the JSON shape: a longer one is read as plain text, so the
#: cost of reading any stored error stays bounded (the worker's are far shorter).
JSON_LIMIT = 1_048_576

_WS = " \t\r\n\f\v"
_FIELDS = ("Type", "Message", "StackTrace")


@dataclass(frozen=True, slots=True)
class StoredError:
    """One attempt's error: what Stakhanovise.NET calls a ``QueuedTaskError``."""

    type: str
    message: str
    stack_trace: str | None = None

    @property
    def headline(self) -> str:
        """``Type: first line of the message``: the line that names the error (what a
        failure signature is made of)."""
        line = first_line(self.message)
        if self.type and line:
            return f"{self.type}: {line}"
        return self.type or line

    def readable(self) -> str:
        """``Type: message``, then the stack trace: for a person to read."""
        head = f"{self.type}: {self.message}" if self.type else self.message
        if self.stack_trace and self.stack_trace.strip(_WS) != head.strip(_WS):
            return f"{head}\n\n{self.stack_trace}"
        return head

    def as_dict(self) -> dict[str, str | None]:
        return {"type": self.type, "message": self.message, "stack_trace": self.stack_trace}

    def to_json(self) -> str:
        """The stored text: compact JSON, as Newtonsoft.Json writes a QueuedTaskError."""
        doc = {"Type": self.type, "Message": self.message, "StackTrace": self.stack_trace}
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))

    def storable(self) -> StoredError:
        """Each part made text PostgreSQL accepts (no NUL, valid UTF-8) and capped."""
        return StoredError(
            cap_error_text(_clean(self.type), TYPE_LIMIT),
            cap_error_text(_clean(self.message), MESSAGE_LIMIT),
            cap_error_text(_clean(self.stack_trace), STACK_TRACE_LIMIT)
            if self.stack_trace is not None
            else None,
        )

    def stored(self) -> str:
        """What goes into ``task_last_error``: :meth:`storable`, as JSON."""
        return self.storable().to_json()

    @classmethod
    def from_exception(cls, exc: BaseException) -> StoredError:
        """``exc`` with its traceback as the stack trace. Never raises: an exception whose
        ``__str__`` raises, or that cannot be formatted at all, is still named by its type."""
        name = exception_type_name(exc)
        try:
            message = str(exc)
        except BaseException:
            message = "<the exception could not be formatted>"
        try:
            stack: str | None = "".join(traceback.format_exception(exc)).strip()
        except BaseException:
            stack = None
        return cls(name, message, stack)


def exception_type_name(exc: BaseException) -> str:
    """The name a Python traceback gives ``exc``'s type: ``module.Qualname``, or the bare
    name for built-ins (``ValueError``)."""
    try:
        kind = type(exc)
        module = getattr(kind, "__module__", None)
        name = kind.__qualname__
    except BaseException:
        return "exception"
    if module in (None, "builtins", "__main__"):
        return name
    return f"{module}.{name}"


def first_line(text: str | None) -> str:
    """The first non-blank line of ``text``, stripped ("" if none)."""
    for line in (text or "").split("\n"):
        stripped = line.strip(_WS)
        if stripped:
            return stripped
    return ""


def parse_json(text: str | None) -> StoredError | None:
    """``text`` read as a QueuedTaskError, or None when it is not one (see the module
    docstring for the rule; ``sk_error_json()`` in SQL follows the same)."""
    if not text or len(text) > JSON_LIMIT or not text.lstrip(_WS).startswith("{"):
        return None
    try:
        doc = json.loads(text, parse_constant=_refuse)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or not ("Type" in doc or "Message" in doc):
        return None
    values = [doc.get(k) for k in _FIELDS]
    if not all(v is None or isinstance(v, str) for v in values):
        return None
    if not _jsonb_safe(doc):
        return None
    kind, message, stack = values
    return StoredError(kind or "", message or "", stack)


def readable_error(text: str) -> str:
    """A stored error for a person: a QueuedTaskError as :meth:`StoredError.readable`,
    any other text as it is."""
    parsed = parse_json(text)
    return parsed.readable() if parsed is not None else text


def _refuse(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _jsonb_safe(value: Any) -> bool:
    """PostgreSQL's jsonb refuses NUL and lone surrogates anywhere in a document."""
    if isinstance(value, str):
        if "\x00" in value:
            return False
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_jsonb_safe(k) and _jsonb_safe(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_jsonb_safe(v) for v in value)
    return True


def _clean(text: str | None) -> str:
    return (text or "").replace("\x00", "\\0").encode("utf-8", "replace").decode("utf-8")


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
