"""Bulk posts by COPY, and streamed posts that commit chunk by chunk.

Many jobs without keys go by binary COPY into both tables (the rows must be
the ones a statement post writes); keyed jobs keep their conflict rules even
when they ride in the same post; a stream never holds more than a chunk and
says, when it stops, how many jobs it committed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest

from skconsole.core.errors import InvalidJobError, PostInterrupted
from skconsole.db.connect import Database
from skconsole.producer import (
    COPY_MIN_ROWS,
    STREAM_CHUNK,
    AsyncProducer,
    Job,
    PostCounts,
    Producer,
)
from tests.db.test_producer import CHANNEL, count, notifications, queue_row, result_row

Conn = psycopg.Connection[Any]
MANY = COPY_MIN_ROWS + 50  # enough jobs without keys to go by COPY


@pytest.fixture
def listener(dsn: str) -> Iterator[Conn]:
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"LISTEN {CHANNEL}")
        yield c


def jobs_without_keys(n: int, task_type: str = "bulk.copy") -> list[Job]:
    return [Job(task_type, {"i": i}, priority=i % 4) for i in range(n)]


# -- COPY ------------------------------------------------------------------------------
def test_a_copy_post_writes_the_same_rows_as_a_statement_post(db: Database, conn: Conn) -> None:
    by_copy = jobs_without_keys(MANY)
    by_statement = [Job("bulk.copy", {"i": 1}, priority=1, source="me")]  # a lone job
    with Producer(db, source="me") as p:
        p.post_many(by_copy)
        p.post_many(by_statement)

    ignore = {"task_id", "task_posted_at_ts", "task_locked_until_ts", "task_lock_handle_id"}
    copied = by_copy[1]  # {"i": 1}, priority 1, like the lone one
    for read in (result_row, queue_row):
        a, b = read(conn, copied.task_id), read(conn, by_statement[0].task_id)
        assert a is not None and b is not None
        assert {k: v for k, v in a.items() if k not in ignore} == {
            k: v for k, v in b.items() if k not in ignore
        }


def test_a_copy_post_writes_every_row_and_counts_them_posted(db: Database, conn: Conn) -> None:
    jobs = jobs_without_keys(3 * MANY)
    with Producer(db) as p:
        result = p.post_many(jobs)

    assert (result.jobs, result.posted, result.skipped) == (len(jobs), len(jobs), 0)
    assert result.ids == [j.task_id for j in jobs]
    assert count(conn, "sk_tasks_queue_t") == len(jobs)
    assert conn.execute(
        "SELECT count(*) FROM sk_tasks_queue_t q JOIN sk_task_results_t r USING (task_id) "
        "WHERE q.task_payload = r.task_payload AND q.task_priority = r.task_priority "
        "AND r.task_status = 1 AND q.task_posted_at_ts = r.task_posted_at_ts"
    ).fetchone() == (len(jobs),)


def test_a_copy_post_keeps_input_order_as_the_fifo_order(db: Database, conn: Conn) -> None:
    jobs = jobs_without_keys(MANY)
    with Producer(db) as p:
        p.post_many(jobs)

    rows = conn.execute("SELECT task_id FROM sk_tasks_queue_t ORDER BY task_lock_handle_id")
    assert [r[0] for r in rows] == [j.task_id for j in jobs]


def test_a_copy_post_delays_each_job_by_the_servers_clock(db: Database, conn: Conn) -> None:
    jobs = [Job("bulk.copy", i, delay=(i % 3) * 1.5) for i in range(MANY)]
    with Producer(db) as p:
        p.post_many(jobs)

    delays = conn.execute(
        "SELECT DISTINCT extract(epoch FROM task_locked_until_ts - task_posted_at_ts)::float8, "
        "task_posted_at_ts <= now() FROM sk_tasks_queue_t ORDER BY 1"
    ).fetchall()
    assert delays == [(0.0, True), (1.5, True), (3.0, True)]


def test_a_copy_post_that_fails_on_the_server_leaves_no_job(db: Database, conn: Conn) -> None:
    jobs = jobs_without_keys(MANY)
    with Producer(db) as p:
        p.post_many(jobs[:1])
        jobs[-1].task_id = jobs[0].task_id  # the last row collides with a posted job
        with pytest.raises(psycopg.errors.UniqueViolation):
            p.post_many(jobs[1:])
        assert count(conn, "sk_tasks_queue_t") == 1
        assert count(conn, "sk_task_results_t") == 1
        p.post("bulk.after")  # and the connection is usable again
    assert count(conn, "sk_tasks_queue_t") == 2


def test_a_copy_post_wakes_the_workers_once_when_it_commits(db: Database, listener: Conn) -> None:
    with Producer(db) as p:
        p.post_many(jobs_without_keys(2 * MANY))

    assert [n.channel for n in notifications(listener)] == [CHANNEL]


def test_keyed_jobs_in_a_copy_post_keep_their_conflict_rules(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        waiting = p.post("bulk.keyed", "first", key="k1")
        result = p.post_many(
            [
                *jobs_without_keys(MANY),
                Job("bulk.keyed", "again", key="k1"),
                Job("bulk.keyed", key="k2"),
            ]
        )

    assert (result.jobs, result.posted, result.skipped) == (MANY + 2, MANY + 1, 1)
    assert count(conn, "sk_tasks_queue_t") == MANY + 2
    row = result_row(conn, waiting)
    assert row is not None and row["task_payload"] == '"first"'


def test_a_repeated_key_refuses_a_copy_post_before_anything_is_written(
    db: Database, conn: Conn
) -> None:
    jobs = [*jobs_without_keys(MANY), Job("bulk.keyed", key="k"), Job("bulk.keyed", key="k")]
    with Producer(db) as p, pytest.raises(InvalidJobError, match="same job key"):
        p.post_many(jobs)
    assert count(conn, "sk_task_results_t") == 0


async def test_the_async_producer_posts_by_copy_too(db: Database, conn: Conn) -> None:
    jobs = [*jobs_without_keys(MANY), Job("bulk.keyed", key="k")]
    async with AsyncProducer(db) as p:
        result = await p.post_many(jobs)

    assert (result.posted, result.skipped) == (MANY + 1, 0)
    rows = conn.execute("SELECT task_id FROM sk_tasks_queue_t ORDER BY task_lock_handle_id")
    assert [r[0] for r in rows][:MANY] == [j.task_id for j in jobs[:MANY]]


# -- streams ---------------------------------------------------------------------------
class Counted:
    """A generator of jobs that records how far it has been read."""

    def __init__(self, n: int, fail_at: int | None = None) -> None:
        self.n, self.fail_at, self.read = n, fail_at, 0

    def __iter__(self) -> Iterator[Job]:
        for i in range(self.n):
            if i == self.fail_at:
                raise InvalidJobError(f"job {i} is bad")
            self.read += 1
            yield Job("bulk.stream", i)


def test_a_stream_is_read_one_chunk_ahead_of_what_is_committed(db: Database, conn: Conn) -> None:
    source = Counted(1_000)
    seen: list[tuple[int, int, int]] = []

    def progress(done: PostCounts) -> None:
        seen.append((done.posted, source.read, count(conn, "sk_tasks_queue_t")))

    with Producer(db) as p:
        done = p.post_stream(source, chunk_size=300, progress=progress)

    assert (done.jobs, done.posted) == (1_000, 1_000)
    # each chunk is committed before the next is read: never more than one chunk in memory
    assert seen == [(300, 300, 300), (600, 600, 600), (900, 900, 900), (1_000, 1_000, 1_000)]


def test_a_stream_that_stops_says_how_many_jobs_it_committed(db: Database, conn: Conn) -> None:
    with Producer(db) as p, pytest.raises(PostInterrupted) as stopped:
        p.post_stream(Counted(1_000, fail_at=700), chunk_size=300)

    assert (stopped.value.jobs_committed, stopped.value.posted) == (600, 600)
    assert "600 job(s) were committed" in str(stopped.value) and "job 700 is bad" in str(
        stopped.value
    )
    assert count(conn, "sk_tasks_queue_t") == 600
    assert count(conn, "sk_task_results_t") == 600


def test_a_stream_that_fails_in_its_first_chunk_raises_the_error_itself(
    db: Database, conn: Conn
) -> None:
    with Producer(db) as p, pytest.raises(InvalidJobError, match="job 5 is bad"):
        p.post_stream(Counted(100, fail_at=5), chunk_size=300)
    assert count(conn, "sk_tasks_queue_t") == 0


async def test_the_async_producer_streams_an_async_generator(db: Database, conn: Conn) -> None:
    async def jobs() -> AsyncIterator[Job]:
        for i in range(700):
            yield Job("bulk.stream", i)

    chunks: list[int] = []
    async with AsyncProducer(db) as p:
        done = await p.post_stream(
            jobs(), chunk_size=250, progress=lambda d: chunks.append(d.posted)
        )

    assert done.posted == 700 and chunks == [250, 500, 700]
    assert count(conn, "sk_tasks_queue_t") == 700


# -- the command line --------------------------------------------------------------------
def test_enqueue_count_above_a_chunk_posts_every_copy(run_cli: Any, conn: Conn) -> None:
    n = STREAM_CHUNK * 2 + 1  # three committed chunks, and a progress bar (on a terminal)
    proc = run_cli("enqueue", "bulk.cli", "--count", str(n), "--payload", '{"x": 1}')

    assert proc.returncode == 0, proc.stderr
    assert f"posted {n:,} job(s) of type bulk.cli" in proc.stderr
    ids = proc.stdout.split()
    assert len(ids) == len(set(ids)) == n  # every posted id, once
    assert conn.execute(
        "SELECT count(DISTINCT task_id), min(task_payload), max(task_payload) FROM sk_tasks_queue_t"
    ).fetchone() == (n, '{"x": 1}', '{"x": 1}')
    assert count(conn, "sk_task_results_t") == n
