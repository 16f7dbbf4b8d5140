"""Operator actions against a real PostgreSQL: selection, preview, execute, races, audit."""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any
from uuid import UUID

import psycopg
import pytest

from skconsole import ops
from skconsole.core.errors import ConfigError
from skconsole.core.signature import error_signature, final_exception_line
from skconsole.core.status import FAILED, FINAL, JobStatus
from skconsole.ops import Actor, Selection
from skconsole.read import group_id
from tests.support.rows import one_row
from tests.support.statuses import status_of

Conn = psycopg.Connection[Any]
ACTOR = Actor(user="tester", host="test-host")

TIMEOUT_A = "app.UpstreamTimeout: timeout after 30s on host db-7"
TIMEOUT_B = "app.UpstreamTimeout: timeout after 31s on host db-2"
DECLINED = "app.PaymentDeclined: card declined for customer cus_0042"


def add_job(
    conn: Conn,
    status: int,
    *,
    task_type: str = "t.a",
    error: str | None = None,
    priority: int = 5,
    queued: bool | None = None,
    ready: bool = True,
    age_s: float = 0.0,
    owner: UUID | None = None,
    error_count: int | None = None,
) -> UUID:
    """A job in ``status``, written the way the engine leaves it; ``age_s`` back in time."""
    task_id = uuid.uuid4()
    if error is None and status in FAILED:
        error = TIMEOUT_A
    final = status in (*FINAL, JobStatus.FAULTED)
    conn.execute(
        """
        INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,
            task_priority, task_last_error, task_error_count, task_posted_at_ts,
            task_first_processing_attempted_at_ts, task_last_processing_attempted_at_ts,
            task_processing_finalized_at_ts, task_processing_time_milliseconds, sk_owner_worker_id,
            sk_attempt)
        VALUES (%(id)s, %(type)s, 'tests', '{}', %(status)s, %(priority)s, %(error)s, %(errors)s,
            now() - %(age)s * interval '1 second' - interval '1 second',
            CASE WHEN %(status)s > 1 THEN now() - %(age)s * interval '1 second' END,
            CASE WHEN %(status)s > 1 THEN now() - %(age)s * interval '1 second' END,
            CASE WHEN %(final)s THEN now() - %(age)s * interval '1 second' END,
            CASE WHEN %(status)s = 3 THEN 40 ELSE 0 END, %(owner)s,
            CASE WHEN %(status)s > 1 THEN 1 ELSE 0 END)
        """,
        {
            "id": task_id,
            "type": task_type,
            "status": status,
            "priority": priority,
            "error": error,
            "errors": error_count if error_count is not None else int(status in FAILED),
            "age": age_s,
            "final": final,
            "owner": owner,
        },
    )
    if queued if queued is not None else status in (JobStatus.UNPROCESSED, JobStatus.ERROR):
        conn.execute(
            "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority, "
            "task_posted_at_ts, task_locked_until_ts) VALUES (%s, %s, 'tests', '{}', %s, "
            "now() - %s * interval '1 second', "
            "CASE WHEN %s THEN now() - %s * interval '1 second' - interval '1 second' "
            "ELSE now() + interval '1 hour' END)",
            (task_id, task_type, priority, age_s, ready, age_s),
        )
    return task_id


def queue_row(conn: Conn, task_id: UUID) -> tuple[Any, ...] | None:
    return conn.execute(
        "SELECT task_priority, task_locked_until_ts <= now() FROM sk_tasks_queue_t WHERE task_id = %s",
        (task_id,),
    ).fetchone()


def audit_rows(conn: Conn) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT audit_user, audit_host, audit_action, audit_selection, audit_count, audit_details "
        "FROM sk_audit_t ORDER BY audit_id"
    ).fetchall()


def run_burst_worker(start_worker: Callable[..., Any], *types: str) -> None:
    """A real worker process that runs the demo handlers until nothing is eligible."""
    proc = start_worker("--tasks", "skconsole.demo", "--burst", "--types", ",".join(types))
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out


# -- requeue ---------------------------------------------------------------------------------
def test_requeue_by_group_selects_only_that_failure_group(conn: Conn) -> None:
    a = add_job(conn, 5, error=TIMEOUT_A)
    b = add_job(conn, 6, error=TIMEOUT_B)
    other = add_job(conn, 5, error=DECLINED)

    preview = ops.REQUEUE.preview(conn, Selection(group=error_signature(TIMEOUT_A)))

    assert set(preview.ids or ()) == {a, b}
    assert other not in (preview.ids or ())


