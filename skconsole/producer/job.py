"""A job to post, checked when it is made, so a bad one never reaches the server.

A job key makes the id deterministic (uuid5), which turns a repeated post into
a no-op while the job waits and into a re-run once it has finished.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import uuid
from collections.abc import Iterable, Sequence
from copy import copy
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from skconsole.core.errors import InvalidJobError
from skconsole.core.text import is_valid_utf8

KEY_NAMESPACE = uuid.UUID("5b0e7a53-3c1f-4f55-9d0b-0c5a6b2f8e11")
MAX_PRIORITY = 2**31 - 1
MAX_NAME = 250
#: The longest delay: 100 years (36,500 days), so the run-after time stays a date.
MAX_DELAY_S = 36_500 * 86_400.0
#: How far from now a ``run_at`` may be, either way: the bound of a delay. Past it
#: a time is surely a sentinel ("never", year 9999 or year 1), and the read
#: models could tell no wait from it.
_RUN_AT_RANGE = timedelta(seconds=MAX_DELAY_S)
#: The deepest nesting of arrays and objects a payload may have: deeper ones
#: are refused when posted rather than failing every reader that parses them.
MAX_PAYLOAD_DEPTH = 500
_TOO_DEEP = (
    f"payload is nested too deeply (at most {MAX_PAYLOAD_DEPTH} levels of arrays and objects)"
)


#: One encoder for every payload: ``json.dumps`` with options builds a new one a call.
_ENCODER = json.JSONEncoder(allow_nan=False, separators=(",", ":"))
_NAN_ENCODER = json.JSONEncoder(allow_nan=True, separators=(",", ":"))


def default_source() -> str:
    return f"skconsole@{socket.gethostname()}:{os.getpid()}"[:MAX_NAME]


def job_id_for_key(key: str) -> uuid.UUID:
    """The id a keyed job always gets: the same key, the same job."""
    return uuid.uuid5(KEY_NAMESPACE, key)


@dataclass(slots=True)
class Job:
    """One job to post. ``payload`` is any JSON-serialisable value, or use ``payload_json``.

    When it may run: ``delay`` seconds after the server's time of the post, or at
    ``run_at`` (a timezone-aware datetime; a past one means now), not both; with
    ``after`` (job ids), not before every one of those jobs has succeeded.

    Checked when made: a bad job raises
    :class:`~skconsole.core.errors.InvalidJobError` before anything is written.

    Attributes:
        task_type: the handler's type name (1 to 250 characters).
        payload: the job's data, written as JSON (NaN and Infinity are refused).
        priority: lower runs first, from 0 to 2,147,483,647.
        delay: seconds after the server's time of the post before it may run.
        key: a deterministic id (uuid5 of the key): posting the same key again is a
            no-op while the job waits, re-queues it once it has finished, and, while
            it runs, marks it to run once more with the new payload.
        source: what the job records as the process that posted it (default: the
            producer's).
        payload_json: the payload as JSON text already, instead of ``payload``.
        run_at: when it may run, timezone-aware.
        task_id: its id (from ``key`` when given, else a new one).
    """

    task_type: str
    payload: Any = None
    priority: int = 0
    delay: float = 0.0
    key: str | None = None
    source: str | None = None
    payload_json: str | None = None
    run_at: datetime | None = None
    #: the jobs this one waits for: it runs once every one of them has succeeded
    after: Sequence[uuid.UUID | str] = ()
    #: what a parent ending Fatal or Cancelled does to it: "cancel" it, or "run" it anyway
    after_failure: str = "cancel"
    task_id: uuid.UUID = field(init=False)
    #: the W3C trace context a job posts it under (``ctx.post``, a pipeline's next
    #: stage: producer/trace_context.py); a producer posts all its jobs under its caller's
    trace: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the common cases (a type seen before, plain int and float) decided first:
        # a bulk post makes a Job per row
        if type(self.task_type) is not str or self.task_type not in _CHECKED_TYPES:
            _check_type(self.task_type)
        if type(self.priority) is not int and (
            isinstance(self.priority, bool) or not isinstance(self.priority, int)
        ):
            raise InvalidJobError(f"priority must be an integer, got {self.priority!r}")
        if not 0 <= self.priority <= MAX_PRIORITY:
            raise InvalidJobError(
                f"priority must be between 0 and {MAX_PRIORITY}, got {self.priority}"
            )
        if type(self.delay) not in (float, int) and (
            isinstance(self.delay, bool) or not isinstance(self.delay, int | float)
        ):
            raise InvalidJobError(f"delay must be a number of seconds, got {self.delay!r}")
        if not math.isfinite(self.delay) or not 0 <= self.delay <= MAX_DELAY_S:
            raise InvalidJobError(
                f"delay must be between 0 and {MAX_DELAY_S:,.0f} seconds (100 years),"
                f" got {self.delay}"
            )
        if self.run_at is not None:
            _check_run_at(self.run_at, self.delay)
        if self.key is not None:
            if not isinstance(self.key, str):
                raise InvalidJobError(f"key must be a string, got {type(self.key).__name__}")
            if not is_valid_utf8(self.key):
                raise InvalidJobError("key is not valid UTF-8 text")
        if self.source is not None:
            if not isinstance(self.source, str):
                raise InvalidJobError(f"source must be a string, got {type(self.source).__name__}")
            _check_text("source", self.source, MAX_NAME)
        if self.payload_json is not None:
            self.payload_json = validate_payload_json(self.payload_json)
        elif self.payload is None:
            self.payload_json = "null"
        else:
            try:
                self.payload_json = _ENCODER.encode(self.payload)
            except RecursionError:
                raise InvalidJobError(_TOO_DEEP) from None
            except ValueError as exc:
                if _holds_nan(self.payload):
                    raise InvalidJobError(_not_json("NaN or Infinity")) from None
                raise InvalidJobError(f"payload is not JSON-serialisable: {exc}") from None
            except TypeError as exc:
                raise InvalidJobError(f"payload is not JSON-serialisable: {exc}") from None
            _check_depth(self.payload_json)
        if "\x00" in self.payload_json:
            raise InvalidJobError(
                "payload must not contain NUL characters (PostgreSQL text cannot hold them)"
            )
        self.task_id = job_id_for_key(self.key) if self.key is not None else uuid.uuid4()
        if self.after or self.after_failure != "cancel":
            self.after = _checked_after(self.after, self.after_failure, self.task_id, self.key)

    def another(self) -> Job:
        """The same job under a new id, without checking it again: ``enqueue --count``
        makes millions of copies of one job, and parsing its payload each time
        would cost more than posting it."""
        if self.key is not None:
            raise InvalidJobError("a keyed job has one id: it cannot be copied")
        twin = copy(self)
        twin.task_id = uuid.uuid4()
        return twin


#: The most jobs one job may wait for.
MAX_AFTER = 1_000


def _checked_after(
    after: object, after_failure: object, task_id: uuid.UUID, key: str | None
) -> tuple[uuid.UUID, ...]:
    """``after`` as distinct job ids in their order (duplicates ignored), or a clear error."""
    if after_failure not in ("cancel", "run"):
        raise InvalidJobError(f'after_failure must be "cancel" or "run", got {after_failure!r}')
    if isinstance(after, str | uuid.UUID) or not isinstance(after, Iterable):
        raise InvalidJobError("after must be a list of job ids (after=[id1, id2])")
    ids: dict[uuid.UUID, None] = {}
    for item in after:
        if isinstance(item, uuid.UUID):
            ids[item] = None
            continue
        if not isinstance(item, str):
            raise InvalidJobError(f"after holds {type(item).__name__}, not a job id")
        try:
            ids[uuid.UUID(item)] = None
        except ValueError:
            raise InvalidJobError(f"after holds {item[:40]!r}, which is no job id") from None
    if task_id in ids:
        raise InvalidJobError("a job cannot wait for itself (its own id is in after=)")
    if ids and key is not None:
        raise InvalidJobError("a keyed job cannot wait for others (after=): post it without key=")
    if len(ids) > MAX_AFTER:
        raise InvalidJobError(f"a job may wait for at most {MAX_AFTER} jobs, got {len(ids)}")
    return tuple(ids)


def _check_run_at(run_at: object, delay: float) -> None:
    if not isinstance(run_at, datetime):
        raise InvalidJobError(f"run_at must be a datetime, got {type(run_at).__name__}")
    if run_at.tzinfo is None or run_at.utcoffset() is None:
        raise InvalidJobError(
            "run_at must be timezone-aware (e.g. datetime.now(UTC) + timedelta(hours=1)):"
            " a naive time would be read in the server's zone"
        )
    if delay:
        raise InvalidJobError("give either delay or run_at, not both")
    now = datetime.now(UTC)
    if not now - _RUN_AT_RANGE <= run_at <= now + _RUN_AT_RANGE:
        raise InvalidJobError(
            f"run_at must be within 100 years of now, got {run_at.isoformat()}"
            " (for a job that should never run, do not post it)"
        )


#: Task types already checked (bounded: a type is a name, not data).
_CHECKED_TYPES: set[str] = set()
_CHECKED_TYPES_MAX = 10_000


def _check_type(task_type: object) -> None:
    if not isinstance(task_type, str) or not task_type.strip():
        raise InvalidJobError("task type must be a non-empty string")
    _check_text("task type", task_type, MAX_NAME)
    if len(_CHECKED_TYPES) < _CHECKED_TYPES_MAX:
        _CHECKED_TYPES.add(task_type)


def _check_text(what: str, value: str, max_length: int | None = None) -> None:
    """Text PostgreSQL can store: valid UTF-8, no NUL, not too long."""
    if not is_valid_utf8(value):
        raise InvalidJobError(f"{what} is not valid UTF-8 text")
    if "\x00" in value:
        raise InvalidJobError(f"{what} must not contain NUL characters")
    if max_length is not None and len(value) > max_length:
        raise InvalidJobError(f"{what} is longer than {max_length} characters")


_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
#: "{" and "}" read as "[" and "]"; every other ASCII character deleted
_BRACKETS_ONLY = str.maketrans(
    "{}", "[]", "".join(chr(c) for c in range(128) if chr(c) not in "[]{}")
)


def _check_depth(text: str) -> None:
    """Refuse JSON nested deeper than MAX_PAYLOAD_DEPTH, before anything parses it."""
    if text.count("[") + text.count("{") <= MAX_PAYLOAD_DEPTH:
        return  # cannot be that deep: the common case, decided without a scan
    # only the brackets outside strings, all written "[" and "]"
    brackets = _JSON_STRING.sub("", text).translate(_BRACKETS_ONLY)
    # each pass removes the innermost pairs: whatever survives MAX passes is deeper
    for _ in range(MAX_PAYLOAD_DEPTH):
        shorter = brackets.replace("[]", "")
        if len(shorter) == len(brackets):
            return
        brackets = shorter
    if "[]" in brackets:
        raise InvalidJobError(_TOO_DEEP)


def _holds_nan(payload: Any) -> bool:
    """Whether the encoder refused ``payload`` for a NaN or an infinity in it (and
    nothing else): with them allowed it encodes. Only asked once encoding failed."""
    try:
        _NAN_ENCODER.encode(payload)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def _not_json(constant: str) -> str:
    return f"payload holds {constant}, which JSON cannot hold (send null or a string instead)"


class _NotJsonConstant(ValueError):
    """NaN, Infinity or -Infinity in a payload: Python's json reads them, JSON has none."""


def _refuse_constant(constant: str) -> Any:
    raise _NotJsonConstant(constant)


def validate_payload_json(text: str) -> str:
    """The text itself if it is one valid JSON document, else a clear InvalidJobError.

    Valid means: UTF-8 text, parseable JSON, nested at most MAX_PAYLOAD_DEPTH deep.
    NaN, Infinity and -Infinity are refused although Python's json reads them:
    they are no JSON, and a consumer in another language (a .NET one) fails on them.
    """
    if not isinstance(text, str):
        raise InvalidJobError(f"payload JSON must be a string, got {type(text).__name__}")
    if not is_valid_utf8(text):
        raise InvalidJobError("payload is not valid UTF-8 text")
    _check_depth(text)
    try:
        json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise InvalidJobError(_TOO_DEEP) from None
    except _NotJsonConstant as exc:
        raise InvalidJobError(_not_json(str(exc))) from None
    except ValueError as exc:
        raise InvalidJobError(f"payload is not valid JSON: {exc}") from None
    return text


@dataclass
class PostCounts:
    """What a post did: of ``jobs``, how many were queued, marked for re-run or skipped
    (a keyed job already waiting)."""

    jobs: int = 0
    posted: int = 0
    rerun_requested: int = 0

    @property
    def skipped(self) -> int:
        return self.jobs - self.posted - self.rerun_requested

    def add(self, other: PostCounts) -> None:
        self.jobs += other.jobs
        self.posted += other.posted
        self.rerun_requested += other.rerun_requested


@dataclass
class PostResult(PostCounts):
    """A post's counts and the ids of its jobs, in input order."""

    ids: list[uuid.UUID] = field(default_factory=list)
