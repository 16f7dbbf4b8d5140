"""A cancel of running jobs holds when the worker cannot act on it: killed
(SIGKILL) right after the request, or cut off from the database when it is
sent. The jobs end 7 Cancelled, each executed once: never re-run by the
worker that reaps them, never two executions at once."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skconsole import ops
from skconsole.core.status import JobStatus
from skconsole.ops import Selection
from skconsole.producer import Job, Producer
from tests.support.netproxy import FreezableProxy
from tests.support.tasks_faults import (
    executions,
    overlaps,
    queue_count,
    status_counts,
    worker_ids_for_pid,
)
from tests.support.waiting import wait_until

#: workers are cut off from the server: the server is part of what this checks,
#: so .ci/run runs it against every server it tests
pytestmark = pytest.mark.server

Conn = psycopg.Connection[Any]


def _running(conn: Conn, ids: list[Any]) -> int:
    row = conn.execute(
        "SELECT count(*) FROM sk_task_results_t WHERE task_status = 2 AND task_id = ANY(%s)",
        (ids,),
    ).fetchone()
    return int(row[0]) if row else 0


def _cancel(conn: Conn, ids: list[Any]) -> ops.ActionResult:
    params = ops.CancelParams(wait_s=0)
    preview = ops.CANCEL.preview(conn, Selection(ids=tuple(ids)), params)
    assert preview.count == len(ids)
    return ops.CANCEL.execute(
        conn, preview.selection, params, actor=ops.Actor("tester", "here"), ids=preview.ids
    )


def _errors(conn: Conn, ids: list[Any]) -> list[str]:
    rows = conn.execute(
        "SELECT task_last_error FROM sk_task_results_t WHERE task_id = ANY(%s)", (ids,)
    ).fetchall()
    return [r[0] or "" for r in rows]


def test_jobs_whose_worker_is_killed_right_after_the_cancel_end_cancelled_and_never_rerun(
    db: Any, conn: Conn, spawn: Callable[..., Any], log_dir: Path
) -> None:
    """``slow`` ignores the request (a thread cannot be stopped), and the worker is
    SIGKILLed before the jobs end: the reaper of another worker must not post
    them again, as it would any hung job."""
    with Producer(db) as p:
        ids = list(p.post_many([Job("slow", 30) for _ in range(3)]).ids)
    a = spawn("--concurrency", "3", "--lease", "5s")
    wait_until(lambda: _running(conn, ids) == 3, 60, lambda: a.drain.tail(20))
    result = _cancel(conn, ids)
    assert result.details["cancel_requested"] == 3
    os.killpg(a.pid, signal.SIGKILL)
    a.wait(10)
    killed_at = time.time()
    b = spawn("--concurrency", "3", "--lease", "5s")
    wait_until(
        lambda: status_counts(conn) == {JobStatus.CANCELLED: 3},
        60,
        lambda: f"{status_counts(conn)}\n{b.drain.tail()}",
    )
    time.sleep(1.0)  # a re-posted job would have been claimed by B by now
    runs = executions(log_dir, deaths={a.pid: killed_at})
    assert [len(runs[str(i)]) for i in ids] == [1, 1, 1], runs
    assert queue_count(conn) == 0
    assert status_counts(conn) == {JobStatus.CANCELLED: 3}
    assert all("its worker was gone" in e for e in _errors(conn, ids)), _errors(conn, ids)
    assert worker_ids_for_pid(conn, b.pid)


def test_jobs_cancelled_while_their_worker_is_cut_off_end_cancelled_once_it_fences_itself(
    db: Any, conn: Conn, spawn: Callable[..., Any], log_dir: Path, proxy: FreezableProxy
) -> None:
    """The request's notification never reaches A (its connections are frozen);
    A fences itself and stops its jobs, B reaps them after A's lease lapses:
    the pending cancel makes them 7, not re-posted, and no job runs twice."""
    with Producer(db) as p:
        ids = list(
            p.post_many([Job("slow-async", 40) for _ in range(2)] + [Job("cooperative", 40)]).ids
        )
    a = spawn("--concurrency", "3", "--dsn", proxy.dsn)
    wait_until(lambda: _running(conn, ids) == 3, 60, lambda: a.drain.tail(20))
    b = spawn("--concurrency", "3")
    wait_until(lambda: len(worker_ids_for_pid(conn, b.pid)) == 1, 60, lambda: b.drain.tail(20))
    proxy.freeze()
    result = _cancel(conn, ids)  # A's lease has not lapsed: it is asked, and cannot hear
    assert result.details["cancel_requested"] == 3
    wait_until(
        lambda: status_counts(conn) == {JobStatus.CANCELLED: 3},
        60,
        lambda: f"{status_counts(conn)}\n{b.drain.tail(20)}",
    )
    proxy.thaw()
    time.sleep(2.0)  # A's late hand-backs, fenced, and anything B might claim
    runs = executions(log_dir)
    for task_id in ids:
        assert len(runs[str(task_id)]) == 1, runs[str(task_id)]  # A's only
        assert overlaps(runs[str(task_id)]) == []
    assert status_counts(conn) == {JobStatus.CANCELLED: 3}
    assert queue_count(conn) == 0
