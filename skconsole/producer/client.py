"""Producers: post jobs over one connection of their own, sync or asyncio.

Atomicity: ``post`` and ``post_many`` are all-or-nothing (one statement, or
one transaction); ``post_stream`` commits every ``chunk_size`` jobs, so a
10-million-job generator holds neither its jobs in memory nor one giant
transaction, and an error leaves the earlier chunks posted
(:class:`~skconsole.core.errors.PostInterrupted` says how many).

Transactional posts: ``post(..., connection=conn)`` and ``post_many(...,
connection=conn)`` write over the caller's connection, inside the transaction
the caller owns there, and never commit or roll it back: the job rows and the
NOTIFY (delivered by PostgreSQL only at commit) are committed or rolled back
with the caller's own rows. :class:`_Target` is the one place that says what a
post may do on a connection (:func:`_joined` checks a caller's: a two-phase
transaction is refused, since PostgreSQL cannot prepare one that sent a
NOTIFY). The server's ``now()`` is the caller's transaction start, so the
jobs' posted time, and a delay, count from it. ``post_stream`` commits as it
goes: it takes no connection.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, LiteralString, TypeVar, cast

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.rows import AsyncRowFactory, RowFactory, class_row, scalar_row
from psycopg.types.datetime import TimestamptzLoader

from skconsole.core.closing import Closing
from skconsole.core.errors import ConfigError, ConnectError, PostInterrupted, UnknownJobError
from skconsole.db.connect import Database, libpq_env_given
from skconsole.db.context import AsyncMappedCursor, MappedCursor
from skconsole.db.mapping import DEFAULT_MAPPING, TableMapping
from skconsole.db.sqlfiles import query
from skconsole.producer.job import Job, PostCounts, PostResult, default_source
from skconsole.producer.plan import (
    QUEUE_TYPES,
    RESULT_TYPES,
    RESULT_TYPES_TRACED,
    STREAM_CHUNK,
    Plan,
    PostAnswer,
    chunks,
    counts,
    plan,
    queue_rows,
    result_rows,
)
from skconsole.producer.trace_context import current_trace

#: Told after each committed chunk of a streamed post: the counts so far.
Progress = Callable[[PostCounts], None]

Conn = psycopg.Connection[Any]
AConn = psycopg.AsyncConnection[Any]
C = TypeVar("C", psycopg.Connection[Any], psycopg.AsyncConnection[Any])


@dataclass(frozen=True, slots=True)
class _Target(Generic[C]):
    """Where a post writes, and what it may do there.

    ``own``: the producer's own connection (autocommit), on which a post of
    several statements opens and commits a transaction of its own, and whose
    statements are prepared (the producer posts the same few again and again).
    Else the caller's: the post joins the caller's transaction, never ends it,
    and leaves preparing to the connection's ``prepare_threshold`` (prepare=None),
    so a caller that disabled prepared statements (PgBouncer in transaction mode,
    Django's default) or prepares late keeps its choice.
    """

    conn: C
    own: bool

    def opens_transaction(self, writes: Plan) -> bool:
        """Whether the post wraps its statements in a transaction of its own."""
        return self.own and not writes.one_round_trip


def _joined(connection: object, kind: type[C], producer: str) -> _Target[C]:
    """The caller's ``connection=`` as a post's target, or a clear error why a post
    cannot join a transaction there (checked before anything is written)."""
    if not isinstance(connection, kind):
        wanted = f"a psycopg.{kind.__name__}"
        if isinstance(connection, psycopg.Connection | psycopg.AsyncConnection):
            twin = "AsyncProducer" if kind is psycopg.Connection else "Producer"
            got = f"a psycopg.{type(connection).__name__}: use {twin} for it"
        else:
            got = (
                f"{type(connection).__module__}.{type(connection).__qualname__}"
                " (with SQLAlchemy or Django, pass the psycopg 3 connection underneath)"
            )
        raise ConfigError(f"{producer} takes {wanted} as connection=, got {got}")
    if connection.broken:  # closed too, but not by the caller
        raise ConnectError(
            "the connection given as connection= is broken (its server connection was lost)"
        )
    if connection.closed:
        raise ConfigError("the connection given as connection= is closed")
    if _in_two_phase_transaction(connection):
        raise ConfigError(
            "connection= is in a two-phase transaction (tpc_begin): a post sends a NOTIFY,"
            " and PostgreSQL cannot PREPARE a transaction that did, so tpc_prepare() would"
            " fail; post in an ordinary transaction instead"
        )
    status = connection.info.transaction_status
    if status == TransactionStatus.INERROR:
        raise ConfigError(
            "the transaction on connection= has already failed: roll it back before posting"
        )
    if connection.autocommit and status == TransactionStatus.IDLE:
        raise ConfigError(
            "connection= joins the caller's transaction, but this connection is in"
            " autocommit mode outside any transaction: open one first"
            " (with conn.transaction(): ...) or connect with autocommit=False"
        )
    return _Target(connection, own=False)


def _in_two_phase_transaction(connection: Conn | AConn) -> bool:
    """Whether psycopg runs a two-phase transaction on ``connection`` (from ``tpc_begin()``
    until ``tpc_commit()`` or ``tpc_rollback()``, prepared or not).

    psycopg 3 has no public way to ask: this reads its private ``_tpc`` (None
    outside one; psycopg 3.0 to 3.3 at least). Should a later psycopg drop it,
    the check answers False and such a post fails, as before, at tpc_prepare():
    tests/db/test_two_phase_post.py says so first.
    """
    return getattr(connection, "_tpc", None) is not None


def _database(db: object, producer: str) -> Database | None:
    """The producer's own database: a DSN, a :class:`Database`, or None (it only
    posts over its callers' connections). A connection here is a mistake that
    would otherwise surface as an AttributeError deep in libpq's DSN parsing."""
    if db is None or isinstance(db, Database):
        return db
    if isinstance(db, str):
        return Database(db)
    if isinstance(db, psycopg.Connection | psycopg.AsyncConnection):
        raise ConfigError(
            f"{producer} takes a DSN or a Database, not a connection: to post inside"
            f" your transaction, pass the connection to each post:"
            f" {producer.lower()}.post(..., connection=conn)"
        )
    raise ConfigError(f"{producer} takes a DSN or a Database, got {type(db).__name__}")


def _environment_database() -> Database | None:
    """The database the environment names, by the rule every command follows:
    ``SKCONSOLE_DSN``, else the libpq variables (``PGHOST``, ``PGDATABASE``, ...)."""
    dsn = os.environ.get("SKCONSOLE_DSN")
    if dsn:
        return Database(dsn)
    return Database("") if libpq_env_given() else None


def _no_database(producer: str) -> ConfigError:
    return ConfigError(
        f"this {producer} has no database to post to: pass a DSN"
        f" ({producer}('postgresql://...')), set SKCONSOLE_DSN or the libpq variables"
        " (PGHOST, PGDATABASE, ...), or pass connection= to each post"
    )


class Producer(Closing):
    """Posts jobs over one connection of its own (opened on first use, never
    when every post passes ``connection=``), or over the caller's.

    Three calls, three promises: :meth:`post` writes one job in one statement
    (autocommit); :meth:`post_many` writes all of a list or none; :meth:`post_stream`
    commits chunk by chunk, so memory stays at one chunk whatever the length.
    Close it with :meth:`close`, or use it in a ``with`` block.

    Args:
        db: where to post: a DSN, a :class:`~skconsole.db.connect.Database`, or
            ``None``: the environment's (``SKCONSOLE_DSN``, else the libpq variables),
            looked up only when a post needs a connection of the producer's own
            (a producer whose every post passes ``connection=`` opens none).
        source: what each job records as the process that posted it; default
            ``skconsole@HOST:PID``.

    Raises:
        ConfigError: ``db`` is a connection (pass it to each post as
            ``connection=`` instead) or anything else that is no DSN.
    """

    def __init__(self, db: Database | str | None = None, source: str | None = None) -> None:
        self.db = _database(db, "Producer")
        self.source = source or default_source()
        self._conn: Conn | None = None

    def _connection(self) -> Conn:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self.db = self.db or _environment_database()
            if self.db is None:
                raise _no_database("Producer")
            self._conn = self.db.connect(application_name="skconsole-producer")
        return self._conn

    def _target(self, connection: Conn | None) -> _Target[Conn]:
        if connection is not None:
            return _joined(connection, psycopg.Connection, "Producer")
        return _Target(self._connection(), own=True)

    def post(
        self, task_type: str, payload: Any = None, *, connection: Conn | None = None, **kw: Any
    ) -> uuid.UUID:
        """Post one job; returns its id. Keyword arguments as in :class:`Job`
        (``priority``, ``delay`` or ``run_at``, ``key``, ``after``, ...);
        ``connection`` as in :meth:`post_many`.

        Raises:
            InvalidJobError: the job is refused before anything is written (a payload
                that is not JSON, a negative priority, a naive ``run_at``, ...);
                :class:`~skconsole.core.errors.UnknownJobError` when ``after`` names
                no job.
        """
        return self.post_many([Job(task_type, payload, **kw)], connection=connection).ids[0]

    def post_many(self, jobs: Sequence[Job], *, connection: Conn | None = None) -> PostResult:
        """Post all of ``jobs`` or none: one statement, or one transaction.

        Jobs without keys go by binary COPY when there are 200 or more; keyed jobs
        by statements of up to 5,000; one NOTIFY wakes the workers. The list is the
        caller's, so memory grows with it: for millions, :meth:`post_stream`.

        With ``connection``, inside the caller's transaction on it (begun by
        psycopg if the connection is not in autocommit mode), which the caller
        commits or rolls back: the jobs exist, for workers too, only once it
        commits. On an error, PostgreSQL leaves that transaction aborted. A
        connection in autocommit mode outside a transaction block, a closed or
        failed one, or one inside a two-phase transaction is refused with a
        :class:`~skconsole.core.errors.ConfigError` before anything is sent.

        Returns:
            The ids of ``jobs`` in order, and how many were posted.
        """
        result = PostResult(ids=[j.task_id for j in jobs])
        if not jobs:
            return result
        writes = plan(jobs, self.source, current_trace())
        target = self._target(connection)
        if target.opens_transaction(writes):
            with target.conn.transaction():
                result.add(self._write(target.conn, writes, own=target.own))
        else:
            result.add(self._write(target.conn, writes, own=target.own))
        return result

    def post_stream(
        self,
        jobs: Iterable[Job],
        *,
        chunk_size: int = STREAM_CHUNK,
        progress: Progress | None = None,
    ) -> PostCounts:
        """Post ``jobs`` as they come, committing every ``chunk_size`` of them.

        The iterable is read one chunk ahead, each chunk posted as by
        :meth:`post_many` in a transaction of its own; ``progress`` is called with
        the counts so far after each. It takes no ``connection``: it commits.

        Raises:
            PostInterrupted: a chunk failed; its ``jobs_committed`` were committed,
                the rest were not (jobs without keys posted again would be posted
                twice).
        """
        done = PostCounts()
        with _counting(done):
            for chunk in chunks(jobs, chunk_size):
                done.add(self.post_many(chunk))
                if progress is not None:
                    progress(done)
        return done

    def _write(self, conn: Conn, writes: Plan, *, own: bool = True) -> PostCounts:
        """The post's statements over ``conn``, in whatever transaction it is in."""
        done = PostCounts()
        prepare = _prepare(own)
        if writes.after_parents:
            with _cursor(conn, scalar_row, own, _layout(self.db)) as check:
                named = {"ids": writes.after_parents}
                unknown = check.execute(query("after_unknown"), named).fetchall()
            if unknown:
                raise unknown_after(unknown)
        with _cursor(conn, class_row(PostAnswer), own, _layout(self.db)) as cur:
            if writes.lone is not None:
                done.add(
                    counts(
                        cur.execute(query("post_new_job"), writes.lone, prepare=prepare).fetchone(),
                        1,
                    )
                )
            if writes.copied:
                with _cursor(conn, scalar_row, own, _layout(self.db)) as clock:
                    now = _server_now(clock.execute(query("db_now")).fetchone())
                with cur.copy(_copy_results(writes)) as copy:
                    copy.set_types(_result_types(writes))
                    for values in result_rows(writes.copied, self.source, now, writes.trace):
                        copy.write_row(values)
                with cur.copy(query("copy_queue")) as copy:
                    copy.set_types(QUEUE_TYPES)
                    for values in queue_rows(writes.copied, self.source, now):
                        copy.write_row(values)
                cur.execute(query("notify_posted"))
                done.add(PostCounts(len(writes.copied), len(writes.copied)))
            for params in writes.statements:
                answer = cur.execute(query("post_jobs"), params, prepare=prepare).fetchone()
                done.add(counts(answer, len(params["ids"])))
            for waiting in writes.after:
                answer = cur.execute(query("post_after"), waiting, prepare=prepare).fetchone()
                done.add(counts(answer, len(waiting["ids"])))
        return done

    def close(self) -> None:
        """Close the producer's own connection, if it opened one (never the caller's)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class AsyncProducer:
    """The asyncio twin of :class:`Producer` (``connection=`` takes a psycopg.AsyncConnection).

    The same arguments and calls, awaited; ``async with`` closes it.
    """

    def __init__(self, db: Database | str | None = None, source: str | None = None) -> None:
        self.db = _database(db, "AsyncProducer")
        self.source = source or default_source()
        self._conn: AConn | None = None

    async def _connection(self) -> AConn:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self.db = self.db or _environment_database()
            if self.db is None:
                raise _no_database("AsyncProducer")
            self._conn = await self.db.aconnect(application_name="skconsole-producer")
        return self._conn

    async def _target(self, connection: AConn | None) -> _Target[AConn]:
        if connection is not None:
            return _joined(connection, psycopg.AsyncConnection, "AsyncProducer")
        return _Target(await self._connection(), own=True)

    async def post(
        self, task_type: str, payload: Any = None, *, connection: AConn | None = None, **kw: Any
    ) -> uuid.UUID:
        """Post one job; returns its id. Keyword arguments as in :class:`Job`;
        ``connection`` as in :meth:`Producer.post_many`."""
        job = Job(task_type, payload, **kw)
        return (await self.post_many([job], connection=connection)).ids[0]

    async def post_many(
        self, jobs: Sequence[Job], *, connection: AConn | None = None
    ) -> PostResult:
        """Post all of ``jobs`` or none, as :meth:`Producer.post_many`."""
        result = PostResult(ids=[j.task_id for j in jobs])
        if not jobs:
            return result
        writes = plan(jobs, self.source, current_trace())
        target = await self._target(connection)
        if target.opens_transaction(writes):
            async with target.conn.transaction():
                result.add(await self._write(target.conn, writes, own=target.own))
        else:
            result.add(await self._write(target.conn, writes, own=target.own))
        return result

    async def post_stream(
        self,
        jobs: Iterable[Job] | AsyncIterable[Job],
        *,
        chunk_size: int = STREAM_CHUNK,
        progress: Progress | None = None,
    ) -> PostCounts:
        """Post ``jobs`` (an iterable or an async iterable) as they come, committing
        every ``chunk_size`` of them, as :meth:`Producer.post_stream`."""
        done = PostCounts()
        with _counting(done):
            async for chunk in _achunks(jobs, chunk_size):
                done.add(await self.post_many(chunk))
                if progress is not None:
                    progress(done)
        return done

    async def _write(self, conn: AConn, writes: Plan, *, own: bool = True) -> PostCounts:
        done = PostCounts()
        prepare = _prepare(own)
        if writes.after_parents:
            async with _acursor(conn, scalar_row, own, _layout(self.db)) as check:
                named = {"ids": writes.after_parents}
                unknown = await (await check.execute(query("after_unknown"), named)).fetchall()
            if unknown:
                raise unknown_after(unknown)
        async with _acursor(conn, class_row(PostAnswer), own, _layout(self.db)) as cur:
            if writes.lone is not None:
                await cur.execute(query("post_new_job"), writes.lone, prepare=prepare)
                done.add(counts(await cur.fetchone(), 1))
            if writes.copied:
                async with _acursor(conn, scalar_row, own, _layout(self.db)) as clock:
                    now = _server_now(await (await clock.execute(query("db_now"))).fetchone())
                async with cur.copy(_copy_results(writes)) as copy:
                    copy.set_types(_result_types(writes))
                    for values in result_rows(writes.copied, self.source, now, writes.trace):
                        await copy.write_row(values)
                async with cur.copy(query("copy_queue")) as copy:
                    copy.set_types(QUEUE_TYPES)
                    for values in queue_rows(writes.copied, self.source, now):
                        await copy.write_row(values)
                await cur.execute(query("notify_posted"))
                done.add(PostCounts(len(writes.copied), len(writes.copied)))
            for params in writes.statements:
                await cur.execute(query("post_jobs"), params, prepare=prepare)
                done.add(counts(await cur.fetchone(), len(params["ids"])))
            for waiting in writes.after:
                await cur.execute(query("post_after"), waiting, prepare=prepare)
                done.add(counts(await cur.fetchone(), len(waiting["ids"])))
        return done

    async def close(self) -> None:
        """Close the producer's own connection, if it opened one (never the caller's)."""
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def __aenter__(self) -> AsyncProducer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


@contextmanager
def _counting(done: PostCounts) -> Iterator[None]:
    """A stream's error, saying how much it had committed when that is anything."""
    try:
        yield
    except Exception as exc:
        if done.jobs:
            raise PostInterrupted(done.jobs, done.posted, exc) from exc
        raise


