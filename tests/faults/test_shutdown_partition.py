"""SIGTERM while the path to the server is silent: the worker still ends in time.

Worker A reaches the server through a proxy the test freezes (no RST: its
connections just go silent), holding four long jobs; then it gets SIGTERM with
``--grace 2s``. Its running jobs are stopped at the end of the grace period,
and their hand-backs cannot reach the server: A gives them at most
FINAL_WRITES_BOUND more seconds, then exits, logging the jobs it left to the
lease. Worker B, connected directly, reaps them once A's lease has lapsed and
runs them; only then is the partition healed. Every job ends Processed exactly
once, and no two executions of a job overlap.
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
from skconsole.worker.shutdown import FINAL_WRITES_BOUND
from tests.support.netproxy import FreezableProxy
from tests.support.tasks_faults import (
    SHORT_LEASE,
    all_final,
    completions,
    executions,
    overlaps,
    status_counts,
    wait_exit,
    worker_ids_for_pid,
)
from tests.support.waiting import wait_until

#: the path to the server goes silent: the server is part of what this checks
pytestmark = pytest.mark.server

GRACE_S = 2.0
#: far longer than the grace period: A can only stop them, never finish them
JOB_S = 8.0


def _held_by(conn: psycopg.Connection[Any], pid: int) -> set[str]:
    ids = worker_ids_for_pid(conn, pid)
    if not ids:
        return set()
    rows = conn.execute(
        "SELECT task_id FROM sk_task_results_t WHERE task_status = 2 AND sk_owner_worker_id = %s",
        (ids[0],),
    ).fetchall()
    return {str(r[0]) for r in rows}


def test_sigterm_during_a_partition_ends_the_worker_and_leaves_its_jobs_to_the_lease(
    db: Any,
    conn: psycopg.Connection[Any],
    spawn: Callable[..., Any],
    log_dir: Path,
    proxy: FreezableProxy,
) -> None:
    with Producer(db) as p:
        long_ids = {
            str(i)
            for i in p.post_many(
                [Job("slow-async", JOB_S) for _ in range(2)]
                + [Job("cooperative", JOB_S)]  # a sync handler that stops when told
                + [Job("slow", JOB_S)]  # a sync handler that ignores it: ends with the process
            ).ids
        }
    a = spawn(
        "--concurrency", "4", "--dsn", proxy.dsn, "--lease", SHORT_LEASE, "--grace", f"{GRACE_S:g}s"
    )
    wait_until(lambda: _held_by(conn, a.pid) == long_ids, 60, lambda: a.drain.tail(20))
    with Producer(db) as p:  # waiting jobs A cannot claim (its slots are full)
        waiting_ids = {str(i) for i in p.post_many([Job("ok", None) for _ in range(3)]).ids}

    proxy.freeze()
    a.send_signal(15)
    t0 = time.monotonic()
    # a guard, not a timing assertion: grace + bound is 7 s; before, over 30 s
    code = wait_exit(a, 3 * (GRACE_S + FINAL_WRITES_BOUND))
    died = time.time()
    print(f"\nA exited with {code} {time.monotonic() - t0:.1f}s after SIGTERM (grace {GRACE_S:g}s)")
    assert code == 0, "still running long after grace + bound\n" + a.drain.tail()
    left = [line for line in a.drain.lines if "left to the lease" in line]
    assert left, a.drain.tail()
    assert all(task_id in "\n".join(left) for task_id in long_ids), a.drain.tail()

    b = spawn("--concurrency", "5", "--lease", SHORT_LEASE)
    # still partitioned: B gets A's jobs back only through the lease (the reaper)
    wait_until(lambda: all_final(conn), 90, lambda: f"{status_counts(conn)}\n{b.drain.tail(20)}")
    proxy.thaw()
    wait_until(lambda: all_final(conn), 30, lambda: f"{status_counts(conn)}\n{b.drain.tail(20)}")

    reaped = conn.execute(
        "SELECT task_id::text FROM sk_task_results_t WHERE task_error_count = 1"
        " AND task_last_error::json->>'Type' = 'skconsole.HungJob'"
    ).fetchall()
    runs = executions(log_dir, deaths={a.pid: died})
    assert status_counts(conn) == {JobStatus.PROCESSED: len(long_ids) + len(waiting_ids)}
    assert {r[0] for r in reaped} == long_ids
    assert completions(log_dir) == {i: 1 for i in long_ids | waiting_ids}
    for task_id in long_ids:  # A's, stopped at the end of the grace period; B's
        assert len(runs[task_id]) == 2, runs[task_id]
        assert overlaps(runs[task_id]) == [], runs[task_id]
