"""How every read model runs its statement and reads its rows: by column name.

A row is built by a function (usually a dataclass) from its columns as keyword
arguments (psycopg's ``kwargs_row``), so a column added to a query cannot shift
the ones after it, and a misspelt column fails at the first read instead of
filling a wrong field. The statements live in sql/queries, one per file.

A statement that reads skconsole's own objects may have a twin, ``NAME_compat.sql``,
for a database that has Stakhanovise.NET's tables alone (:mod:`skconsole.db.layout`):
:func:`fetch` runs the twin there; one that reads only skconsole's objects (workers,
limits, schedules, the audit log: :data:`OURS_ONLY`) has no rows there. So a read model
names its statement once, and what a database without our objects gets is decided
here, from the connection's capability asked once per connection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg.rows import kwargs_row

from skconsole.db.layout import has_skconsole_objects
from skconsole.db.sqlfiles import QUERIES, query

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
    if name in OURS_ONLY and not has_skconsole_objects(conn):
        return []
    with conn.cursor(row_factory=kwargs_row(row)) as cur:
        return cur.execute(query(for_database(conn, name)), params, prepare=False).fetchall()


#: the statements that read skconsole's own objects alone: on Stakhanovise.NET's tables
#: alone there is nothing to read (its workers register nowhere; it keeps no limits,
#: SLOs, paused types, schedules or audit log)
OURS_ONLY = frozenset(
    {
        "workers",
        "paused_types",
        "limits",
        "slos",
        "schedules",
        "audit_list",
        "reaped_attempts",
        "gauges",
        "audit_window",
        "incident_samples",
        "incident_workers",
        "record_first_seen",
        "breakers",
        "why_breakers",
        "waves_list",
        "waves_waves",
        "waves_tally",
    }
)


#: the suffix of a statement's twin for a database without skconsole's objects
COMPAT = "_compat"


def for_database(conn: Conn, name: str) -> str:
    """``name``, or its ``_compat`` twin where ``conn``'s database has Stakhanovise.NET's
    tables alone."""
    twin = name + COMPAT
    if twin in QUERIES and not has_skconsole_objects(conn):
        return twin
    return name


def iso(value: datetime | None) -> str | None:
    """An instant as JSON writes it (None stays None)."""
    return value.isoformat() if value is not None else None
