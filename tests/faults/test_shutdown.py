"""Shutdown with jobs in flight: SIGTERM (grace), SIGTERM past grace, SIGINT twice.

Real PostgreSQL, a real ``skconsole worker`` process (``--processes 1``, so
the signalled pid is the engine itself), no mocks. Whatever happens, no job
may stay in 2 Processing once the worker has exited, and none may be lost.
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
from skconsole.producer import Job, Producer
from tests.support.tasks_faults import (
    LEASE,
    MARGIN,
    completions,
    queue_count,
    status_counts,
    wait_exit,
)
from tests.support.waiting import wait_until


def _diag(conn: psycopg.Connection[Any], w: Any) -> Callable[[], str]:
    return lambda: (
        f"statuses {status_counts(conn)}, queue {queue_count(conn)}, worker output:\n{w.drain.tail()}"
    )


def _processing(conn: psycopg.Connection[Any]) -> int:
    return int(
        conn.execute("SELECT count(*) FROM sk_task_results_t WHERE task_status = 2").fetchone()[0]
    )


def _check_handed_back(
    conn: psycopg.Connection[Any], ids: list[Any], not_before_s: float = 0
) -> None:
    """Every job in ``ids`` is 1 Unprocessed, has its queue row, no error counted, and is
    claimable now (``not_before_s`` 0) or only ``not_before_s`` seconds after it was handed back
    (a sync handler's thread that may still run: by then its process has ended)."""
    rows = conn.execute(
        "SELECT r.task_id, r.task_status, r.task_error_count, q.task_id IS NOT NULL,"
        " extract(epoch FROM q.task_locked_until_ts - q.task_posted_at_ts)"
        " FROM sk_task_results_t r LEFT JOIN sk_tasks_queue_t q ON q.task_id = r.task_id"
        " WHERE r.task_id = ANY(%s)",
        (ids,),
    ).fetchall()
    assert len(rows) == len(ids)
    for task_id, st, errors, queued, delay in rows:
        assert (st, errors, queued) == (1, 0, True), (task_id, st, errors, queued)
        assert float(delay) == pytest.approx(not_before_s, abs=0.01), (task_id, delay)


def test_sigterm_lets_running_jobs_finish_within_grace(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """5 jobs of 2 s run (concurrency 5), 10 more wait. SIGTERM with --grace 30s: the
    5 finish as 3 Processed, the 10 stay 1 Unprocessed in the queue, exit code 0."""
    with Producer(db) as p:
        ids = p.post_many([Job("slow", 2.0) for _ in range(15)]).ids
    w = spawn("--concurrency", "5", "--grace", "30s", "--batch-size", "5")
    wait_until(lambda: _processing(conn) == 5, 60, _diag(conn, w))
    running = [
        r[0]
        for r in conn.execute(
            "SELECT task_id FROM sk_task_results_t WHERE task_status = 2"
        ).fetchall()
    ]
    t0 = time.monotonic()
    w.send_signal(signal.SIGTERM)
    code = wait_exit(w, 60)
    print(f"\nexit {code} {time.monotonic() - t0:.1f}s after SIGTERM (jobs needed up to 2 s)")
    assert code == 0, w.drain.tail()
    assert _processing(conn) == 0
    assert status_counts(conn) == {JobStatus.PROCESSED: 5, JobStatus.UNPROCESSED: 10}
    done = {
        r[0] for r in conn.execute("SELECT task_id FROM sk_task_results_t WHERE task_status = 3")
    }
    assert done == set(running)
    _check_handed_back(conn, [i for i in ids if i not in done])
    assert queue_count(conn) == 10
    assert completions(log_dir) == {str(i): 1 for i in running}
    assert conn.execute(
        "SELECT count(*) FROM sk_workers_t WHERE worker_stopped_at_ts IS NULL"
    ).fetchone() == (0,)


def test_sigterm_past_grace_hands_sync_jobs_back_after_their_threads_are_gone(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """5 jobs that sleep 30 s (in threads, which cannot be stopped) and --grace 1s:
    after SIGTERM they are back in the queue (1 Unprocessed, queue rows present, no
    error counted) but claimable only after lease + margin (12 s), and the process
    ends at once, taking the threads with it, so no other worker can start them
    while they still run."""
    with Producer(db) as p:
        ids = p.post_many([Job("slow", 30.0) for _ in range(5)]).ids
    w = spawn("--concurrency", "5", "--grace", "1s")
    wait_until(lambda: _processing(conn) == 5, 60, _diag(conn, w))
    t0 = time.monotonic()
    w.send_signal(signal.SIGTERM)
    code = wait_exit(w, 60)
    exit_after = time.monotonic() - t0
    print(f"\nexit {code} {exit_after:.1f}s after SIGTERM (grace 1 s)")
    assert code == 0, w.drain.tail()
    assert _processing(conn) == 0
    _check_handed_back(conn, ids, not_before_s=LEASE + MARGIN)
    assert completions(log_dir) == {}


def test_second_sigint_hands_back_immediately(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """The first SIGINT starts a 60 s grace period; a second one hands the running
    jobs back at once and the process exits: async jobs (cancelled) claimable now,
    sync jobs (whose threads end with the process) after lease + margin."""
    with Producer(db) as p:
        sync_ids = p.post_many([Job("slow", 30.0) for _ in range(3)]).ids
        async_ids = p.post_many([Job("slow-async", 30.0) for _ in range(3)]).ids
    w = spawn("--concurrency", "6", "--grace", "60s")
    wait_until(lambda: _processing(conn) == 6, 60, _diag(conn, w))
    w.send_signal(signal.SIGINT)
    time.sleep(1.5)  # an operator's second Ctrl-C, not a duplicate delivery of the first
    assert w.poll() is None, "still in its grace period after one SIGINT"
    assert _processing(conn) == 6, "running jobs keep running during the grace period"
    t0 = time.monotonic()
    w.send_signal(signal.SIGINT)
    code = wait_exit(w, 60)
    print(f"\nexit {code} {time.monotonic() - t0:.1f}s after the second SIGINT")
    assert code == 0, w.drain.tail()
    assert _processing(conn) == 0
    _check_handed_back(conn, async_ids)
    _check_handed_back(conn, sync_ids, not_before_s=LEASE + MARGIN)
    assert completions(log_dir) == {}


def test_ctrl_c_on_a_supervised_worker_gives_running_jobs_their_grace(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """Ctrl-C in a terminal sends SIGINT to the whole foreground process group: the
    supervisor of `--processes 2` and both engine children get it at once. That is
    one interrupt, so it must mean "stop claiming, let running jobs finish" (grace
    30 s), exactly as for `--processes 1`; the children must not count the copy
    the supervisor forwards as a second signal and hand their jobs back."""
    with Producer(db) as p:
        ids = p.post_many([Job("slow", 2.0) for _ in range(4)]).ids
    sup = spawn("--processes", "2", "--concurrency", "2", "--grace", "30s")
    wait_until(lambda: _processing(conn) == 4, 60, _diag(conn, sup))
    t0 = time.monotonic()
    os.killpg(sup.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
    code = wait_exit(sup, 60)
    print(f"\nsupervised worker exited {code} {time.monotonic() - t0:.1f}s after Ctrl-C")
    assert code == 0, sup.drain.tail()
    counts = status_counts(conn)
    handed_back = sum("handing running jobs back" in line for line in sup.drain.lines)
    print(f"statuses after Ctrl-C: {counts}; 'handing running jobs back' log lines: {handed_back}")
    assert _processing(conn) == 0
    assert counts == {JobStatus.PROCESSED: 4}, (
        "the running jobs were handed back instead of finishing within grace"
    )
    assert completions(log_dir) == {str(i): 1 for i in ids}