def test_requeue_accepts_a_group_short_id(conn: Conn) -> None:
    a = add_job(conn, 5, error=TIMEOUT_A)
    add_job(conn, 5, error=DECLINED)

    preview = ops.REQUEUE.preview(conn, Selection(group=group_id(error_signature(TIMEOUT_A))))

    assert preview.ids == (a,)


def test_requeue_dry_run_count_equals_what_execute_changes(conn: Conn) -> None:
    for _ in range(3):
        add_job(conn, 5, task_type="t.a")
    add_job(conn, 5, task_type="t.b")
    sel = Selection(task_type="t.a")

    preview = ops.REQUEUE.preview(conn, sel)
    result = ops.REQUEUE.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    assert preview.count == result.requested == result.changed == 3
    assert result.skipped_changed_state == 0


def test_requeue_posts_parked_jobs_ready_now_as_unprocessed(conn: Conn) -> None:
    faulted = add_job(conn, 5)
    fatal = add_job(conn, 6)
    cancelled = add_job(conn, 7)

    ops.REQUEUE.execute(conn, Selection(statuses=(5, 6, 7)), actor=ACTOR)

    for job in (faulted, fatal, cancelled):
        assert status_of(conn, job) == JobStatus.UNPROCESSED
        assert queue_row(conn, job) == (5, True)
    assert conn.execute(
        "SELECT count(*) FROM sk_task_results_t WHERE task_processing_finalized_at_ts IS NOT NULL"
    ).fetchone() == (0,)


def test_requeue_makes_a_backing_off_job_ready_without_a_second_queue_row(conn: Conn) -> None:
    job = add_job(conn, 4, ready=False)

    result = ops.REQUEUE.execute(conn, Selection(ids=(job,)), actor=ACTOR)

    assert result.changed == 1
    assert queue_row(conn, job) == (5, True)
    assert conn.execute("SELECT count(*) FROM sk_tasks_queue_t").fetchone() == (1,)
    assert status_of(conn, job) == JobStatus.UNPROCESSED


def test_requeue_resets_the_error_count_only_when_asked(conn: Conn) -> None:
    kept = add_job(conn, 5, error_count=3, task_type="t.keep")
    reset = add_job(conn, 5, error_count=3, task_type="t.reset")

    ops.REQUEUE.execute(conn, Selection(task_type="t.keep"), actor=ACTOR)
    ops.REQUEUE.execute(
        conn,
        Selection(task_type="t.reset"),
        actor=ACTOR,
        params=ops.RequeueParams(reset_errors=True),
    )

    counts = dict(
        conn.execute("SELECT task_type, task_error_count FROM sk_task_results_t").fetchall()
    )
    assert counts == {"t.keep": 3, "t.reset": 0}
    assert {status_of(conn, kept), status_of(conn, reset)} == {JobStatus.UNPROCESSED}


def test_requeue_repeated_changes_nothing(conn: Conn) -> None:
    add_job(conn, 5)
    sel = Selection(statuses=(5,))
    first = ops.REQUEUE.preview(conn, sel)
    ops.REQUEUE.execute(conn, first.selection, actor=ACTOR, ids=first.ids)

    again = ops.REQUEUE.execute(conn, first.selection, actor=ACTOR, ids=first.ids)

    assert (again.requested, again.changed, again.skipped_changed_state) == (1, 0, 1)
    assert conn.execute("SELECT count(*) FROM sk_tasks_queue_t").fetchone() == (1,)
    assert ops.REQUEUE.preview(conn, sel).count == 0


def test_requeue_by_age_takes_only_jobs_idle_for_that_long(conn: Conn) -> None:
    old = add_job(conn, 5, age_s=7200)
    add_job(conn, 5, age_s=60)

    preview = ops.REQUEUE.preview(conn, Selection(older_than_seconds=3600))

    assert preview.ids == (old,)
    assert preview.selection.cutoff is not None


def test_requeue_leaves_a_job_a_worker_finished_meanwhile_processed(
    conn: Conn, start_worker: Callable[..., Any]
) -> None:
    job = add_job(conn, 4, task_type="demo.noop", ready=True)
    preview = ops.REQUEUE.preview(conn, Selection(ids=(job,)))
    assert preview.count == 1

    run_burst_worker(start_worker, "demo.noop")  # claims the retry and finishes it
    assert status_of(conn, job) == JobStatus.PROCESSED
    result = ops.REQUEUE.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    assert (result.changed, result.skipped_changed_state) == (0, 1)
    assert status_of(conn, job) == JobStatus.PROCESSED
    assert queue_row(conn, job) is None


