"""A worker whose statements wait (a lock held by someone else, a cancelled query)
stays alive in everyone's eyes and is never robbed of its jobs.

Real PostgreSQL, real ``skconsole worker`` processes. The lease is renewed on a
connection of its own that no other statement shares, so nothing the worker's
other connections wait for can make it look dead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from skconsole.core.status import JobStatus
from skconsole.producer import Job, Producer
from tests.support.rows import one_row
from tests.support.tasks_faults import (
    SHORT_LEASE,
    all_final,
    completions,
    status_counts,
    worker_ids_for_pid,
    worker_states,
)
from tests.support.waiting import wait_until

#: The workers run under the shortest lease (5 s, reapable after 6 s): the stats rows
#: are held locked for twice that, which shows the same as a longer lock would (a
#: lease that lapsed would have been reaped by then), and the long job outlasts it.
LOCK_S = 12.0
LONG_JOB_S = 15.0


def _stats_rows(conn: psycopg.Connection[Any]) -> tuple[int, int]:
    row = one_row(
        conn,
        "SELECT (SELECT count(*) FROM sk_task_execution_time_stats_t),"
        " (SELECT count(*) FROM sk_metrics_t)",
    )
    return int(row[0]), int(row[1])


def test_a_worker_whose_stats_writes_wait_on_a_lock_is_never_robbed(
    dsn: str, db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """Worker A runs a 15 s job and finishes short ones whose execution-time stats
    flush waits on rows the test holds locked for 12 s, twice A's lease (5 s, so
    reapable after 6 s). Worker B (which runs none
    of these types, so it has no such stats to write) reaps all along. A's lease
    stays fresh, its long job is never reaped, runs once, and the results of the
    short jobs are written while the stats rows are still locked."""
    with Producer(db) as p:
        warm = p.post_many([Job("ok", i) for i in range(5)]).ids
    a = spawn("--concurrency", "4", "--lease", SHORT_LEASE)
    wait_until(lambda: all_final(conn), 60, lambda: a.drain.tail(20))
    wait_until(lambda: all(n > 0 for n in _stats_rows(conn)), 30, lambda: a.drain.tail(20))
    a_id = worker_ids_for_pid(conn, a.pid)[0]
    with Producer(db) as p:
        long_job = p.post("slow-async", LONG_JOB_S)
    wait_until(
        lambda: status_counts(conn).get(JobStatus.PROCESSING) == 1, 30, lambda: a.drain.tail(20)
    )
    b = spawn("--concurrency", "4", "--types", "brief", "--lease", SHORT_LEASE)
    wait_until(lambda: len(worker_ids_for_pid(conn, b.pid)) == 1, 30, lambda: b.drain.tail(20))

    def long_job_row() -> tuple[Any, ...]:
        row = one_row(
            conn,
            "SELECT task_status, task_error_count, sk_owner_worker_id FROM sk_task_results_t"
            " WHERE task_id = %s",
            (long_job,),
        )
        return tuple(row)

    seen: set[tuple[Any, ...]] = set()
    with psycopg.connect(dsn) as locker:  # a transaction: the row locks last until commit
        locker.execute("SELECT * FROM sk_task_execution_time_stats_t FOR UPDATE")
        with Producer(db) as p:
            short = p.post_many([Job("ok", i) for i in range(20)]).ids
        deadline = time.monotonic() + LOCK_S
        while time.monotonic() < deadline:
            seen.add(long_job_row())
            time.sleep(1.0)
        written_meanwhile = status_counts(conn).get(JobStatus.PROCESSED, 0)
        a_state = worker_states(conn).get(a_id)
        locker.rollback()

    print(
        f"\nwhile locked: long job {seen}; A then {a_state!r}; results written: {written_meanwhile}"
    )
    assert seen == {(2, 0, a_id)}, "the long job was reaped from its live worker"
    assert a_state == "alive"
    assert written_meanwhile == len(warm) + len(short), "results waited for the stats rows"
    wait_until(lambda: all_final(conn), 60, lambda: a.drain.tail(20))
    assert long_job_row() == (3, 0, a_id)
    assert completions(log_dir)[str(long_job)] == 1
    for w in (a, b):
        assert w.poll() is None, w.drain.tail()


def test_a_cancelled_statement_is_retried_on_its_connection_not_by_reconnecting(
    dsn: str, db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """While the stats rows are locked, the test cancels (pg_cancel_backend) every
    statement of the worker that waits on a lock. A cancelled statement is an
    error to retry later, not a lost connection: each of the worker's sessions
    stays the same server process, and the metrics are written once the lock goes."""
    with Producer(db) as p:
        p.post_many([Job("ok", i) for i in range(5)])
    w = spawn("--concurrency", "4")
    wait_until(lambda: all_final(conn), 60, lambda: w.drain.tail(20))
    wait_until(lambda: all(n > 0 for n in _stats_rows(conn)), 30, lambda: w.drain.tail(20))

    def sessions() -> dict[str, int]:
        rows = conn.execute(
            "SELECT application_name, pid FROM pg_stat_activity"
            " WHERE application_name LIKE 'skconsole-worker-%%' AND datname = current_database()"
        ).fetchall()
        return {r[0]: r[1] for r in rows}

    before = sessions()
    cancelled = 0
    with psycopg.connect(dsn) as locker:
        locker.execute("SELECT * FROM sk_metrics_t FOR UPDATE")
        locker.execute("SELECT * FROM sk_task_execution_time_stats_t FOR UPDATE")
        with Producer(db) as p:
            p.post_many([Job("ok", i) for i in range(5)])
        # until several waiting statements were cancelled, each retried on its connection
        deadline = time.monotonic() + 30
        with psycopg.connect(dsn, autocommit=True) as canceller:
            while cancelled < 3 and time.monotonic() < deadline:
                cancelled += len(
                    canceller.execute(
                        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity"
                        " WHERE application_name LIKE 'skconsole-worker-%%'"
                        " AND wait_event_type = 'Lock' AND datname = current_database()"
                    ).fetchall()
                )
                time.sleep(0.1)
        after = sessions()
        locker.rollback()

    print(f"\ncancelled {cancelled} waiting statement(s); sessions before {before}, after {after}")
    assert cancelled > 0
    assert after == before, "a cancelled statement made the worker reconnect"
    wait_until(
        lambda: (
            conn.execute(
                "SELECT coalesce(sum(metric_value), 0) FROM sk_metrics_t"
                " WHERE metric_id = 'worker@processed-payload-count'"
            ).fetchone()
            == (10,)
        ),
        30,
        lambda: w.drain.tail(20),
    )
    assert w.poll() is None, w.drain.tail()
