"""Requeue with a spread and with the error counts kept or reset: when each job is due,
in which order, what the preview and the result say of the jobs' attempts, and that a
worker's claim waits for a spread job's due time."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg
import pytest

from skconsole import ops
from skconsole.core.errors import ConfigError
from skconsole.db.connect import Database
from skconsole.ops import Actor, Selection
from skconsole.ops.requeue import Attempts
from skconsole.testing import run_until_idle
from skconsole.worker.registry import TaskRegistry
from tests.db.test_ops import add_job

Conn = psycopg.Connection[Any]
ACTOR = Actor(user="tester", host="test-host")


def due_times(conn: Conn) -> dict[UUID, datetime]:
    return dict(conn.execute("SELECT task_id, task_locked_until_ts FROM sk_tasks_queue_t"))


def set_max_attempts(conn: Conn, task_type: str, max_attempts: int) -> None:
    """What a worker of the type records when it starts (upsert_task_types)."""
    conn.execute(
        "INSERT INTO sk_task_types_t (task_type, tt_max_attempts) VALUES (%s, %s)",
        (task_type, max_attempts),
    )


def test_a_spread_requeue_makes_every_job_due_evenly_over_the_window(conn: Conn) -> None:
    jobs = [add_job(conn, 5) for _ in range(10)]
    (before,) = conn.execute("SELECT now()").fetchone() or ()

    result = ops.REQUEUE.execute(
        conn, Selection(statuses=(5,)), ops.RequeueParams(spread_s=600.0), actor=ACTOR
    )

    (after,) = conn.execute("SELECT now()").fetchone() or ()
    due = due_times(conn)
    assert result.changed == 10 and set(due) == set(jobs)  # none lost, none twice
    times = sorted(due.values())
    start = times[0]
    assert before <= start <= after
    # one every 60 s: the n-th of 10 is due at start + 600 s * n / 10
    assert [t - start for t in times] == [timedelta(seconds=60 * n) for n in range(10)]
    assert times[-1] < start + timedelta(seconds=600)


def test_a_spread_requeue_orders_jobs_by_priority_then_posting_across_batches(
    conn: Conn,
) -> None:
    # posted oldest first: age 50 s, 40 s, ...; priorities interleaved
    posted = [
        add_job(conn, 5, priority=p, age_s=50 - 10 * i) for i, p in enumerate((1, 0, 1, 0, 1))
    ]
    expected = [posted[i] for i in (1, 3, 0, 2, 4)]  # priority 0 first, each oldest first

    ops.REQUEUE.execute(
        conn,
        Selection(statuses=(5,)),
        ops.RequeueParams(spread_s=100.0),
        actor=ACTOR,
        batch_size=2,
    )

    due = due_times(conn)
    assert sorted(due, key=lambda job: due[job]) == expected
    start = due[expected[0]]
    assert [due[j] - start for j in expected] == [timedelta(seconds=20 * n) for n in range(5)]


def test_a_spread_requeue_makes_a_backing_off_job_due_at_its_place(conn: Conn) -> None:
    waiting = add_job(conn, 4, ready=False, priority=0)  # its retry due in an hour
    parked = add_job(conn, 5, priority=1)

    ops.REQUEUE.execute(
        conn, Selection(statuses=(4, 5)), ops.RequeueParams(spread_s=120.0), actor=ACTOR
    )

    due = due_times(conn)
    assert set(due) == {waiting, parked}
    assert due[parked] - due[waiting] == timedelta(seconds=60)
    assert conn.execute("SELECT count(*) FROM sk_tasks_queue_t").fetchone() == (2,)


def test_a_requeue_without_a_spread_makes_every_job_due_at_once(conn: Conn) -> None:
    for _ in range(3):
        add_job(conn, 5)

    ops.REQUEUE.execute(conn, Selection(statuses=(5,)), actor=ACTOR)

    assert conn.execute(
        "SELECT count(*) FROM sk_tasks_queue_t WHERE task_locked_until_ts <= now()"
    ).fetchone() == (3,)


def test_a_spread_requeue_records_the_spread_in_its_audit_row(conn: Conn) -> None:
    add_job(conn, 5)

    ops.REQUEUE.execute(
        conn, Selection(statuses=(5,)), ops.RequeueParams(spread_s=600.0), actor=ACTOR
    )

    (details,) = conn.execute("SELECT audit_details FROM sk_audit_t").fetchone() or ()
    assert details["spread_s"] == 600.0


@pytest.mark.parametrize("spread", [-1.0, float("inf"), float("nan"), 8 * 86_400.0])
def test_a_spread_out_of_bounds_is_refused(spread: float) -> None:
    with pytest.raises(ConfigError, match="--spread must be between 0s and 7d"):
        ops.RequeueParams(spread_s=spread)


def test_the_preview_says_the_jobs_tries_left_with_their_counts_kept(conn: Conn) -> None:
    set_max_attempts(conn, "t.a", 4)
    for _ in range(3):
        add_job(conn, 5, error_count=3)

    preview = ops.REQUEUE.preview(conn, Selection(statuses=(5,)))

    attempts = Attempts.from_json(preview.details["attempts"])
    assert attempts is not None
    assert attempts.kept() == "error counts kept: each job has 1 try left"
    assert attempts.reset() == "error counts reset to 0: each job has 4 tries"
    assert (attempts.errors_text(), attempts.limit_text()) == ("3 errors each", "4 attempts")


def test_the_preview_says_when_the_retry_limit_is_not_known(conn: Conn) -> None:
    add_job(conn, 5, error_count=2, task_type="t.unknown")

    preview = ops.REQUEUE.preview(conn, Selection(statuses=(5,)))

    attempts = Attempts.from_json(preview.details["attempts"])
    assert attempts is not None and attempts.kept() == "error counts kept (2 errors)"
    assert attempts.limit_text().startswith("not known")


def test_the_result_says_error_counts_kept_with_the_tries_left_and_the_spread(
    conn: Conn,
) -> None:
    set_max_attempts(conn, "t.a", 5)
    for _ in range(2):
        add_job(conn, 5, error_count=3)

    result = ops.REQUEUE.execute(
        conn, Selection(statuses=(5,)), ops.RequeueParams(spread_s=600.0), actor=ACTOR
    )

    assert ops.REQUEUE.result_summary(result.details) == (
        "; error counts kept: each job has 2 tries left; due over the next 10m"
    )
    counts = conn.execute("SELECT DISTINCT task_error_count FROM sk_task_results_t").fetchall()
    assert counts == [(3,)]


def test_the_result_says_error_counts_reset_to_0_and_they_are(conn: Conn) -> None:
    set_max_attempts(conn, "t.a", 5)
    for _ in range(2):
        add_job(conn, 5, error_count=3)

    result = ops.REQUEUE.execute(
        conn, Selection(statuses=(5,)), ops.RequeueParams(reset_errors=True), actor=ACTOR
    )

    assert ops.REQUEUE.result_summary(result.details) == (
        "; error counts reset to 0: each job has 5 tries"
    )
    counts = conn.execute("SELECT DISTINCT task_error_count FROM sk_task_results_t").fetchall()
    assert counts == [(0,)]


def test_a_worker_does_not_claim_a_spread_job_before_it_is_due(db: Database) -> None:
    with db.connect() as conn:
        first = add_job(conn, 5, task_type="t.spread", priority=0)
        later = add_job(conn, 5, task_type="t.spread", priority=1)
        # two jobs over two hours: the first due now, the second in an hour
        ops.REQUEUE.execute(
            conn, Selection(statuses=(5,)), ops.RequeueParams(spread_s=7200.0), actor=ACTOR
        )
    tasks = TaskRegistry()
    ran: list[Any] = []
    tasks.task("t.spread")(ran.append)

    report = run_until_idle(db, tasks)

    assert [j.task_id for j in report.jobs] == [first]
    assert [j.task_id for j in report.pending] == [later]
    assert len(ran) == 1
