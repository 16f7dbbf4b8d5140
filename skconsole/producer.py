"""Posting jobs, from Python (sync or async) and from ``skconsole enqueue``.

Every post writes the result row and the queue row in one statement and
notifies waiting workers once per statement, so thousands of jobs cost one
round trip. A job key makes the id deterministic (uuid5), which turns a
repeated post into a no-op while the job waits and into a re-run once it has
finished.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.errors import InvalidJobError
from skconsole.text import is_valid_utf8

KEY_NAMESPACE = uuid.UUID("5b0e7a53-3c1f-4f55-9d0b-0c5a6b2f8e11")
MAX_PRIORITY = 2**31 - 1
MAX_NAME = 250
BATCH_ROWS = 5_000
#: The statements of a post: one job without a key (nothing to conflict with,
#: plain parameters), or any jobs (arrays; keys and re-run requests).
POST_NEW = query("post_new_job")
POST_MANY = query("post_jobs")
#: The longest delay: 100 years (36,500 days), so the run-after time stays a date.
MAX_DELAY_S = 36_500 * 86_400.0
#: The deepest nesting of arrays and objects a payload may have: deeper ones
#: are refused when posted rather than failing every reader that parses them.
MAX_PAYLOAD_DEPTH = 500
_TOO_DEEP = (
    f"payload is nested too deeply (at most {MAX_PAYLOAD_DEPTH} levels of arrays and objects)"
)


def default_source() -> str:
    return f"skconsole@{socket.gethostname()}:{os.getpid()}"[:MAX_NAME]


def job_id_for_key(key: str) -> uuid.UUID:
    """The id a keyed job always gets: the same key, the same job."""
    return uuid.uuid5(KEY_NAMESPACE, key)


@dataclass
class Job:
    """One job to post. ``payload`` is any JSON-serialisable value, or use ``payload_json``."""

    task_type: str
    payload: Any = None
    priority: int = 0
    delay: float = 0.0
    key: str | None = None
    source: str | None = None
    payload_json: str | None = None
    task_id: uuid.UUID = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.task_type, str) or not self.task_type.strip():
            raise InvalidJobError("task type must be a non-empty string")
        _check_text("task type", self.task_type, MAX_NAME)
        if isinstance(self.priority, bool) or not isinstance(self.priority, int):
            raise InvalidJobError(f"priority must be an integer, got {self.priority!r}")
        if not 0 <= self.priority <= MAX_PRIORITY:
            raise InvalidJobError(
                f"priority must be between 0 and {MAX_PRIORITY}, got {self.priority}"
            )
        if isinstance(self.delay, bool) or not isinstance(self.delay, int | float):
            raise InvalidJobError(f"delay must be a number of seconds, got {self.delay!r}")
        if not math.isfinite(self.delay) or not 0 <= self.delay <= MAX_DELAY_S:
            raise InvalidJobError(
                f"delay must be between 0 and {MAX_DELAY_S:,.0f} seconds (100 years),"
                f" got {self.delay}"
            )
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
        else:
            try:
                self.payload_json = json.dumps(self.payload, allow_nan=False, separators=(",", ":"))
            except RecursionError:
                raise InvalidJobError(_TOO_DEEP) from None
            except (TypeError, ValueError) as exc:
                raise InvalidJobError(f"payload is not JSON-serialisable: {exc}") from None
            _check_depth(self.payload_json)
        if "\x00" in self.payload_json:
            raise InvalidJobError(
                "payload must not contain NUL characters (PostgreSQL text cannot hold them)"
            )
        self.task_id = job_id_for_key(self.key) if self.key is not None else uuid.uuid4()


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


def validate_payload_json(text: str) -> str:
    """The text itself if it is one valid JSON document, else a clear InvalidJobError.

    Valid means: UTF-8 text, parseable JSON, nested at most MAX_PAYLOAD_DEPTH deep.
    """
    if not isinstance(text, str):
        raise InvalidJobError(f"payload JSON must be a string, got {type(text).__name__}")
    if not is_valid_utf8(text):
        raise InvalidJobError("payload is not valid UTF-8 text")
    _check_depth(text)
    try:
        json.loads(text)
    except RecursionError:
        raise InvalidJobError(_TOO_DEEP) from None
    except ValueError as exc:
        raise InvalidJobError(f"payload is not valid JSON: {exc}") from None
    return text


@dataclass
class PostResult:
    """What a post did: ids in input order; how many were queued, skipped or marked for re-run."""

    ids: list[uuid.UUID]
    posted: int
    rerun_requested: int = 0

    @property
    def skipped(self) -> int:
        return len(self.ids) - self.posted - self.rerun_requested


def _batches(jobs: Sequence[Job], default_src: str) -> list[dict[str, Any]]:
    """The parameters of post_jobs.sql, BATCH_ROWS jobs a statement."""
    batches = []
    for start in range(0, len(jobs), BATCH_ROWS):
        chunk = jobs[start : start + BATCH_ROWS]
        ids = [j.task_id for j in chunk]
        if len(set(ids)) != len(ids):
            raise InvalidJobError("the same job key appears twice in one post")
        batches.append(
            {
                "ids": ids,
                "types": [j.task_type for j in chunk],
                "sources": [j.source or default_src for j in chunk],
                "payloads": [j.payload_json for j in chunk],
                "priorities": [j.priority for j in chunk],
                "delays_ms": [j.delay * 1000.0 for j in chunk],
                "keyed": [j.key is not None for j in chunk],
            }
        )
    return batches


def _new(job: Job, default_src: str) -> dict[str, Any]:
    """The parameters of post_new_job.sql: a lone job without a key, no arrays."""
    return {
        "id": job.task_id,
        "type": job.task_type,
        "source": job.source or default_src,
        "payload": job.payload_json,
        "priority": job.priority,
        "delay_ms": job.delay * 1000.0,
    }


def _add(result: PostResult, row: tuple[Any, ...] | None) -> None:
    if row is not None:
        result.posted += int(row[0])
        result.rerun_requested += int(row[2])


def _as_jobs(task_type: str, payload: Any, **kw: Any) -> list[Job]:
    return [Job(task_type, payload, **kw)]


class Producer:
    """Posts jobs over one connection of its own (opened on first use)."""

    def __init__(self, db: Database | str, source: str | None = None) -> None:
        self.db = db if isinstance(db, Database) else Database(db)
        self.source = source or default_source()
        self._conn: psycopg.Connection[Any] | None = None

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = self.db.connect(application_name="skconsole-producer")
        return self._conn

    def post(self, task_type: str, payload: Any = None, **kw: Any) -> uuid.UUID:
        """Post one job; returns its id. Keyword arguments as in :class:`Job`."""
        return self.post_many(_as_jobs(task_type, payload, **kw)).ids[0]

    def post_many(self, jobs: Sequence[Job]) -> PostResult:
        """Post all jobs atomically, a few thousand rows per statement.

        Up to BATCH_ROWS jobs take one statement and one round trip (the
        connection autocommits); more share one transaction.
        """
        result = PostResult(ids=[j.task_id for j in jobs], posted=0)
        if not jobs:
            return result
        conn = self._connection()
        if len(jobs) == 1 and jobs[0].key is None:
            _add(
                result, conn.execute(POST_NEW, _new(jobs[0], self.source), prepare=True).fetchone()
            )
            return result
        batches = _batches(jobs, self.source)
        if len(batches) == 1:
            _add(result, conn.execute(POST_MANY, batches[0], prepare=True).fetchone())
            return result
        with conn.transaction():
            for params in batches:
                _add(result, conn.execute(POST_MANY, params, prepare=True).fetchone())
        return result

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncProducer:
    """The asyncio twin of :class:`Producer`."""

    def __init__(self, db: Database | str, source: str | None = None) -> None:
        self.db = db if isinstance(db, Database) else Database(db)
        self.source = source or default_source()
        self._conn: psycopg.AsyncConnection[Any] | None = None

    async def _connection(self) -> psycopg.AsyncConnection[Any]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = await self.db.aconnect(application_name="skconsole-producer")
        return self._conn

    async def post(self, task_type: str, payload: Any = None, **kw: Any) -> uuid.UUID:
        return (await self.post_many(_as_jobs(task_type, payload, **kw))).ids[0]

    async def post_many(self, jobs: Sequence[Job]) -> PostResult:
        result = PostResult(ids=[j.task_id for j in jobs], posted=0)
        if not jobs:
            return result
        conn = await self._connection()
        if len(jobs) == 1 and jobs[0].key is None:
            cur = await conn.execute(POST_NEW, _new(jobs[0], self.source), prepare=True)
            _add(result, await cur.fetchone())
            return result
        batches = _batches(jobs, self.source)
        if len(batches) == 1:
            cur = await conn.execute(POST_MANY, batches[0], prepare=True)
            _add(result, await cur.fetchone())
            return result
        async with conn.transaction():
            for params in batches:
                cur = await conn.execute(POST_MANY, params, prepare=True)
                _add(result, await cur.fetchone())
        return result

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def __aenter__(self) -> AsyncProducer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
