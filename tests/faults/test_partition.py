"""A worker cut off from the database stops its jobs before anyone else may run them.

Worker A reaches the server through a proxy the test freezes (no RST: its
connections just go silent); worker B is connected directly and reaps. A
cannot renew its lease: after lease - margin it stops its own jobs
(self-fencing); B reaps them only after lease + margin and runs them. Both run
under the shortest lease (5 s: A fences itself after 4 s, B reaps after 6 s),
which shows the same as the default 10 s one, in half the time.
Every execution is logged with its start and end: no two executions of a job
may overlap.

* async handlers are cancelled; a sync handler that honours JobContext.stop
  stops too, and A carries on once the partition heals;
* a sync handler that ignores it cannot be stopped, so A ends its own process
  (exit code 75) before its lease lapses, and the thread ends with it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skconsole.core.status import JobStatus
from skconsole.producer import Job, Producer
from tests.support.netproxy import FreezableProxy
from tests.support.tasks_faults import (
    SHORT_LEASE,
    all_final,
    executions,
    overlaps,
    status_counts,
    wait_exit,
    worker_ids_for_pid,
    worker_states,
)
from tests.support.waiting import wait_until

#: the path to the server goes silent: the server is part of what this checks,
#: so .ci/run runs it against every server it tests
pytestmark = pytest.mark.server

#: long enough to be running when A fences itself (4 s) and when B reaps (6 s)
JOB_S = 9.0
EXIT_FENCED = 75


def _a_behind_the_proxy_and_b(
    conn: psycopg.Connection[Any], spawn: Callable[..., Any], proxy: FreezableProxy, jobs: int
) -> tuple[Any, Any]:
    """Worker A, through the proxy, holding all ``jobs``; then worker B, direct, ready."""
    a = spawn("--concurrency", "5", "--dsn", proxy.dsn, "--lease", SHORT_LEASE)
    wait_until(lambda: _held_by(conn, a.pid) == jobs, 60, lambda: a.drain.tail(20))
    b = spawn("--concurrency", "5", "--lease", SHORT_LEASE)
    wait_until(lambda: len(worker_ids_for_pid(conn, b.pid)) == 1, 60, lambda: b.drain.tail(20))
    return a, b


def _held_by(conn: psycopg.Connection[Any], pid: int) -> int:
    ids = worker_ids_for_pid(conn, pid)
    if not ids:
        return 0
    row = conn.execute(
        "SELECT count(*) FROM sk_task_results_t WHERE task_status = 2 AND sk_owner_worker_id = %s",
        (ids[0],),
    ).fetchone()
    return int(row[0]) if row else 0


def test_a_partitioned_worker_stops_its_jobs_before_another_worker_reaps_them(
    db: Any,
    conn: psycopg.Connection[Any],
    spawn: Callable[..., Any],
    log_dir: Path,
    proxy: FreezableProxy,
) -> None:
    with Producer(db) as p:
        ids = p.post_many(
            [Job("slow-async", JOB_S) for _ in range(3)]
            + [Job("cooperative", JOB_S) for _ in range(2)]
        ).ids
    a, b = _a_behind_the_proxy_and_b(conn, spawn, proxy, 5)
    a_id = worker_ids_for_pid(conn, a.pid)[0]

    proxy.freeze()
    frozen_at = time.monotonic()
    wait_until(lambda: _held_by(conn, b.pid) == 5, 30, lambda: b.drain.tail(20))
    reaped_after = time.monotonic() - frozen_at
    state_while_cut_off = worker_states(conn)[a_id]
    proxy.thaw()

    wait_until(lambda: all_final(conn), 90, lambda: f"{status_counts(conn)}\n{b.drain.tail(20)}")
    wait_until(lambda: worker_states(conn)[a_id] == "alive", 30, lambda: a.drain.tail(30))
    runs = executions(log_dir)
    print(
        f"\nA's jobs reaped by B {reaped_after:.1f}s into the partition; A was "
        f"{state_while_cut_off!r} meanwhile; executions per job: "
        f"{sorted(len(runs.get(str(i), [])) for i in ids)}"
    )
    assert state_while_cut_off == "unresponsive"
    assert status_counts(conn) == {JobStatus.PROCESSED: 5}
    for task_id in ids:
        job_runs = runs[str(task_id)]
        assert len(job_runs) == 2, job_runs  # A's, stopped by the fence; B's
        assert overlaps(job_runs) == [], job_runs
    assert a.poll() is None, "A carries on once the partition heals\n" + a.drain.tail()
    assert any("lease not renewed" in line for line in a.drain.lines), a.drain.tail()


def test_a_partitioned_worker_whose_sync_handler_will_not_stop_ends_its_process_in_time(
    db: Any,
    conn: psycopg.Connection[Any],
    spawn: Callable[..., Any],
    log_dir: Path,
    proxy: FreezableProxy,
) -> None:
    with Producer(db) as p:
        ids = p.post_many([Job("slow", JOB_S) for _ in range(2)]).ids
    a, b = _a_behind_the_proxy_and_b(conn, spawn, proxy, 2)

    proxy.freeze()
    frozen_at = time.monotonic()
    code = wait_exit(a, 30)
    died = time.time()
    print(f"\nA exited with {code} {time.monotonic() - frozen_at:.1f}s into the partition")
    proxy.thaw()

    assert code == EXIT_FENCED, a.drain.tail()
    wait_until(lambda: all_final(conn), 90, lambda: f"{status_counts(conn)}\n{b.drain.tail(20)}")
    runs = executions(log_dir, deaths={a.pid: died})
    assert status_counts(conn) == {JobStatus.PROCESSED: 2}
    for task_id in ids:
        job_runs = runs[str(task_id)]
        assert len(job_runs) == 2, job_runs
        assert overlaps(job_runs) == [], job_runs