def test_requeue_skips_a_job_being_claimed_without_waiting(conn: Conn, dsn: str) -> None:
    job = add_job(conn, 4, ready=True)
    with psycopg.connect(dsn) as claimer:  # a claim in progress holds the queue row
        claimer.execute("SELECT 1 FROM sk_tasks_queue_t WHERE task_id = %s FOR UPDATE", (job,))
        started = time.monotonic()
        result = ops.REQUEUE.execute(conn, Selection(ids=(job,)), actor=ACTOR)
        elapsed = time.monotonic() - started
        claimer.rollback()

    assert elapsed < 5
    assert (result.changed, result.skipped_changed_state) == (0, 1)
    assert status_of(conn, job) == JobStatus.ERROR


def test_requeue_refuses_processed_jobs(conn: Conn) -> None:
    with pytest.raises(ConfigError, match="requeue acts on jobs in status"):
        ops.REQUEUE.preview(conn, Selection(statuses=(3,)))


def test_an_action_refuses_an_empty_selection(conn: Conn) -> None:
    with pytest.raises(ConfigError, match="needs a selection"):
        ops.REQUEUE.preview(conn, Selection())


def test_requeue_runs_in_batches_and_reports_progress(conn: Conn) -> None:
    for _ in range(5):
        add_job(conn, 5)
    calls: list[tuple[int, int]] = []

    result = ops.REQUEUE.execute(
        conn,
        Selection(statuses=(5,)),
        actor=ACTOR,
        batch_size=2,
        on_progress=lambda done, total: calls.append((done, total)),
    )

    assert result.changed == 5
    assert calls == [(2, 5), (4, 5), (5, 5)]


def test_requeue_writes_an_audit_row(conn: Conn) -> None:
    add_job(conn, 5, task_type="t.a")

    result = ops.REQUEUE.execute(
        conn, Selection(task_type="t.a"), actor=ACTOR, params=ops.RequeueParams(reset_errors=True)
    )

    rows = audit_rows(conn)
    assert len(rows) == 1
    user, host, action, selection, count, details = rows[0]
    assert (user, host, action, count) == ("tester", "test-host", "requeue", 1)
    assert selection == {"task_type": "t.a"}
    assert details["reset_errors"] is True and details["requested"] == 1
    assert result.audit_id is not None


# -- bump ----------------------------------------------------------------------------------
def test_bump_by_lowers_the_priority_number_down_to_zero(conn: Conn) -> None:
    a = add_job(conn, 1, priority=5)
    b = add_job(conn, 1, priority=2)

    ops.BUMP.execute(conn, Selection(task_type="t.a"), actor=ACTOR, params=ops.BumpParams(by=3))

    assert queue_row(conn, a) == (2, True)
    assert queue_row(conn, b) == (0, True)
    prios = dict(conn.execute("SELECT task_id, task_priority FROM sk_task_results_t").fetchall())
    assert prios == {a: 2, b: 0}


def test_bump_to_sets_it_and_a_repeat_changes_nothing(conn: Conn) -> None:
    job = add_job(conn, 4, priority=9)
    preview = ops.BUMP.preview(conn, Selection(ids=(job,)), params=ops.BumpParams(to=1))

    first = ops.BUMP.execute(
        conn, preview.selection, actor=ACTOR, ids=preview.ids, params=ops.BumpParams(to=1)
    )
    again = ops.BUMP.execute(
        conn, preview.selection, actor=ACTOR, ids=preview.ids, params=ops.BumpParams(to=1)
    )

    assert (preview.count, first.changed) == (1, 1)
    assert (again.changed, again.skipped_changed_state, again.details["unchanged"]) == (0, 0, 1)
    assert queue_row(conn, job) == (1, True)


def test_bump_selects_only_waiting_jobs_of_the_group(conn: Conn) -> None:
    waiting = add_job(conn, 4, error=DECLINED)
    add_job(conn, 5, error=DECLINED)  # parked: no queue row
    add_job(conn, 4, error=TIMEOUT_A)

    preview = ops.BUMP.preview(
        conn, Selection(group=error_signature(DECLINED)), params=ops.BumpParams(by=1)
    )

    assert preview.ids == (waiting,)


