"""Behind PgBouncer in transaction mode: every job run exactly once, none twice at once.

Real ``skconsole worker`` processes reach the test server only through a real
PgBouncer (tests.support.pgbouncer) in transaction mode, with fewer server
connections than the workers have client connections, so their transactions
land on whichever server session is free, shared with every other client. What
could break the guarantees there is tried on purpose:

- the pooler hands the next transaction to another server session mid-job
  (``RECONNECT`` on its admin console replaces every server session);
- the pooler restarts mid-drain (SIGKILL, then up again on the same port):
  every client connection is cut;
- a worker is killed (SIGKILL): with no session lock to lose, the console tells
  from its lease alone that it is gone, and its jobs are reaped by another;
- an operator cancels a running job: no notification can reach a worker behind
  the pooler, so it polls for the request;
- ``server_reset_query_always``: PgBouncer resets each server session after
  every transaction (DISCARD ALL);
- two workers share a concurrency limit, each claim on whichever session.

Handlers log each completion (and each execution of ``slow-async`` with its start and
end), so the counts come from the handlers, not only from the rows.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.producer import Job, Producer
from skconsole.read.workers import workers
from tests.db.test_limits import LIMITED, post
from tests.faults.test_limits import count, sample_running, set_limit
from tests.support.pgbouncer import Bouncer, Bouncers
from tests.support.tasks_faults import (
    LEASE,
    MARGIN,
    all_final,
    completions,
    executions,
    overlaps,
    owned_in_flight,
    status_counts,
    wait_exit,
    worker_ids_for_pid,
)
from tests.support.waiting import wait_until

#: server connections the pooler may open: fewer than one worker's links
POOL_SIZE = 4


def _pooler(bouncers: Bouncers, **settings: str | int) -> Bouncer:
    return bouncers.start("transaction", default_pool_size=POOL_SIZE, **settings)


def _post(dsn: str, jobs: list[Job]) -> list[Any]:
    with Producer(Database(dsn)) as p:
        return list(p.post_many(jobs).ids)


def _describe(conn: psycopg.Connection[Any], *procs: Any) -> Callable[[], str]:
    def describe() -> str:
        tails = "\n".join(f"--- worker {w.pid}:\n{w.drain.tail(20)}" for w in procs)
        return f"statuses {status_counts(conn)}\n{tails}"

    return describe


def _exactly_once(conn: psycopg.Connection[Any], log_dir: Path, ids: list[Any]) -> None:
    assert status_counts(conn) == {JobStatus.PROCESSED: len(ids)}, "every job processed, none lost"
    done = completions(log_dir)
    twice = {k: n for k, n in done.items() if n != 1}
    assert not twice, f"{len(twice)} job(s) completed more than once"
    assert set(done) == {str(i) for i in ids}, "each job completed exactly once"


def _stop(*procs: Any) -> None:
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        assert wait_exit(p, 60) == 0, p.drain.tail()


def test_a_drain_through_transaction_pooling_runs_every_job_exactly_once_on_shared_sessions(
    bouncers: Bouncers, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """20,000 jobs, two workers of ten slots (five connections each) and a reader, all on
    four server connections."""
    bouncer = _pooler(bouncers)
    ids = _post(bouncer.dsn, [Job("ok", i) for i in range(20_000)])
    procs = [spawn("--dsn", bouncer.dsn, "--concurrency", "10") for _ in range(2)]
    reader = Database(bouncer.dsn)
    most = 0

    def drained() -> bool:
        nonlocal most
        most = max(most, bouncer.server_connections())
        with reader.connect() as r:  # another client of the same pool, meanwhile
            alive = [w for w in workers(r) if w.alive]
        assert len(alive) <= 2
        return all_final(conn)

    took = wait_until(drained, 300, _describe(conn, *procs), interval=0.2)

    print(f"\n20,000 jobs drained through the pooler in {took:.1f}s on {most} server connections")
    assert most <= POOL_SIZE
    _exactly_once(conn, log_dir, ids)
    _stop(*procs)


def test_running_jobs_keep_their_lease_when_the_pooler_moves_them_to_other_server_sessions(
    bouncers: Bouncers, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """RECONNECT replaces every server session while 3-second jobs run: each of their
    transactions (heartbeats, progress, results) lands on a new one. None is fenced,
    none runs twice."""
    bouncer = _pooler(bouncers)
    ids = _post(bouncer.dsn, [Job("slow-async", 3.0) for _ in range(20)])
    a, b = (spawn("--dsn", bouncer.dsn, "--concurrency", "10") for _ in range(2))
    wait_until(
        lambda: status_counts(conn).get(JobStatus.PROCESSING, 0) == 20,
        60,
        _describe(conn, a, b),
        interval=0.05,
    )
    backends: set[int] = set()
    while status_counts(conn).get(JobStatus.PROCESSED, 0) < 20:
        bouncer.admin("RECONNECT")
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
        ).fetchall()
        backends |= {r[0] for r in rows}
        time.sleep(0.3)

    wait_until(lambda: all_final(conn), 60, _describe(conn, a, b))
    print(f"\nthe jobs' transactions ran on {len(backends)} server sessions")
    assert len(backends) > POOL_SIZE, "the server sessions were replaced while the jobs ran"
    _exactly_once(conn, log_dir, ids)
    runs = executions(log_dir)
    assert all(len(r) == 1 for r in runs.values()), "no job ran a second time"
    fenced = conn.execute(
        "SELECT coalesce(sum(metric_value), 0) FROM sk_metrics_t"
        " WHERE metric_id = 'worker@stopped-by-fence-count'"
    ).fetchone()
    assert fenced == (0,)
    _stop(a, b)


def test_a_pooler_restart_mid_drain_loses_no_job_and_runs_none_twice_at_once(
    bouncers: Bouncers, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """SIGKILL the pooler while jobs run (every client connection cut, answers lost),
    start it again a second later: every job ends 3 Processed, each ran to the end
    once, and no two executions of one job overlapped."""
    bouncer = _pooler(bouncers)
    ids = _post(bouncer.dsn, [Job("slow-async", 0.2) for _ in range(3_000)])
    a, b = (spawn("--dsn", bouncer.dsn, "--concurrency", "20") for _ in range(2))
    wait_until(
        lambda: status_counts(conn).get(JobStatus.PROCESSED, 0) > 500,
        120,
        _describe(conn, a, b),
        interval=0.05,
    )

    bouncer.stop(kill=True)
    time.sleep(1.0)  # the pooler is down for a second: nothing can reach the server
    bouncer.start()

    wait_until(lambda: all_final(conn), 300, _describe(conn, a, b))
    _exactly_once(conn, log_dir, ids)
    runs = executions(log_dir)
    assert not [p for r in runs.values() for p in overlaps(r)], "no two executions overlapped"
    _stop(a, b)


def test_a_killed_worker_behind_the_pooler_is_judged_gone_by_its_lease_and_its_jobs_reaped(
    bouncers: Bouncers, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """Behind the pooler a worker holds no session lock: while it lives the console calls
    it alive (never "connection lost"); SIGKILLed, it is gone once its lease lapses, and
    the other worker (also behind the pooler) reaps and runs its jobs."""
    bouncer = _pooler(bouncers)
    ids = _post(bouncer.dsn, [Job("slow", 3.0) for _ in range(20)])
    a = spawn("--dsn", bouncer.dsn, "--concurrency", "10", "--batch-size", "10")
    wait_until(lambda: worker_ids_for_pid(conn, a.pid), 60, _describe(conn, a))
    (a_id,) = worker_ids_for_pid(conn, a.pid)
    wait_until(lambda: len(owned_in_flight(conn, a_id)) == 10, 60, _describe(conn, a))
    b = spawn("--dsn", bouncer.dsn, "--concurrency", "10")
    reader = Database(bouncer.dsn)

    def state_of(worker_id: Any) -> tuple[str, bool | None]:
        with reader.connect() as r:
            (w,) = [w for w in workers(r) if w.worker_id == worker_id]
        return w.state.value, w.connected

    assert state_of(a_id) == ("alive", None)
    os.killpg(a.pid, signal.SIGKILL)
    killed = time.monotonic()
    a.wait(10)
    wait_until(lambda: state_of(a_id)[0] == "gone", 60, lambda: str(state_of(a_id)))
    gone_after = time.monotonic() - killed

    print(f"\nthe killed worker was judged gone {gone_after:.1f}s after SIGKILL")
    assert gone_after <= LEASE + MARGIN + 3
    wait_until(lambda: all_final(conn), 120, _describe(conn, b))
    assert status_counts(conn) == {JobStatus.PROCESSED: len(ids)}
    done = completions(log_dir)
    assert set(done) == {str(i) for i in ids} and set(done.values()) == {1}
    _stop(b)


def test_an_operator_cancel_reaches_a_running_job_behind_the_pooler(
    bouncers: Bouncers,
    conn: psycopg.Connection[Any],
    spawn: Callable[..., Any],
    run_cli: Callable[..., Any],
) -> None:
    """No notification reaches a worker behind the pooler: it reads its cancel requests
    every second, and the cooperative handler stops at once."""
    bouncer = _pooler(bouncers)
    (task_id,) = _post(bouncer.dsn, [Job("cooperative", 60)])
    w = spawn("--dsn", bouncer.dsn)
    wait_until(lambda: status_counts(conn).get(JobStatus.PROCESSING) == 1, 60, _describe(conn, w))

    asked = time.monotonic()
    proc = run_cli("--dsn", bouncer.dsn, "cancel", "--id", str(task_id), "--yes", use_dsn=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wait_until(lambda: status_counts(conn) == {JobStatus.CANCELLED: 1}, 30, _describe(conn, w))

    print(f"\nthe running job was cancelled {time.monotonic() - asked:.1f}s after the request")
    _stop(w)


@pytest.mark.parametrize("reset", ["DISCARD ALL"])
def test_with_the_server_reset_after_every_transaction_jobs_still_run_exactly_once(
    bouncers: Bouncers,
    conn: psycopg.Connection[Any],
    spawn: Callable[..., Any],
    log_dir: Path,
    reset: str,
) -> None:
    """server_reset_query_always: every server session is reset after each transaction,
    so only what a transaction carries itself holds."""
    bouncer = _pooler(bouncers, server_reset_query=reset, server_reset_query_always=1)
    ids = _post(bouncer.dsn, [Job("ok", i) for i in range(2_000)])
    w = spawn("--dsn", bouncer.dsn, "--concurrency", "10")

    wait_until(lambda: all_final(conn), 120, _describe(conn, w))

    _exactly_once(conn, log_dir, ids)
    _stop(w)


def test_a_concurrency_limit_holds_across_two_workers_behind_the_pooler(
    bouncers: Bouncers, conn: psycopg.Connection[Any], start_worker: Callable[..., Any]
) -> None:
    """A limit is counted and enforced inside the claim statement: two pooled workers of
    concurrency 20 run at most 2 of the limited type at once, and do reach 2."""
    bouncer = _pooler(bouncers)
    set_limit(conn, concurrency=2)
    post(conn, LIMITED, 60)
    for _ in range(2):
        start_worker(
            "--dsn", bouncer.dsn, "--tasks", "tests.support.tasks_limits",
            "--concurrency", "20", "--poll", "100ms",
        )  # fmt: skip

    samples = list(sample_running(conn, lambda: count(conn, LIMITED, 3) == 60, timeout=120))

    assert max(samples) == 2
