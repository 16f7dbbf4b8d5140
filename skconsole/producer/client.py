"""Producers: post jobs over one connection of their own, sync or asyncio.

Atomicity: ``post`` and ``post_many`` are all-or-nothing (one statement, or
one transaction); ``post_stream`` commits every ``chunk_size`` jobs, so a
10-million-job generator holds neither its jobs in memory nor one giant
transaction, and an error leaves the earlier chunks posted
(:class:`~skconsole.errors.PostInterrupted` says how many).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg

from skconsole.db.connect import Database
from skconsole.errors import PostInterrupted
from skconsole.producer.job import Job, PostCounts, PostResult, default_source
from skconsole.producer.plan import (
    COPY_QUEUE,
    COPY_RESULTS,
    DB_NOW,
    NOTIFY,
    POST_MANY,
    POST_NEW,
    QUEUE_TYPES,
    RESULT_TYPES,
    STREAM_CHUNK,
    Plan,
    chunks,
    counts,
    plan,
    queue_rows,
    result_rows,
)

#: Told after each committed chunk of a streamed post: the counts so far.
Progress = Callable[[PostCounts], None]


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
        return self.post_many([Job(task_type, payload, **kw)]).ids[0]

    def post_many(self, jobs: Sequence[Job]) -> PostResult:
        """Post all of ``jobs`` or none: one statement, or one transaction."""
        result = PostResult(ids=[j.task_id for j in jobs])
        if not jobs:
            return result
        writes = plan(jobs, self.source)
        conn = self._connection()
        if writes.one_round_trip:
            result.add(self._write(conn, writes))
        else:
            with conn.transaction():
                result.add(self._write(conn, writes))
        return result

    def post_stream(
        self,
        jobs: Iterable[Job],
        *,
        chunk_size: int = STREAM_CHUNK,
        progress: Progress | None = None,
    ) -> PostCounts:
        """Post ``jobs`` as they come, committing every ``chunk_size`` of them."""
        done = PostCounts()
        with _counting(done):
            for chunk in chunks(jobs, chunk_size):
                done.add(self.post_many(chunk))
                if progress is not None:
                    progress(done)
        return done

    def _write(self, conn: psycopg.Connection[Any], writes: Plan) -> PostCounts:
        done = PostCounts()
        if writes.lone is not None:
            done.add(counts(conn.execute(POST_NEW, writes.lone, prepare=True).fetchone(), 1))
        if writes.copied:
            now = _one(conn.execute(DB_NOW).fetchone())
            with conn.cursor() as cur:
                with cur.copy(COPY_RESULTS) as copy:
                    copy.set_types(RESULT_TYPES)
                    for values in result_rows(writes.copied, self.source, now):
                        copy.write_row(values)
                with cur.copy(COPY_QUEUE) as copy:
                    copy.set_types(QUEUE_TYPES)
                    for values in queue_rows(writes.copied, self.source, now):
                        copy.write_row(values)
                cur.execute(NOTIFY)
            done.add(PostCounts(len(writes.copied), len(writes.copied)))
        for params in writes.statements:
            answer = conn.execute(POST_MANY, params, prepare=True).fetchone()
            done.add(counts(answer, len(params["ids"])))
        return done

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
        """Post one job; returns its id. Keyword arguments as in :class:`Job`."""
        return (await self.post_many([Job(task_type, payload, **kw)])).ids[0]

    async def post_many(self, jobs: Sequence[Job]) -> PostResult:
        """Post all of ``jobs`` or none: one statement, or one transaction."""
        result = PostResult(ids=[j.task_id for j in jobs])
        if not jobs:
            return result
        writes = plan(jobs, self.source)
        conn = await self._connection()
        if writes.one_round_trip:
            result.add(await self._write(conn, writes))
        else:
            async with conn.transaction():
                result.add(await self._write(conn, writes))
        return result

    async def post_stream(
        self,
        jobs: Iterable[Job] | AsyncIterable[Job],
        *,
        chunk_size: int = STREAM_CHUNK,
        progress: Progress | None = None,
    ) -> PostCounts:
        """Post ``jobs`` as they come, committing every ``chunk_size`` of them."""
        done = PostCounts()
        with _counting(done):
            async for chunk in _achunks(jobs, chunk_size):
                done.add(await self.post_many(chunk))
                if progress is not None:
                    progress(done)
        return done

    async def _write(self, conn: psycopg.AsyncConnection[Any], writes: Plan) -> PostCounts:
        done = PostCounts()
        if writes.lone is not None:
            cur = await conn.execute(POST_NEW, writes.lone, prepare=True)
            done.add(counts(await cur.fetchone(), 1))
        if writes.copied:
            now = _one(await (await conn.execute(DB_NOW)).fetchone())
            async with conn.cursor() as acur:
                async with acur.copy(COPY_RESULTS) as copy:
                    copy.set_types(RESULT_TYPES)
                    for values in result_rows(writes.copied, self.source, now):
                        await copy.write_row(values)
                async with acur.copy(COPY_QUEUE) as copy:
                    copy.set_types(QUEUE_TYPES)
                    for values in queue_rows(writes.copied, self.source, now):
                        await copy.write_row(values)
                await acur.execute(NOTIFY)
            done.add(PostCounts(len(writes.copied), len(writes.copied)))
        for params in writes.statements:
            cur = await conn.execute(POST_MANY, params, prepare=True)
            done.add(counts(await cur.fetchone(), len(params["ids"])))
        return done

    async def close(self) -> None:
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


def _one(row: tuple[Any, ...] | None) -> Any:
    if row is None:
        raise RuntimeError("the server returned no row")
    return row[0]


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