def test_bump_leaves_a_job_a_worker_claimed_meanwhile(
    conn: Conn, start_worker: Callable[..., Any]
) -> None:
    job = add_job(conn, 1, task_type="demo.noop")
    preview = ops.BUMP.preview(conn, Selection(task_type="demo.noop"), params=ops.BumpParams(to=0))

    run_burst_worker(start_worker, "demo.noop")
    result = ops.BUMP.execute(
        conn, preview.selection, actor=ACTOR, ids=preview.ids, params=ops.BumpParams(to=0)
    )

    assert (result.changed, result.skipped_changed_state) == (0, 1)
    assert status_of(conn, job) == JobStatus.PROCESSED


def test_bump_needs_exactly_one_of_by_and_to(conn: Conn) -> None:
    with pytest.raises(ConfigError, match="exactly one"):
        ops.BUMP.preview(conn, Selection(task_type="t.a"), params=ops.BumpParams(by=1, to=1))


# -- purge -----------------------------------------------------------------------------------
def test_purge_deletes_only_old_final_results(conn: Conn) -> None:
    old = [add_job(conn, s, age_s=40 * 86400) for s in (3, 6, 7)]
    young = add_job(conn, 3, age_s=60)
    faulted = add_job(conn, 5, age_s=40 * 86400)
    waiting = add_job(conn, 1, age_s=40 * 86400)
    backing_off = add_job(conn, 4, age_s=40 * 86400)
    running = add_job(conn, 2, age_s=40 * 86400, owner=uuid.uuid4())

    preview = ops.PURGE.preview(conn, Selection(older_than_seconds=30 * 86400))
    result = ops.PURGE.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    assert set(preview.ids or ()) == set(old)
    assert preview.count == result.changed == 3
    remaining = {r[0] for r in conn.execute("SELECT task_id FROM sk_task_results_t").fetchall()}
    assert remaining == {young, faulted, waiting, backing_off, running}


def test_purge_deletes_faulted_results_only_when_asked(conn: Conn) -> None:
    faulted = add_job(conn, 5, age_s=40 * 86400)

    with pytest.raises(ConfigError, match="--include-faulted"):
        ops.PURGE.preview(conn, Selection(statuses=(5,), older_than_seconds=86400))
    result = ops.PURGE.execute(
        conn,
        Selection(older_than_seconds=86400),
        actor=ACTOR,
        params=ops.PurgeParams(include_faulted=True),
    )

    assert result.changed == 1
    assert status_of(conn, faulted) is None


def test_purge_needs_an_age_or_ids(conn: Conn) -> None:
    with pytest.raises(ConfigError, match="--older-than"):
        ops.PURGE.preview(conn, Selection(task_type="t.a"))


def test_purge_of_a_large_selection_runs_batch_by_batch_with_progress(conn: Conn) -> None:
    for _ in range(7):
        add_job(conn, 3, age_s=7200)
    calls: list[tuple[int, int]] = []

    result = ops.PURGE.execute(
        conn,
        Selection(older_than_seconds=3600),
        actor=ACTOR,
        batch_size=3,
        on_progress=lambda done, total: calls.append((done, total)),
    )

    assert result.changed == 7
    assert calls == [(3, 7), (6, 7), (7, 7)]
    assert conn.execute("SELECT count(*) FROM sk_task_results_t").fetchone() == (0,)


def test_purge_spares_a_job_re_posted_since_the_preview(conn: Conn) -> None:
    job = add_job(conn, 3, age_s=7200)
    preview = ops.PURGE.preview(conn, Selection(older_than_seconds=3600))
    conn.execute("UPDATE sk_task_results_t SET task_status = 1 WHERE task_id = %s", (job,))
    conn.execute(
        "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_priority, "
        "task_locked_until_ts) VALUES (%s, 't.a', 'tests', 0, now())",
        (job,),
    )

    result = ops.PURGE.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    assert (result.changed, result.skipped_changed_state) == (0, 1)
    assert status_of(conn, job) == JobStatus.UNPROCESSED


def test_purge_repeated_deletes_nothing_and_still_audits(conn: Conn) -> None:
    add_job(conn, 3, age_s=7200)
    sel = Selection(older_than_seconds=3600)
    ops.PURGE.execute(conn, sel, actor=ACTOR)

    again = ops.PURGE.execute(conn, sel, actor=ACTOR)

    assert again.changed == 0
    assert [r[2] for r in audit_rows(conn)] == ["purge", "purge"]


