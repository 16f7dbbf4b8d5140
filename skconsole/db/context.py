"""What a connection is to skconsole: its queue's layout, and whether it may write.

A :class:`ConnectionContext` travels with each connection a
:class:`~skconsole.db.connect.Database` opens (:func:`context_of`), never in a
global: the SQL a cursor of that connection runs is rewritten for its layout
(:class:`MappedCursor`), and whoever holds the connection asks it for the names
of its tables. A connection skconsole did not open (an application's own, given
to ``Producer.post(connection=...)``) has the default layout unless it is given
one (:func:`with_context`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, Self, cast

import psycopg
from psycopg.abc import Params, Query
from psycopg.copy import AsyncCopy, Copy
from psycopg.rows import Row

from skconsole.db.mapping import DEFAULT_MAPPING, TableMapping
from skconsole.db.sqlfiles import for_layout

_ATTRIBUTE = "_skconsole_context"


@dataclass(frozen=True)
class ConnectionContext:
    """The queue a connection reaches, as its statements need it."""

    mapping: TableMapping = DEFAULT_MAPPING
    read_only: bool = False


DEFAULT_CONTEXT = ConnectionContext()


def with_context(
    conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any], context: ConnectionContext
) -> None:
    """Give ``conn`` its context (done by ``Database`` for every connection it opens)."""
    setattr(conn, _ATTRIBUTE, context)


def context_of(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> ConnectionContext:
    """The context ``conn`` was given; the default layout for a connection opened elsewhere."""
    found = getattr(conn, _ATTRIBUTE, DEFAULT_CONTEXT)
    assert isinstance(found, ConnectionContext)
    return found


def mapping_of(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> TableMapping:
    """The layout of the queue ``conn`` reaches."""
    return context_of(conn).mapping


def _for(cursor: MappedCursor[Any] | AsyncMappedCursor[Any], query: Query) -> Query:
    layout = cursor.layout or mapping_of(cursor.connection)
    return cast(Query, for_layout(query, layout))


class _Mapped:
    """What :class:`MappedCursor` and its asyncio twin share apart from their I/O: the
    layout their statements run for, and whether a statement is prepared."""

    #: the layout to run statements for, on a connection skconsole did not open (None: the
    #: connection's own)
    layout: TableMapping | None = None

    def _prepare(self, asked: bool | None) -> bool | None:
        return asked


class MappedCursor(_Mapped, psycopg.Cursor[Row]):
    """A cursor that runs skconsole's named statements (``query(NAME)``) for its
    connection's layout, or the ``layout`` it is given (on a connection skconsole did
    not open: an application's own, given to a producer).

    Every statement runs within :meth:`_around`, prepared as :meth:`_prepare` says:
    the hooks a connection's own cursor class changes (a pooled connection's: each
    statement in a transaction that has its settings, nothing prepared)."""

    @contextmanager
    def _around(self) -> Iterator[None]:
        yield

    def execute(
        self,
        query: Query,
        params: Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool | None = None,
    ) -> Self:
        statement = cast(Any, _for(self, query))
        with self._around():
            return super().execute(statement, params, prepare=self._prepare(prepare), binary=binary)

    def executemany(
        self, query: Query, params_seq: Iterable[Params], *, returning: bool = False
    ) -> None:
        with self._around():
            super().executemany(_for(self, query), params_seq, returning=returning)

    def stream(
        self,
        query: Query,
        params: Params | None = None,
        *,
        binary: bool | None = None,
        size: int = 1,
    ) -> Iterator[Row]:
        with self._around():
            yield from super().stream(_for(self, query), params, binary=binary, size=size)

    @contextmanager
    def copy(
        self, statement: Query, params: Params | None = None, *, writer: Any = None
    ) -> Iterator[Copy]:
        with self._around(), super().copy(_for(self, statement), params, writer=writer) as copy:
            yield copy


class AsyncMappedCursor(_Mapped, psycopg.AsyncCursor[Row]):
    """The asyncio twin of :class:`MappedCursor`."""

    @asynccontextmanager
    async def _around(self) -> AsyncIterator[None]:
        yield

    async def execute(
        self,
        query: Query,
        params: Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool | None = None,
    ) -> Self:
        statement = cast(Any, _for(self, query))
        async with self._around():
            return await super().execute(
                statement, params, prepare=self._prepare(prepare), binary=binary
            )

    async def executemany(
        self, query: Query, params_seq: Iterable[Params], *, returning: bool = False
    ) -> None:
        async with self._around():
            await super().executemany(_for(self, query), params_seq, returning=returning)

    async def stream(
        self,
        query: Query,
        params: Params | None = None,
        *,
        binary: bool | None = None,
        size: int = 1,
    ) -> AsyncIterator[Row]:
        async with self._around():
            async for row in super().stream(_for(self, query), params, binary=binary, size=size):
                yield row

    @asynccontextmanager
    async def copy(
        self, statement: Query, params: Params | None = None, *, writer: Any = None
    ) -> AsyncIterator[AsyncCopy]:
        async with (
            self._around(),
            super().copy(_for(self, statement), params, writer=writer) as copy,
        ):
            yield copy
