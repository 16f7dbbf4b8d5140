"""Reading back what a test needs from the database, one row at a time."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row


def one_row(conn: Any, query: Any, params: Any = None) -> Any:
    """The first row ``query`` returns (on a connection or a cursor); the test fails when
    it returns none."""
    row = conn.execute(query, params).fetchone()
    assert row is not None, f"no row: {query}"
    return row


def named_row(conn: Any, query: Any, params: Any = None) -> dict[str, Any] | None:
    """The first row ``query`` returns, by column name (on a connection), or None when it
    returns none."""
    row: dict[str, Any] | None = conn.cursor(row_factory=dict_row).execute(query, params).fetchone()
    return row


def tables_in(dsn: str, schema: str) -> list[str]:
    """The names of the tables in ``schema`` of the database at ``dsn``, in order."""
    with psycopg.connect(dsn) as c:
        rows = c.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY tablename", (schema,)
        ).fetchall()
    return [r[0] for r in rows]


def add_big_results(conn: Any, rows: int = 20_000) -> None:
    """``rows`` processed jobs of type ``bulk`` in the results table, analyzed: a table big
    enough that the planner's choices show (an index, not a scan)."""
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_posted_at_ts)"
        " SELECT gen_random_uuid(), 'bulk', 'test', 'null', 3, 0, now()"
        " FROM generate_series(1, %s)",
        (rows,),
    )
    conn.execute("ANALYZE sk_task_results_t")
