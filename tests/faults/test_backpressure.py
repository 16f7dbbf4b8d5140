"""A slow database slows the claims: a worker never piles up jobs in 2 Processing.

While its result writes are held up (here: the test holds row locks on the
result rows they must update), a worker with concurrency C keeps at most 4 x C
jobs claimed and unwritten, and leaves the rest in the queue for others. When
the writes go through again, every job is recorded exactly once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from skconsole.producer import Job, Producer
from tests.tasks_faults import all_final, completions, queue_count, status_counts, wait_for

CONCURRENCY = 5
HELD_AT_MOST = 4 * CONCURRENCY
QUICK_JOBS = 200


def _in_flight(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT count(*) FROM sk_task_results_t WHERE task_status = 2").fetchone()
    return int(row[0]) if row else 0


def test_a_worker_whose_result_writes_are_stuck_stops_claiming(
    dsn: str, db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    with Producer(db) as p:
        slow = p.post_many([Job("slow-async", 1.5) for _ in range(CONCURRENCY)]).ids
    w = spawn("--concurrency", str(CONCURRENCY))
    wait_for(lambda: _in_flight(conn) == CONCURRENCY, 60, lambda: w.drain.tail(20))

    with psycopg.connect(dsn) as locker:  # a transaction: its row locks last until rollback
        locker.execute(
            "SELECT task_id FROM sk_task_results_t WHERE task_id = ANY(%s) FOR UPDATE", (slow,)
        )
        with Producer(db) as p:
            quick = p.post_many([Job("ok", i) for i in range(QUICK_JOBS)]).ids
        time.sleep(5.0)  # the slow jobs end at 1.5 s; their write waits on our locks
        held = _in_flight(conn)
        waiting = queue_count(conn)
        locker.rollback()

    print(f"\nwhile writes were stuck: {held} in 2 Processing, {waiting} left in the queue")
    assert held <= HELD_AT_MOST, "claims went on while results could not be written"
    assert waiting >= CONCURRENCY + QUICK_JOBS - HELD_AT_MOST
    wait_for(lambda: all_final(conn), 120, lambda: w.drain.tail(20))
    assert status_counts(conn) == {3: CONCURRENCY + QUICK_JOBS}, "none lost"
    assert completions(log_dir) == {str(i): 1 for i in [*slow, *quick]}, "each ran once"
