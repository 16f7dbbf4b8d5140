"""Result writes that cannot go through: a worker never piles up jobs in 2 Processing,
and one row it cannot write never holds up the others.

* While the server refuses its result writes (here: a trigger the test installs
  raises lock_not_available for every success), a worker with concurrency C
  keeps at most 4 x C jobs claimed and unwritten, and leaves the rest in the
  queue for others. When the writes go through again, every job is recorded
  exactly once.
* While another session holds some result rows locked (an operator's open
  transaction), the worker writes every other result and comes back to the
  locked ones once they are free.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skconsole.core.status import JobStatus
from skconsole.producer import Job, Producer
from tests.support.tasks_faults import all_final, completions, queue_count, status_counts
from tests.support.waiting import wait_until

CONCURRENCY = 5
HELD_AT_MOST = 4 * CONCURRENCY
QUICK_JOBS = 200

REFUSE_SUCCESSES = """
CREATE TABLE sk_test_refusing (on_since timestamptz);
CREATE FUNCTION sk_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.task_status = 3 AND EXISTS (SELECT 1 FROM sk_test_refusing) THEN
        RAISE EXCEPTION 'the test refuses result writes' USING ERRCODE = 'lock_not_available';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER sk_test_refuse BEFORE UPDATE ON sk_task_results_t
    FOR EACH ROW EXECUTE FUNCTION sk_test_refuse();
INSERT INTO sk_test_refusing VALUES (now());
"""
STOP_REFUSING = """
DROP TRIGGER IF EXISTS sk_test_refuse ON sk_task_results_t;
DROP FUNCTION IF EXISTS sk_test_refuse();
DROP TABLE IF EXISTS sk_test_refusing;
"""


def _in_flight(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT count(*) FROM sk_task_results_t WHERE task_status = 2").fetchone()
    return int(row[0]) if row else 0


@pytest.fixture
def refused_successes(conn: psycopg.Connection[Any]) -> Iterator[Callable[[], None]]:
    """The server refuses every success write until the returned function is called."""
    conn.execute(REFUSE_SUCCESSES)  # type: ignore[arg-type]
    yield lambda: conn.execute(STOP_REFUSING)  # type: ignore[arg-type]
    conn.execute(STOP_REFUSING)  # type: ignore[arg-type]


def test_a_worker_whose_result_writes_are_refused_stops_claiming(
    db: Any,
    conn: psycopg.Connection[Any],
    spawn: Callable[..., Any],
    log_dir: Path,
    refused_successes: Callable[[], None],
) -> None:
    with Producer(db) as p:
        ids = p.post_many([Job("ok", i) for i in range(QUICK_JOBS)]).ids
    w = spawn("--concurrency", str(CONCURRENCY))
    wait_until(lambda: _in_flight(conn) >= HELD_AT_MOST, 60, lambda: w.drain.tail(20))
    time.sleep(5.0)  # writes keep failing: the worker must not claim on
    held = _in_flight(conn)
    waiting = queue_count(conn)
    refused_successes()

    print(f"\nwhile writes were refused: {held} in 2 Processing, {waiting} left in the queue")
    assert held <= HELD_AT_MOST, "claims went on while results could not be written"
    assert waiting >= QUICK_JOBS - HELD_AT_MOST
    wait_until(lambda: all_final(conn), 120, lambda: w.drain.tail(20))
    assert status_counts(conn) == {JobStatus.PROCESSED: QUICK_JOBS}, "none lost"
    assert completions(log_dir) == {str(i): 1 for i in ids}, "each ran once"
    assert w.poll() is None, w.drain.tail()


def test_result_rows_locked_by_another_session_do_not_hold_up_the_others(
    dsn: str, db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    with Producer(db) as p:
        slow = p.post_many([Job("slow-async", 1.5) for _ in range(CONCURRENCY)]).ids
    w = spawn("--concurrency", str(CONCURRENCY))
    wait_until(lambda: _in_flight(conn) == CONCURRENCY, 60, lambda: w.drain.tail(20))

    with psycopg.connect(dsn) as locker:  # a transaction: its row locks last until rollback
        locker.execute(
            "SELECT task_id FROM sk_task_results_t WHERE task_id = ANY(%s) FOR UPDATE", (slow,)
        )
        with Producer(db) as p:
            quick = p.post_many([Job("ok", i) for i in range(QUICK_JOBS)]).ids
        took = wait_until(
            lambda: status_counts(conn).get(JobStatus.PROCESSED, 0) == QUICK_JOBS,
            60,
            lambda: w.drain.tail(20),
        )
        # the slow jobs ended at 1.5 s; their rows are still locked, so they wait
        assert status_counts(conn) == {
            JobStatus.PROCESSING: CONCURRENCY,
            JobStatus.PROCESSED: QUICK_JOBS,
        }
        locker.rollback()

    print(f"\n{QUICK_JOBS} other results written {took:.1f}s after the locks were taken")
    wait_until(lambda: all_final(conn), 60, lambda: w.drain.tail(20))
    assert status_counts(conn) == {JobStatus.PROCESSED: CONCURRENCY + QUICK_JOBS}, "none lost"
    assert completions(log_dir) == {str(i): 1 for i in [*slow, *quick]}, "each ran once"
    assert w.poll() is None, w.drain.tail()
