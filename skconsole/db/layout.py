"""Whether a database has skconsole's objects, or only Stakhanovise.NET's.

A database a Stakhanovise.NET application uses, opened read-only (or by a role
that may not create anything), has its four tables and none of ours. The read
models then read degraded instead of refusing: what needs our objects (owner
and lease data, workers, audit, schedules, limits, stored failure signatures)
is computed another way or left out, and each says so (:data:`DEGRADED_NOTES`).
"""

from __future__ import annotations

from typing import Any

import psycopg

from skconsole.db.rows import value
from skconsole.db.schema import missing_objects

Conn = psycopg.Connection[Any]

#: what a degraded read leaves out or does otherwise, said once for every view
DEGRADED_NOTES = (
    "skconsole's objects are not in this database (Stakhanovise.NET's only, read-only):",
    "in flight: no owner or lease data, so a job is hung once it has been processing"
    " longer than the hung threshold (--unowned-after, 1 h by default);",
    "failure groups: signatures computed here over the newest failed jobs (capped);",
    "workers, audit log, schedules, limits and paused types: none (they live in"
    " skconsole's tables; `skconsole setup` adds them)",
)

#: where a connection keeps what it was found to have (it travels with the connection,
#: like its context: never a process-wide table)
_CAPABILITY = "_skconsole_objects"


def has_skconsole_objects(conn: Conn) -> bool:
    """True when every skconsole object is present: asked once per connection, and kept
    by the connection. What a database without them reads instead is decided in
    :func:`skconsole.read.query.fetch` (a ``_compat`` twin, or no rows)."""
    known = getattr(conn, _CAPABILITY, None)
    if known is None:
        known = not missing_objects(conn)
        setattr(conn, _CAPABILITY, known)
    return bool(known)


def is_standby(conn: Conn) -> bool:
    """Whether the server is a hot standby (in recovery): it serves reads of the queue's
    rows as replayed, and refuses every write."""
    return bool(value(conn, "SELECT pg_is_in_recovery()"))
