"""Connections through a pooler in transaction mode: every transaction carries its settings.

Behind PgBouncer in transaction mode (or a managed pooler that works the same
way) a client's consecutive transactions may run on different server sessions,
each of them shared with other clients. Nothing a session holds survives from
one transaction to the next: a ``SET``, a ``LISTEN``, a session advisory lock,
a prepared statement, a temporary table, a ``WITH HOLD`` cursor. Worse, a
session setting one client makes leaks into the transactions of the next
(PgBouncer runs no reset query between transactions in this mode).

So a pooled connection sets skconsole's settings (statement_timeout, jit, the
``--schema`` search_path, the user's ``options``, a link's own lock_timeout)
*locally* at the start of every transaction it runs, with ``set_config(...,
true)``, which ends with the transaction; a statement run outside a
transaction (autocommit) is run inside one made for it. Nothing is prepared on
the server (PgBouncer before 1.21 cannot route prepared statements), and a
read-only connection begins each transaction ``READ ONLY``.

These are psycopg's own connection and cursor classes with their public
methods wrapped (``execute``, ``executemany``, ``copy``, ``stream``,
``transaction``): every statement of skconsole goes through one of them, so no
caller has to remember. What cannot run in a transaction (VACUUM, an index
built CONCURRENTLY) runs bare, with :func:`run_outside_transaction`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, LiteralString

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus
from psycopg.rows import Row

from skconsole.db.context import AsyncMappedCursor, MappedCursor

_APPLY_LOCAL: LiteralString = (
    "SELECT set_config(name, value, true) FROM unnest(%s::text[], %s::text[]) AS s(name, value)"
)


@dataclass(frozen=True)
class LocalSettings:
    """The settings every transaction of a pooled connection starts with."""

    names: Sequence[str]
    values: Sequence[str]

    @property
    def params(self) -> tuple[list[str], list[str]]:
        return list(self.names), list(self.values)


class PooledConnection(psycopg.Connection[Row]):
    """A connection through a transaction pooler (see the module's docstring)."""

    local_settings: LocalSettings = LocalSettings((), ())

    def _settings_due(self) -> bool:
        """No transaction is open: the next statement would run without the settings."""
        return self.info.transaction_status == TransactionStatus.IDLE

    def _apply_local(self) -> None:
        if self.local_settings.names:
            psycopg.Cursor(self).execute(_APPLY_LOCAL, self.local_settings.params, prepare=False)

    @contextmanager
    def transaction(
        self, savepoint_name: str | None = None, force_rollback: bool = False
    ) -> Iterator[psycopg.Transaction]:
        outermost = self._settings_due()
        with super().transaction(savepoint_name, force_rollback) as tx:
            if outermost:
                self._apply_local()
            yield tx

    @contextmanager
    def _settled(self) -> Iterator[None]:
        """Around one statement: in a transaction that has the settings."""
        if not self._settings_due():
            yield
        elif self.autocommit:
            with self.transaction():
                yield
        else:  # the statement would begin a transaction: begin it with the settings
            self._apply_local()
            yield


class PooledCursor(MappedCursor[Row]):
    """The cursor of a :class:`PooledConnection`: each statement in a transaction that has
    the settings, never prepared on the server."""

    @contextmanager
    def _around(self) -> Iterator[None]:
        conn = self.connection
        assert isinstance(conn, PooledConnection)
        with conn._settled():
            yield

    def _prepare(self, asked: bool | None) -> bool | None:
        return False


class AsyncPooledConnection(psycopg.AsyncConnection[Row]):
    """The asyncio twin of :class:`PooledConnection`."""

    local_settings: LocalSettings = LocalSettings((), ())

    def _settings_due(self) -> bool:
        return self.info.transaction_status == TransactionStatus.IDLE

    async def _apply_local(self) -> None:
        if self.local_settings.names:
            await psycopg.AsyncCursor(self).execute(
                _APPLY_LOCAL, self.local_settings.params, prepare=False
            )

    @asynccontextmanager
    async def transaction(
        self, savepoint_name: str | None = None, force_rollback: bool = False
    ) -> AsyncIterator[psycopg.AsyncTransaction]:
        outermost = self._settings_due()
        async with super().transaction(savepoint_name, force_rollback) as tx:
            if outermost:
                await self._apply_local()
            yield tx

    @asynccontextmanager
    async def _settled(self) -> AsyncIterator[None]:
        if not self._settings_due():
            yield
        elif self.autocommit:
            async with self.transaction():
                yield
        else:
            await self._apply_local()
            yield


class AsyncPooledCursor(AsyncMappedCursor[Row]):
    """The cursor of an :class:`AsyncPooledConnection`."""

    @asynccontextmanager
    async def _around(self) -> AsyncIterator[None]:
        conn = self.connection
        assert isinstance(conn, AsyncPooledConnection)
        async with conn._settled():
            yield

    def _prepare(self, asked: bool | None) -> bool | None:
        return False


def through_transaction_pooler(
    conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any],
) -> bool:
    """Whether ``conn`` reaches PostgreSQL through a pooler in transaction mode: its server
    session is not its own from one transaction to the next."""
    return isinstance(conn, PooledConnection | AsyncPooledConnection)


def run_outside_transaction(conn: psycopg.Connection[Any], statement: sql.Composed) -> None:
    """Run a statement that cannot run in a transaction block and may run for longer than a
    query may (VACUUM, an index built or dropped CONCURRENTLY: it waits for every
    transaction on the table), on an autocommit connection.

    On a direct connection, without the session's statement timeout. Through a
    transaction pooler there is no session to change: it runs bare, under the server's
    own defaults for the role (no other setting of ours can reach it)."""
    if through_transaction_pooler(conn):
        psycopg.Cursor(conn).execute(statement, prepare=False)
        return
    conn.execute("SET statement_timeout = 0")
    try:
        conn.execute(statement)
    finally:
        conn.execute("RESET statement_timeout")
