"""How every read model runs its statement and reads its rows: by column name.

A row is built by a function (usually a dataclass) from its columns as keyword
arguments (psycopg's ``kwargs_row``), so a column added to a query cannot shift
the ones after it, and a misspelt column fails at the first read instead of
filling a wrong field. The statements live in sql/queries, one per file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg.rows import kwargs_row

from skconsole.db.sqlfiles import query

Conn = psycopg.Connection[Any]
T = TypeVar("T")


def fetch(
    conn: Conn, name: str, row: Callable[..., T], params: Mapping[str, Any] | None = None
) -> list[T]:
    """The rows of the named query, each ``row(**columns)``.

    Never prepared: the optional filters (``%(x)s IS NULL OR ...``) need the plan
    made for the actual values. JIT is off for every skconsole session (see
    db.connect): compiling a plan costs more than these queries take.
    """
    with conn.cursor(row_factory=kwargs_row(row)) as cur:
        return cur.execute(query(name), params, prepare=False).fetchall()


def iso(value: datetime | None) -> str | None:
    """An instant as JSON writes it (None stays None)."""
    return value.isoformat() if value is not None else None
