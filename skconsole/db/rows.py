"""Rows read by column name, for the statements below the read layer (the schema
checks, the worker, the producer).

A row is built by a function (usually a dataclass) from its columns as keyword
arguments (psycopg's ``kwargs_row``, set on the cursor: one dict per row, no
more), so a column added to a statement cannot shift the ones after it, and a
misspelt column fails at the first read. A statement of one column gives its
values as they are (``scalar_row``): it has nothing to confuse them with.
The read layer has its own (``skconsole.read.query.fetch``: never prepared).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, LiteralString, TypeVar

import psycopg
from psycopg.abc import Params
from psycopg.rows import kwargs_row, scalar_row

T = TypeVar("T")


def rows(
    conn: psycopg.Connection[Any],
    statement: LiteralString,
    row: Callable[..., T],
    params: Params | None = None,
) -> list[T]:
    """Every row of ``statement``, each ``row(**columns)``."""
    with conn.cursor(row_factory=kwargs_row(row)) as cur:
        return cur.execute(statement, params).fetchall()


def one(
    conn: psycopg.Connection[Any],
    statement: LiteralString,
    row: Callable[..., T],
    params: Params | None = None,
) -> T | None:
    """The first row of ``statement`` as ``row(**columns)``; None: no row."""
    with conn.cursor(row_factory=kwargs_row(row)) as cur:
        return cur.execute(statement, params).fetchone()


def values(
    conn: psycopg.Connection[Any], statement: LiteralString, params: Params | None = None
) -> list[Any]:
    """The values of a statement of one column."""
    with conn.cursor(row_factory=scalar_row) as cur:
        return cur.execute(statement, params).fetchall()


def value(
    conn: psycopg.Connection[Any], statement: LiteralString, params: Params | None = None
) -> Any:
    """The value of a statement of one column and (at most) one row; None: no row."""
    with conn.cursor(row_factory=scalar_row) as cur:
        return cur.execute(statement, params).fetchone()


async def arows(
    conn: psycopg.AsyncConnection[Any],
    statement: LiteralString,
    row: Callable[..., T],
    params: Params | None = None,
    *,
    prepare: bool | None = None,
) -> list[T]:
    """Every row of ``statement``, each ``row(**columns)`` (``prepare`` as psycopg's)."""
    async with conn.cursor(row_factory=kwargs_row(row)) as cur:
        await cur.execute(statement, params, prepare=prepare)
        return await cur.fetchall()


async def aone(
    conn: psycopg.AsyncConnection[Any],
    statement: LiteralString,
    row: Callable[..., T],
    params: Params | None = None,
) -> T | None:
    """The first row of ``statement`` as ``row(**columns)``; None: no row."""
    async with conn.cursor(row_factory=kwargs_row(row)) as cur:
        await cur.execute(statement, params)
        return await cur.fetchone()


async def avalues(
    conn: psycopg.AsyncConnection[Any], statement: LiteralString, params: Params | None = None
) -> list[Any]:
    """The values of a statement of one column."""
    async with conn.cursor(row_factory=scalar_row) as cur:
        await cur.execute(statement, params)
        return await cur.fetchall()


async def avalue(
    conn: psycopg.AsyncConnection[Any], statement: LiteralString, params: Params | None = None
) -> Any:
    """The value of a statement of one column and (at most) one row; None: no row."""
    async with conn.cursor(row_factory=scalar_row) as cur:
        await cur.execute(statement, params)
        return await cur.fetchone()
