"""Dropped connections: terminate every backend of a running worker, several times.

Real PostgreSQL, a real ``skconsole worker`` process, no mocks. While jobs are
posted in a stream and run, the test kills all the worker's server sessions
(``pg_terminate_backend``) a few times. The worker must reconnect and finish
everything: every job 3 Processed, none lost, none left in 2 Processing, and
the process still alive until SIGTERM.

A dropped control connection frees the worker's liveness lock, but liveness
is the lease, renewed again as soon as the worker has reconnected: no job may
be reaped, and every job must run exactly once (a claim whose answer was lost
is handed back unstarted).
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import conninfo, sql

from skconsole.core.status import JobStatus
from skconsole.producer import Job, Producer
from tests.support.tasks_faults import (
    LOCK_HOLDER,
    all_final,
    completions,
    queue_count,
    status_counts,
    stop_gracefully,
    worker_ids_for_pid,
    worker_states,
)
from tests.support.waiting import wait_until

#: the server ends the workers' sessions: the server is part of what this checks,
#: so .ci/run runs it against every server it tests
pytestmark = pytest.mark.server

#: this test's workers only (its database): other test processes may share the server
TERMINATE = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
    " WHERE application_name LIKE 'skconsole-worker%%' AND datname = current_database()"
)
BATCHES = 40
PER_BATCH = 50
ROUNDS = 4


def _diag(conn: psycopg.Connection[Any], w: Any) -> Callable[[], str]:
    return lambda: f"statuses {status_counts(conn)}, queue {queue_count(conn)}\n{w.drain.tail(40)}"


def _batch(i: int) -> list[Job]:
    jobs = []
    for j in range(PER_BATCH):
        k = i * PER_BATCH + j
        if k % 10 == 0:
            jobs.append(Job("slow", 0.3, priority=k % 3))
        elif k % 10 == 1:
            jobs.append(Job("slow-async", 0.5, priority=k % 3))
        else:
            jobs.append(Job("ok", k, priority=k % 3))
    return jobs


def _wait_until_in_flight(conn: psycopg.Connection[Any], n: int, w: Any) -> None:
    count = "SELECT count(*) FROM sk_task_results_t WHERE task_status = 2"
    wait_until(lambda: conn.execute(count).fetchone() == (n,), 60, _diag(conn, w))


@contextlib.contextmanager
def _refusing_new_connections(dsn: str, conn: psycopg.Connection[Any]) -> Iterator[None]:
    """The test database refuses new connections (ALLOW_CONNECTIONS false) meanwhile."""
    dbname = sql.Identifier(conn.info.dbname)
    # a database cannot refuse connections to itself from its own session: use another one
    with psycopg.connect(conninfo.make_conninfo(dsn, dbname="template1"), autocommit=True) as admin:
        admin.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS false").format(dbname))
        try:
            yield
        finally:
            admin.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS true").format(dbname))


def _check_each_ran_once_and_none_was_reaped(
    log_dir: Path, posted: list[Any], errors: list[tuple[Any, int]]
) -> None:
    """(task id, error count) of every job: none reaped, each completed exactly once."""
    done = completions(log_dir)
    assert set(done) == {str(i) for i in posted}, "every job ran to completion"
    reaped = sum(1 for _, n in errors if n > 0)
    reruns = sum(done[str(task_id)] - 1 for task_id, _ in errors)
    assert (reaped, reruns) == (0, 0), (
        f"{reaped} job(s) reaped and {reruns} extra execution(s) although the worker lived: "
        "a dropped connection must not cost a lease"
    )


def _worker_sessions(conn: psycopg.Connection[Any]) -> list[str]:
    rows = conn.execute(
        "SELECT application_name FROM pg_stat_activity WHERE application_name LIKE 'skconsole-worker%%'"
        " AND datname = current_database()"
    ).fetchall()
    return sorted(r[0] for r in rows)


def test_worker_survives_terminated_backends(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    w = spawn("--concurrency", "10")
    wait_until(lambda: len(worker_ids_for_pid(conn, w.pid)) == 1, 60, _diag(conn, w))
    wait_until(lambda: len(_worker_sessions(conn)) >= 3, 60, _diag(conn, w))

    posted: list[Any] = []
    errors: list[BaseException] = []

    def produce() -> None:
        try:
            with Producer(db) as p:
                for i in range(BATCHES):
                    posted.extend(p.post_many(_batch(i)).ids)
                    time.sleep(0.15)
        except BaseException as exc:  # surfaced by the main thread
            errors.append(exc)

    producer = threading.Thread(target=produce)
    t0 = time.monotonic()
    producer.start()
    kills: list[tuple[float, int, int]] = []
    for _ in range(ROUNDS):
        time.sleep(1.2)
        in_flight = int(
            conn.execute("SELECT count(*) FROM sk_task_results_t WHERE task_status = 2").fetchone()[
                0
            ]
        )
        n = len(conn.execute(TERMINATE).fetchall())
        kills.append((time.monotonic() - t0, n, in_flight))
        # it reconnects: control (lock + LISTEN), claim and finish sessions are back
        wait_until(
            lambda: (
                {"skconsole-worker-control", "skconsole-worker-claim", "skconsole-worker-finish"}
                <= set(_worker_sessions(conn))
            ),
            60,
            _diag(conn, w),
        )
    producer.join(120)
    assert not errors, errors
    assert len(posted) == BATCHES * PER_BATCH
    took = wait_until(lambda: all_final(conn), 120, _diag(conn, w))
    print()
    for at, n, in_flight in kills:
        print(
            f"t={at:4.1f}s terminated {n} worker backend(s) with {in_flight} job(s) in 2 Processing"
        )
    print(
        f"all {len(posted)} jobs final {took:.1f}s after the last post ({time.monotonic() - t0:.1f}s in all)"
    )
    assert w.poll() is None, (
        "the worker must survive its connections being dropped\n" + w.drain.tail()
    )

    rows = conn.execute(
        "SELECT task_id, task_status, task_error_count, task_last_error FROM sk_task_results_t"
    ).fetchall()
    assert len(rows) == len(posted), "one result row per posted job"
    assert {r[0] for r in rows} == set(posted)
    assert status_counts(conn) == {JobStatus.PROCESSED: len(posted)}, (
        "every job processed: none lost, none stuck in 2"
    )
    assert queue_count(conn) == 0

    _check_each_ran_once_and_none_was_reaped(log_dir, posted, [(r[0], r[2]) for r in rows])
    lost_claims = sum("a claim whose answer was lost" in line for line in w.drain.lines)
    reconnects = conn.execute(
        "SELECT coalesce(sum(metric_value), 0) FROM sk_metrics_t WHERE metric_id = 'listener@reconnect-count'"
    ).fetchone()[0]
    fenced = conn.execute(
        "SELECT coalesce(sum(metric_value), 0) FROM sk_metrics_t WHERE metric_id = 'worker@fenced-result-count'"
    ).fetchone()[0]
    print(
        f"fenced results: {fenced}; hand-backs of lost claims: {lost_claims}; "
        f"listener reconnects (metric): {reconnects}"
    )

    stop_gracefully(w)
    assert conn.execute(
        "SELECT count(*) FROM sk_task_results_t WHERE task_status = 2"
    ).fetchone() == (0,)


def test_worker_survives_a_storm_of_terminations(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """Harsher: terminate the worker's backends every 0.1-0.3 s for about 8 s while
    1,500 jobs run (half of them 0.2 s long, so the worker is busy throughout), so
    drops land in the middle of claims, result writes, reconnects and lock
    re-acquisition. Same invariants."""
    with Producer(db) as p:
        posted = p.post_many(
            [Job("slow-async", 0.2) if i % 2 == 0 else Job("ok", i) for i in range(1500)]
        ).ids
    w = spawn("--concurrency", "10", "--batch-size", "5")
    wait_until(lambda: len(worker_ids_for_pid(conn, w.pid)) == 1, 60, _diag(conn, w))
    rng = random.Random(7)
    t0 = time.monotonic()
    terminated = rounds = 0
    while time.monotonic() - t0 < 8:
        terminated += len(conn.execute(TERMINATE).fetchall())
        rounds += 1
        time.sleep(rng.uniform(0.1, 0.3))
    print(
        f"\n{rounds} rounds terminated {terminated} worker backend(s) in {time.monotonic() - t0:.1f}s; "
        f"statuses then: {status_counts(conn)}"
    )
    assert w.poll() is None, (
        "the worker must survive its connections being dropped\n" + w.drain.tail()
    )
    took = wait_until(lambda: all_final(conn), 120, _diag(conn, w))
    print(f"all {len(posted)} jobs final {took:.1f}s after the storm")
    assert w.poll() is None, w.drain.tail()
    assert status_counts(conn) == {JobStatus.PROCESSED: len(posted)}, (
        "every job processed: none lost, none stuck in 2"
    )
    assert queue_count(conn) == 0
    rows = conn.execute(
        "SELECT task_id, task_error_count, task_last_error FROM sk_task_results_t"
    ).fetchall()
    _check_each_ran_once_and_none_was_reaped(log_dir, posted, [(r[0], r[1]) for r in rows])
    lock_fail = sum("liveness lock" in line for line in w.drain.lines)
    print(f"'liveness lock' log lines: {lock_fail}")
    # the worker must hold its liveness lock again, or every reaper will keep robbing it
    states = worker_states(conn)
    assert set(states.values()) == {"alive"}, (
        f"the worker lost its liveness lock for good: {states}\n" + w.drain.tail()
    )
    stop_gracefully(w)


def test_worker_regains_its_liveness_lock_after_a_failed_attempt(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """Terminate only the worker's control session and, in the same statement, take
    its liveness lock from the test's session (as the dying old backend may still
    hold it when the worker reconnects, under load). The worker's first
    pg_try_advisory_lock then fails. Hold the lock for 2 s, then release it: the
    worker must keep trying and hold its lock again within seconds; otherwise
    every reaper (its own included) judges it dead for ever and robs each job it
    runs, over and over, until the jobs are Faulted."""
    with Producer(db) as p:
        posted = p.post_many([Job("slow-async", 8.0) for _ in range(3)]).ids
    w = spawn("--concurrency", "5")
    wait_until(lambda: len(worker_ids_for_pid(conn, w.pid)) == 1, 60, _diag(conn, w))
    worker_id = worker_ids_for_pid(conn, w.pid)[0]
    key = conn.execute(
        "SELECT worker_lock_key FROM sk_workers_t WHERE worker_id = %s", (worker_id,)
    ).fetchone()[0]
    _wait_until_in_flight(conn, 3, w)

    def lock_holder() -> str | None:
        row = conn.execute(
            "SELECT a.application_name FROM pg_stat_activity a WHERE a.pid = (" + LOCK_HOLDER + ")",
            (worker_id,),
        ).fetchone()
        return row[0] if row else None

    assert lock_holder() == "skconsole-worker-control"
    with psycopg.connect(
        conn.info.dsn, autocommit=True, application_name="test-lock-thief"
    ) as thief:
        thief.execute(
            "SELECT pg_advisory_lock(sk_lock_class(), %s) FROM (SELECT count(pg_terminate_backend(pid))"
            " FROM pg_stat_activity WHERE application_name = 'skconsole-worker-control'"
            " AND datname = current_database()) AS t",
            (key,),
        )
        assert lock_holder() == "test-lock-thief"
        time.sleep(2.0)
        thief.execute("SELECT pg_advisory_unlock(sk_lock_class(), %s)", (key,))
    released = time.monotonic()
    regained = wait_until(
        lambda: lock_holder() == "skconsole-worker-control",
        20,
        lambda: f"lock holder {lock_holder()}\n{w.drain.tail(15)}",
    )
    print(f"\nworker holds its liveness lock again {regained:.2f}s after it was released")
    assert w.poll() is None, w.drain.tail()
    wait_until(lambda: all_final(conn), 120, _diag(conn, w))
    rows = conn.execute(
        "SELECT task_status, task_error_count, task_last_error FROM sk_task_results_t"
    ).fetchall()
    print(f"final: {rows} ({time.monotonic() - released:.1f}s after release)")
    assert [r[0] for r in rows] == [JobStatus.PROCESSED] * 3, "none lost, none Faulted"
    assert len(posted) == 3


def test_worker_never_reaps_its_own_running_jobs(
    dsn: str, db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """The worker's control session is terminated and, for 5 s, it cannot open a new
    one (the database refuses new connections: ALLOW_CONNECTIONS false). Its other
    sessions stay up, so its reaper keeps running every 2 s and sees a free
    liveness lock for its own worker id. The worker knows it is alive and running
    those jobs: it must not re-post them (that runs each job twice at once and
    throws the first result away as fenced). The only worker here is this one, so
    any reap is a self-reap."""
    with Producer(db) as p:
        posted = p.post_many([Job("slow-async", 9.0) for _ in range(3)]).ids
    w = spawn("--concurrency", "5")
    _wait_until_in_flight(conn, 3, w)
    with _refusing_new_connections(dsn, conn):
        n = len(
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'skconsole-worker-control'"
                " AND datname = current_database()"
            ).fetchall()
        )
        assert n == 1
        time.sleep(5.0)
        during = conn.execute(
            "SELECT task_status, task_error_count, task_last_error FROM sk_task_results_t"
        ).fetchall()
    print(f"\nduring the 5 s outage of its control session: {during}")
    assert w.poll() is None, w.drain.tail()
    wait_until(lambda: all_final(conn), 120, _diag(conn, w))
    rows = conn.execute(
        "SELECT task_id, task_status, task_error_count, task_last_error FROM sk_task_results_t"
    ).fetchall()
    print(f"final: {[(r[1], r[2], (r[3] or '')[:60]) for r in rows]}")
    print(f"completions: {sorted(completions(log_dir).values())}")
    assert status_counts(conn) == {JobStatus.PROCESSED: 3}, "none lost"
    assert all(r[2] == 0 for r in rows), (
        "the worker reaped (re-posted) jobs it was itself still running"
    )
    assert completions(log_dir) == {str(i): 1 for i in posted}, "each job ran exactly once"
    stop_gracefully(w)


def test_other_workers_do_not_reap_a_live_worker_whose_control_session_blipped(
    dsn: str, db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """Worker A runs 3 nine-second jobs; worker B runs beside it, reaping every
    2 s. A's control session (the one holding its liveness lock) is terminated
    and, for 6 s, A cannot open a new one; its other sessions stay up and keep
    its heartbeat fresh. B sees a free lock but a live heartbeat: a blip, not a
    death. It must leave A's jobs alone (reaping them would run each one twice)."""
    with Producer(db) as p:
        posted = p.post_many([Job("slow-async", 9.0) for _ in range(3)]).ids
    a = spawn("--concurrency", "5")
    _wait_until_in_flight(conn, 3, a)
    b = spawn("--concurrency", "5")
    wait_until(lambda: len(worker_ids_for_pid(conn, b.pid)) == 1, 60, _diag(conn, b))
    with _refusing_new_connections(dsn, conn):
        # A's control session only: the one whose process holds A's liveness lock
        a_id = worker_ids_for_pid(conn, a.pid)[0]
        terminated = conn.execute(
            "SELECT pg_terminate_backend((" + LOCK_HOLDER + "))", (a_id,)
        ).fetchall()
        assert terminated == [(True,)]
        time.sleep(6.0)
        during = conn.execute(
            "SELECT task_status, task_error_count FROM sk_task_results_t"
        ).fetchall()
    print(f"\nduring the 6 s outage of A's control session: {during}")
    assert during == [(2, 0)] * 3, "B re-posted jobs that A was still running"
    wait_until(lambda: all_final(conn), 120, _diag(conn, a))
    assert status_counts(conn) == {JobStatus.PROCESSED: 3}, "none lost"
    assert conn.execute("SELECT max(task_error_count) FROM sk_task_results_t").fetchone() == (0,)
    assert completions(log_dir) == {str(i): 1 for i in posted}, "each job ran exactly once"
    for w in (a, b):
        stop_gracefully(w)
