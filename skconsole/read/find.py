"""``skconsole find``: jobs by payload field, type, status, age and error text.

Why a read model of its own: a support ticket names an order or a customer, not
a job id; this finds the jobs whose payload holds it (the rule for comparing
values: :mod:`skconsole.core.payload_terms`). Every search is bounded by its
limit and runs under a statement timeout of its own, so a search over a big
queue cannot hold a connection for long; a search bounded by type is served by
the type index, and a frequent payload path by an expression index an operator
adds (``skconsole find-index``, :mod:`skconsole.ops.find_index`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any, LiteralString
from uuid import UUID

from psycopg.rows import scalar_row
from psycopg.types.json import Jsonb

from skconsole.core.find_query import FindQuery
from skconsole.core.json_types import JsonObject, payload_fields
from skconsole.core.payload_terms import PayloadTerm, terms_json
from skconsole.core.signature import read_error
from skconsole.core.status import JobStatus
from skconsole.db.sqlfiles import query
from skconsole.read.query import Conn, fetch, iso

#: How long a search may run before the server cancels it.
FIND_TIMEOUT_MS = 10_000


@dataclass(frozen=True, slots=True)
class FoundJob:
    """One job a search found (its payload and last error in full)."""

    task_id: UUID
    task_type: str
    status: JobStatus
    priority: int
    error_count: int
    posted_at: datetime
    last_active_at: datetime
    payload: str | None
    last_error: str | None
    #: when its last attempt began (None: it has never run)
    last_attempt_at: datetime | None = None
    #: when it is due, while it waits in the queue (None: it does not wait there)
    due_at: datetime | None = None

    @property
    def error_text(self) -> str:
        """The last error's headline ("" when none)."""
        error = read_error(self.last_error)
        return error.headline if error is not None else ""

    def as_dict(self) -> JsonObject:
        error = read_error(self.last_error)
        return {
            "task_id": str(self.task_id),
            "task_type": self.task_type,
            "status": int(self.status),
            "status_name": self.status.label,
            "priority": self.priority,
            "error_count": self.error_count,
            "posted_at": iso(self.posted_at),
            "last_active_at": iso(self.last_active_at),
            "last_attempt_at": iso(self.last_attempt_at),
            "due_at": iso(self.due_at),
            **payload_fields(self.payload),
            "error": error.as_dict() if error is not None else None,
        }


def _found(*, status: int, **cols: Any) -> FoundJob:
    return FoundJob(status=JobStatus(status), **cols)


def like_pattern(text: str) -> str:
    """A case-insensitive substring pattern for ILIKE: ``%``, ``_`` and ``\\`` taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def payload_params(where: tuple[PayloadTerm, ...]) -> dict[str, object]:
    """The payload terms as find_jobs.sql and the operator selections take them: the first
    as a plain expression (an index on its path can serve it), the rest as one jsonb list."""
    first = where[0] if where else None
    rest = terms_json(where[1:])
    return {
        "where_path": list(first.path) if first else None,
        "where_value": first.value if first else None,
        "where_rest": Jsonb(rest) if rest else None,
    }


def find_params(conn: Conn, q: FindQuery) -> dict[str, object]:
    since: datetime | None = None
    if q.since_seconds is not None:
        (now,) = fetch(conn, "db_now", lambda now: now)
        since = now - timedelta(seconds=q.since_seconds)
    return {
        "task_type": q.task_type,
        "statuses": list(q.statuses) or None,
        "since": since,
        "error": like_pattern(q.error) if q.error is not None else None,
        "limit": q.limit,
        "ids": list(q.ids) or None,
        "parent": q.parent,
        "group": q.group,
        "after": q.after,
        **payload_params(q.where),
    }


def _bounded(conn: Conn, timeout_ms: int) -> None:
    conn.execute("SELECT set_config('statement_timeout', %s, true)", (str(timeout_ms),))


def find(conn: Conn, q: FindQuery, *, timeout_ms: int = FIND_TIMEOUT_MS) -> list[FoundJob]:
    """The jobs ``q`` matches, most recently active first, at most ``q.limit``."""
    params = find_params(conn, q)
    with conn.transaction():
        _bounded(conn, timeout_ms)
        return fetch(conn, "find_jobs", _found, params)


def explain(conn: Conn, q: FindQuery, *, timeout_ms: int = FIND_TIMEOUT_MS) -> list[str]:
    """What the search costs: EXPLAIN (ANALYZE, BUFFERS) of it, its lines (it runs it)."""
    params = find_params(conn, q)
    sql: LiteralString = "EXPLAIN (ANALYZE, BUFFERS) " + query("find_jobs")
    with conn.transaction(), conn.cursor(row_factory=scalar_row) as cur:
        _bounded(conn, timeout_ms)
        lines = cur.execute(sql, params, prepare=False).fetchall()
    return [str(line) for line in lines]


@dataclass(frozen=True)
class FindIndex:
    """A search index ``skconsole find-index add`` made: what it indexes, its state.
    ``stale``: built by an older version on the unbounded value (a big value there
    fails the post that carries it); adding the path again rebuilds it."""

    index: str
    path: str | None  # its comment's, else read from its definition; None: neither says
    task_type: str | None
    valid: bool
    index_bytes: int
    scans: int
    definition: str
    stale: bool = False

    def as_dict(self) -> JsonObject:
        return asdict(self)


#: the path and the type in an index's definition, for one whose comment is missing (a
#: build that failed before its comment was written): ARRAY['a'::text, 'b'::text] and
#: task_type)::text = 'T'::text, quotes doubled inside
_DEFINED_PATH = re.compile(r"ARRAY\[((?:'(?:[^']|'')*'::text(?:, )?)+)\]")
_DEFINED_PART = re.compile(r"'((?:[^']|'')*)'::text")
_DEFINED_TYPE = re.compile(r"task_type\)::text = '((?:[^']|'')*)'::text")


def _defined(definition: str) -> tuple[str | None, str | None]:
    """The path (``payload.a.b``) and the type an index's definition names."""
    path = _DEFINED_PATH.search(definition)
    task_type = _DEFINED_TYPE.search(definition)
    parts = [p.replace("''", "'") for p in _DEFINED_PART.findall(path.group(1))] if path else []
    return (
        "payload." + ".".join(parts) if parts else None,
        task_type.group(1).replace("''", "'") if task_type else None,
    )


def _index(*, comment: str | None, definition: str, **cols: Any) -> FindIndex:
    about: object = None
    if comment:
        try:
            about = json.loads(comment)
        except ValueError:
            about = None
    path = about.get("path") if isinstance(about, dict) else None
    task_type = about.get("task_type") if isinstance(about, dict) else None
    if not isinstance(path, str):
        path, task_type = _defined(definition)
    return FindIndex(
        path=path,
        task_type=task_type if isinstance(task_type, str) else None,
        definition=definition,
        stale="sk_key(" not in definition,
        **cols,
    )


def find_indexes(conn: Conn, results_table: str) -> list[FindIndex]:
    """The search indexes on the results table (``results_table``: its name for to_regclass)."""
    return fetch(conn, "find_indexes", _index, {"table": results_table})