# -- reap -----------------------------------------------------------------------------------
def test_reap_re_posts_a_job_whose_worker_is_gone_and_says_why(conn: Conn) -> None:
    job = add_job(conn, 2, owner=uuid.uuid4())

    preview = ops.REAP.preview(conn)
    result = ops.REAP.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    assert preview.count == result.changed == 1
    assert preview.sample[0].note == "worker gone (no longer registered)"
    row = conn.execute(
        "SELECT task_status, task_last_error FROM sk_task_results_t WHERE task_id = %s", (job,)
    ).fetchone()
    assert (row[0], final_exception_line(row[1])) == (
        4,
        "skconsole.HungJob: worker gone (no longer registered)",
    )
    assert queue_row(conn, job) == (5, True)


def test_reap_leaves_a_job_of_a_live_worker_alone(conn: Conn, dsn: str) -> None:
    worker = uuid.uuid4()
    key = one_row(
        conn,
        "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid, "
        "worker_concurrency, worker_task_types) VALUES (%s, 'p', 'h', 1, 1, '{t.a}') "
        "RETURNING worker_lock_key",
        (worker,),
    )
    add_job(conn, 2, owner=worker)
    with psycopg.connect(dsn, autocommit=True) as alive:
        alive.execute("SELECT pg_advisory_lock(%s)", (key[0],))

        assert ops.REAP.preview(conn).count == 0


def test_reap_leaves_a_job_that_finished_meanwhile(conn: Conn) -> None:
    job = add_job(conn, 2, owner=uuid.uuid4())
    preview = ops.REAP.preview(conn)
    conn.execute("UPDATE sk_task_results_t SET task_status = 3 WHERE task_id = %s", (job,))

    result = ops.REAP.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    assert (result.changed, result.skipped_changed_state) == (0, 1)
    assert status_of(conn, job) == JobStatus.PROCESSED
    assert queue_row(conn, job) is None


def test_reap_repeated_reaps_nothing(conn: Conn) -> None:
    add_job(conn, 2, owner=uuid.uuid4())
    preview = ops.REAP.preview(conn)
    ops.REAP.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    again = ops.REAP.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    assert again.changed == 0
    assert conn.execute("SELECT count(*) FROM sk_tasks_queue_t").fetchone() == (1,)


# -- cancel ---------------------------------------------------------------------------------
def test_cancel_removes_waiting_jobs_from_the_queue(conn: Conn) -> None:
    a = add_job(conn, 1)
    b = add_job(conn, 4, ready=False)
    running = add_job(conn, 2, owner=uuid.uuid4())

    preview = ops.CANCEL.preview(conn, Selection(task_type="t.a"))
    result = ops.CANCEL.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    assert set(preview.ids or ()) == {a, b}
    assert result.changed == 2
    assert (status_of(conn, a), status_of(conn, b), status_of(conn, running)) == (
        JobStatus.CANCELLED,
        JobStatus.CANCELLED,
        JobStatus.PROCESSING,
    )
    assert conn.execute("SELECT count(*) FROM sk_tasks_queue_t").fetchone() == (0,)


def test_cancel_leaves_a_job_a_worker_claimed_meanwhile(
    conn: Conn, start_worker: Callable[..., Any]
) -> None:
    job = add_job(conn, 1, task_type="demo.noop")
    preview = ops.CANCEL.preview(conn, Selection(ids=(job,)))

    run_burst_worker(start_worker, "demo.noop")
    result = ops.CANCEL.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    assert (result.changed, result.skipped_changed_state) == (0, 1)
    assert status_of(conn, job) == JobStatus.PROCESSED


def test_cancel_repeated_changes_nothing(conn: Conn) -> None:
    job = add_job(conn, 1)
    preview = ops.CANCEL.preview(conn, Selection(ids=(job,)))
    ops.CANCEL.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    again = ops.CANCEL.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    assert again.changed == 0
    assert status_of(conn, job) == JobStatus.CANCELLED


def test_cancel_of_a_hand_posted_job_records_it_cancelled(conn: Conn) -> None:
    job = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_priority, "
        "task_locked_until_ts) VALUES (%s, 't.raw', 'stakhanovise', 0, now())",
        (job,),
    )

    result = ops.CANCEL.execute(conn, Selection(task_type="t.raw"), actor=ACTOR)

    assert result.changed == 1
    assert status_of(conn, job) == JobStatus.CANCELLED