R = TypeVar("R")


def _layout(db: Database | None) -> TableMapping:
    """The names of the queue's objects: the database's (the default names without one)."""
    return db.mapping if db is not None else DEFAULT_MAPPING


def _prepare(own: bool) -> bool | None:
    """Prepared on the producer's own connection; on a caller's, as its
    ``prepare_threshold`` says (see :class:`_Target`)."""
    return True if own else None


def _cursor(
    conn: Conn, row_factory: RowFactory[R], own: bool, mapping: TableMapping
) -> psycopg.Cursor[R]:
    """A cursor that reads what a post needs the same way on any connection.

    On the producer's own connection, its own cursor class (a pooled connection's
    carries the settings into each transaction: :mod:`skconsole.db.pooled`). On a
    caller's, a plain cursor that runs the statements for the producer's queue
    (``mapping``) and reads rows as the post reads them: the
    connection may have its own ``cursor_factory`` (a RawCursor cannot run these
    statements) and ``row_factory`` (dict_row); and psycopg's own timestamptz
    loader: a COPY post writes the server's ``now()`` back as timestamptz, and a
    caller's loader may return it naive (Django's with USE_TZ=False), which cannot
    be written.
    """
    if own:
        return conn.cursor(row_factory=row_factory)
    return cast(psycopg.Cursor[R], _posting(MappedCursor(conn, row_factory=row_factory), mapping))


