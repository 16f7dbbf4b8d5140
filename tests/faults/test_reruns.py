"""A keyed re-post while a job runs leads to exactly one run of the newest payload,
whichever way the running attempt ends: success, failure, hand-back, reap.

Real PostgreSQL and real ``skconsole worker`` processes. The ``versioned``
handler logs every execution with the payload version it ran.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from skconsole.core.signature import final_exception_line
from skconsole.producer import Producer
from tests.support.rows import one_row
from tests.support.tasks_faults import all_final, executions, status_counts, wait_exit
from tests.support.waiting import wait_until

KEY = "report-7"


def _post(db: Any, version: int, **payload: Any) -> Any:
    with Producer(db) as p:
        return p.post("versioned", {"v": version, **payload}, key=KEY)


def _running(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute("SELECT count(*) FROM sk_task_results_t WHERE task_status = 2").fetchone()
    return row == (1,)


def _result(conn: psycopg.Connection[Any]) -> tuple[int, int]:
    row = one_row(conn, "SELECT task_status, task_error_count FROM sk_task_results_t")
    return int(row[0]), int(row[1])


def _versions(log_dir: Path, task_id: Any) -> list[str]:
    return [r.note for r in executions(log_dir).get(str(task_id), [])]


def _diag(conn: psycopg.Connection[Any], log_dir: Path, *workers: Any) -> Callable[[], str]:
    def describe() -> str:
        tails = "\n".join(w.drain.tail(15) for w in workers)
        return f"statuses {status_counts(conn)}, runs {executions(log_dir)}\n{tails}"

    return describe


def test_a_re_post_during_a_successful_run_runs_the_new_payload_once_after_it(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    task_id = _post(db, 1, sleep=2)
    w = spawn("--concurrency", "2")
    wait_until(lambda: _running(conn), 30, _diag(conn, log_dir, w))
    _post(db, 2)

    wait_until(
        lambda: all_final(conn) and len(_versions(log_dir, task_id)) == 2,
        30,
        _diag(conn, log_dir, w),
    )

    assert _versions(log_dir, task_id) == ["v1", "v2"]
    assert _result(conn) == (3, 0)


def test_a_re_post_during_a_failing_run_runs_the_new_payload_once_afresh(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """The failing attempt would be retried with the old payload's error count; the
    newest payload starts afresh instead, ready now, its error count 0."""
    task_id = _post(db, 1, sleep=2, fail=True)
    w = spawn("--concurrency", "2")
    wait_until(lambda: _running(conn), 30, _diag(conn, log_dir, w))
    _post(db, 2)

    wait_until(lambda: all_final(conn), 30, _diag(conn, log_dir, w))

    assert _versions(log_dir, task_id) == ["v1", "v2"]
    assert _result(conn) == (3, 0)


def test_a_re_post_during_a_run_that_is_handed_back_runs_the_new_payload_once(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """SIGTERM with --grace 0s hands the running job back: the queue row carries the
    newest payload, and that run satisfies the re-post (it is not run again after)."""
    task_id = _post(db, 1, sleep=30)
    a = spawn("--concurrency", "2", "--grace", "0s")
    wait_until(lambda: _running(conn), 30, _diag(conn, log_dir, a))
    _post(db, 2)
    a.send_signal(signal.SIGTERM)
    assert wait_exit(a, 30) == 0, a.drain.tail()
    assert _result(conn) == (1, 0)

    b = spawn("--concurrency", "2")
    wait_until(lambda: all_final(conn), 30, _diag(conn, log_dir, b))
    wait_until(lambda: len(_versions(log_dir, task_id)) >= 2, 10, _diag(conn, log_dir, b))

    assert _versions(log_dir, task_id) == ["v1", "v2"]
    assert _result(conn) == (3, 0)


def test_a_re_post_during_a_run_that_is_reaped_runs_the_new_payload_once_even_at_max_attempts(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """The worker dies while the job runs its last allowed attempt: the reap would park
    it as 5 Faulted, losing the re-post. The newest payload runs afresh instead."""
    task_id = _post(db, 1, sleep=60)
    a = spawn("--concurrency", "2")
    wait_until(lambda: _running(conn), 30, _diag(conn, log_dir, a))
    conn.execute("UPDATE sk_task_results_t SET task_error_count = 1")  # its last attempt (of 2)
    _post(db, 2)
    os.killpg(a.pid, signal.SIGKILL)
    a.wait(10)

    b = spawn("--concurrency", "2")
    wait_until(lambda: all_final(conn), 60, _diag(conn, log_dir, b))
    wait_until(lambda: len(_versions(log_dir, task_id)) >= 2, 10, _diag(conn, log_dir, b))

    assert _versions(log_dir, task_id) == ["v1", "v2"]
    assert _result(conn) == (3, 0)
    error = one_row(conn, "SELECT task_last_error FROM sk_task_results_t")
    assert final_exception_line(error[0]).startswith("skconsole.HungJob: worker gone")