# -- pause / resume --------------------------------------------------------------------------
def test_a_paused_type_is_not_claimed_until_resumed(
    conn: Conn, start_worker: Callable[..., Any]
) -> None:
    job = add_job(conn, 1, task_type="demo.noop")
    sel = Selection(task_type="demo.noop")
    assert ops.PAUSE.preview(conn, sel).count == 1

    ops.PAUSE.execute(conn, sel, actor=ACTOR)
    run_burst_worker(start_worker, "demo.noop")
    assert status_of(conn, job) == JobStatus.UNPROCESSED

    ops.RESUME.execute(conn, sel, actor=ACTOR)
    run_burst_worker(start_worker, "demo.noop")
    assert status_of(conn, job) == JobStatus.PROCESSED


def test_pausing_twice_changes_nothing_the_second_time(conn: Conn) -> None:
    sel = Selection(task_type="t.a")
    first = ops.PAUSE.execute(conn, sel, actor=ACTOR)
    second = ops.PAUSE.execute(conn, sel, actor=ACTOR)

    assert (first.changed, second.changed) == (1, 0)
    assert ops.PAUSE.preview(conn, sel).details["paused"] is True
    assert [r[2] for r in audit_rows(conn)] == ["pause", "pause"]


def test_pause_needs_a_type_and_nothing_else(conn: Conn) -> None:
    with pytest.raises(ConfigError, match="--type"):
        ops.PAUSE.preview(conn, Selection(statuses=(1,)))


# -- audit ----------------------------------------------------------------------------------
def test_audit_entries_list_every_execution_newest_first(conn: Conn) -> None:
    add_job(conn, 5)
    ops.REQUEUE.execute(conn, Selection(statuses=(5,)), actor=ACTOR)
    ops.PAUSE.execute(conn, Selection(task_type="t.a"), actor=ACTOR)

    entries = ops.audit.entries(conn)

    assert [(e.action, e.count, e.user) for e in entries] == [
        ("pause", 1, "tester"),
        ("requeue", 1, "tester"),
    ]
    assert entries[1].selection == {"statuses": [5]}


def test_a_long_action_holds_no_lock_a_worker_waits_for(conn: Conn, dsn: str) -> None:
    """Batches commit one by one: a claim between two batches proceeds at once."""
    for _ in range(4):
        add_job(conn, 5)
    other = add_job(conn, 1, task_type="t.other")
    claimed: list[int] = []

    def claim_between_batches(done: int, total: int) -> None:
        if done == 2:
            with psycopg.connect(dsn, autocommit=True, options="-c lock_timeout=2000") as c:
                rows = c.execute(
                    "DELETE FROM sk_tasks_queue_t WHERE task_id = %s RETURNING 1", (other,)
                ).fetchall()
                claimed.append(len(rows))

    result = ops.REQUEUE.execute(
        conn,
        Selection(statuses=(5,)),
        actor=ACTOR,
        batch_size=2,
        on_progress=claim_between_batches,
    )

    assert result.changed == 4
    assert claimed == [1]


def test_an_action_from_a_worker_thread_works(conn: Conn, dsn: str) -> None:
    """The console calls ops from a worker thread with its own connection."""
    add_job(conn, 5)
    results: list[int] = []

    def run() -> None:
        with psycopg.connect(dsn, autocommit=True) as c:
            p = ops.REQUEUE.preview(c, Selection(statuses=(5,)))
            results.append(ops.REQUEUE.execute(c, p.selection, actor=ACTOR, ids=p.ids).changed)

    t = threading.Thread(target=run)
    t.start()
    t.join(30)
    assert results == [1]
    assert conn.execute("SELECT task_status FROM sk_task_results_t").fetchall() == [(1,)]


def test_a_purge_preview_beyond_the_capture_limit_re_evaluates_its_frozen_selection(
    conn: Conn,
) -> None:
    purge = dataclasses.replace(ops.PURGE, capture_limit=2)
    old = [add_job(conn, 3, age_s=7200) for _ in range(3)]
    preview = purge.preview(conn, Selection(older_than_seconds=3600))
    fresh = add_job(conn, 3)  # finished after the preview: after its cutoff

    result = purge.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)

    assert (preview.count, preview.ids, len(preview.sample)) == (3, None, 3)
    assert result.changed == 3
    assert [status_of(conn, j) for j in old] == [None, None, None]
    assert status_of(conn, fresh) == JobStatus.PROCESSED