def _acursor(
    conn: AConn, row_factory: AsyncRowFactory[R], own: bool, mapping: TableMapping
) -> psycopg.AsyncCursor[R]:
    """:func:`_cursor` for an asyncio connection."""
    if own:
        return conn.cursor(row_factory=row_factory)
    cur = AsyncMappedCursor(conn, row_factory=row_factory)
    return cast(psycopg.AsyncCursor[R], _posting(cur, mapping))


_Cur = TypeVar("_Cur", MappedCursor[Any], AsyncMappedCursor[Any])


def _posting(cur: _Cur, mapping: TableMapping) -> _Cur:
    """A cursor of a caller's connection, set to post: the queue's layout, and psycopg's
    own timestamptz loader (see :func:`_cursor`)."""
    cur.layout = mapping
    cur.adapters.register_loader("timestamptz", TimestamptzLoader)
    return cur


def _copy_results(writes: Plan) -> LiteralString:
    """The COPY of the result rows: with the trace context only for a post made in a trace."""
    return query("copy_results") if writes.trace is None else query("copy_results_traced")


def _result_types(writes: Plan) -> tuple[str, ...]:
    return RESULT_TYPES if writes.trace is None else RESULT_TYPES_TRACED


def unknown_after(ids: Sequence[uuid.UUID]) -> UnknownJobError:
    """The one-line error of a post whose after= names jobs that do not exist."""
    shown = ", ".join(str(i) for i in ids)
    return UnknownJobError(
        f"after= names no job: {shown} (no result row and no queue row); nothing was posted"
    )


def _server_now(now: dt.datetime | None) -> dt.datetime:
    """db_now.sql's answer (a scalar_row cursor's)."""
    if now is None:
        raise RuntimeError("the server returned no row")
    return now


async def _achunks(jobs: Iterable[Job] | AsyncIterable[Job], size: int) -> AsyncIterator[list[Job]]:
    """``jobs``, sync or async, in lists of ``size``."""
    if isinstance(jobs, AsyncIterable):
        chunk: list[Job] = []
        async for job in jobs:
            chunk.append(job)
            if len(chunk) >= size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk
    else:
        for chunk in chunks(jobs, size):
            yield chunk
