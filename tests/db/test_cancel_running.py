"""Cancelling running jobs: the worker is told on its own channel, stops the
handler, and the job ends 7 Cancelled, never retried; a job whose worker is
gone is cancelled at once; a cancel that reaches the worker late still wins
over a retry, a snooze or a hand-back."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from typing import Any

import psycopg
import pytest

from skconsole import JobCancelled, ops
from skconsole.core.signature import final_exception_line
from skconsole.core.states import InflightState
from skconsole.core.status import JobStatus
from skconsole.core.stored_error import StoredError, readable_error
from skconsole.db.connect import Database
from skconsole.ops import Selection
from skconsole.producer import Job, Producer
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from tests.support.statuses import status_of
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]

tasks = TaskRegistry(TaskOptions(max_attempts=3, backoff=0.05, timeout=120.0))
#: what each handler saw, by task id
seen: dict[str, list[str]] = {}
started: dict[str, threading.Event] = {}


def _started(ctx: JobContext) -> None:
    seen.setdefault(str(ctx.task_id), []).append("started")
    started.setdefault(str(ctx.task_id), threading.Event()).set()


@tasks.task("cancel.async_sleeper")
async def async_sleeper(payload: Any, ctx: JobContext) -> None:
    _started(ctx)
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        seen[str(ctx.task_id)].append("CancelledError")
        raise


@tasks.task("cancel.sync_poller")
def sync_poller(payload: Any, ctx: JobContext) -> None:
    _started(ctx)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if ctx.cancelled:
            seen[str(ctx.task_id)].append("cancelled")
            return  # stops the way most handlers would: it simply returns
        time.sleep(0.01)


@tasks.task("cancel.sync_raiser")
def sync_raiser(payload: Any, ctx: JobContext) -> None:
    _started(ctx)
    for _ in range(6000):
        try:
            ctx.raise_if_cancelled()
        except JobCancelled:
            seen[str(ctx.task_id)].append("JobCancelled")
            raise
        time.sleep(0.01)


@tasks.task("cancel.keyed")
async def keyed(payload: Any, ctx: JobContext) -> None:
    """Runs until cancelled with the first payload; the re-posted one returns at once."""
    seen.setdefault(str(ctx.task_id), []).append(f"v{payload['v']}")
    if payload["v"] == 1:
        _started(ctx)
        await asyncio.sleep(60)


@tasks.task("cancel.stubborn")
def stubborn(payload: Any, ctx: JobContext) -> None:
    """Ignores the cancel for ``payload`` seconds, then fails on its own."""
    _started(ctx)
    time.sleep(float(payload))
    raise RuntimeError("failed on its own")


def result_row(conn: Conn, task_id: Any) -> dict[str, Any]:
    cur = conn.execute(
        "SELECT task_status, task_error_count, task_last_error, sk_attempt,"
        " task_processing_finalized_at_ts IS NOT NULL AS finalized,"
        " (SELECT count(*) FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id) AS queued"
        " FROM sk_task_results_t r WHERE task_id = %s",
        (task_id,),
    )
    row = cur.fetchone()
    assert row is not None
    return dict(zip([c.name for c in cur.description or ()], row, strict=True))


def post_and_start(db: Database, conn: Conn, task_type: str, payload: Any = None) -> uuid.UUID:
    with Producer(db) as p:
        task_id = p.post(task_type, payload)
    started.setdefault(str(task_id), threading.Event())
    assert started[str(task_id)].wait(30), "the job did not start"
    wait_until(lambda: status_of(conn, task_id) == JobStatus.PROCESSING, timeout=10)
    return task_id


def cancel(conn: Conn, *ids: uuid.UUID, wait_s: float = 5.0) -> ops.ActionResult:
    params = ops.CancelParams(wait_s=wait_s)
    preview = ops.CANCEL.preview(conn, Selection(ids=tuple(ids)), params)
    return ops.CANCEL.execute(
        conn, preview.selection, params, actor=ops.Actor("tester", "here"), ids=preview.ids
    )


def test_an_async_job_cancelled_while_running_ends_cancelled_within_2s_and_saw_cancelled_error(
    db: Database, conn: Conn
) -> None:
    with EngineThread(db.dsn, tasks):
        task_id = post_and_start(db, conn, "cancel.async_sleeper")
        # the action waits at most 2 s for the worker: the notification, not the
        # 5 s poll, must have reached it
        result = cancel(conn, task_id, wait_s=2.0)
        assert result.details["cancelled_running"] == 1
        assert result.details["still_running"] == []
    row = result_row(conn, task_id)
    assert (row["task_status"], row["queued"], row["finalized"]) == (JobStatus.CANCELLED, 0, True)
    assert final_exception_line(row["task_last_error"]).startswith(
        "skconsole.JobCancelled: cancelled by an operator"
    )
    assert seen[str(task_id)] == ["started", "CancelledError"]


def test_a_sync_handler_that_returns_when_it_sees_ctx_cancelled_ends_cancelled(
    db: Database, conn: Conn
) -> None:
    with EngineThread(db.dsn, tasks):
        task_id = post_and_start(db, conn, "cancel.sync_poller")
        result = cancel(conn, task_id)
        assert result.details["cancelled_running"] == 1
    assert seen[str(task_id)] == ["started", "cancelled"]
    row = result_row(conn, task_id)
    assert (row["task_status"], row["queued"]) == (JobStatus.CANCELLED, 0)
    assert "it returned after the cancel" in readable_error(row["task_last_error"])


def test_a_sync_handler_calling_raise_if_cancelled_ends_cancelled_not_failed(
    db: Database, conn: Conn
) -> None:
    with EngineThread(db.dsn, tasks):
        task_id = post_and_start(db, conn, "cancel.sync_raiser")
        cancel(conn, task_id)
        wait_until(lambda: status_of(conn, task_id) == JobStatus.CANCELLED, timeout=10)
    assert seen[str(task_id)] == ["started", "JobCancelled"]
    row = result_row(conn, task_id)
    assert (row["task_status"], row["task_error_count"], row["queued"]) == (
        JobStatus.CANCELLED,
        1,
        0,
    )


def test_a_handler_that_ignores_the_cancel_is_reported_still_running_then_ends_cancelled(
    db: Database, conn: Conn
) -> None:
    """The job fails on its own 3 s later: that failure would be retried (3
    attempts), but the cancel is pending, so it ends 7 with its error kept."""
    with EngineThread(db.dsn, tasks):
        task_id = post_and_start(db, conn, "cancel.stubborn", 3)
        result = cancel(conn, task_id, wait_s=0.5)
        assert result.details["cancelled_running"] == 0
        [still] = result.details["still_running"]
        assert still["task_id"] == str(task_id) and still["worker_pid"] is not None
        assert "1 still running: asked to stop" in ops.CANCEL.summary(result.details)
        wait_until(lambda: status_of(conn, task_id) == JobStatus.CANCELLED, timeout=15)
    row = result_row(conn, task_id)
    assert (row["task_status"], row["sk_attempt"], row["queued"]) == (JobStatus.CANCELLED, 1, 0)
    assert "failed after the cancel" in readable_error(row["task_last_error"])
    assert "failed on its own" in readable_error(row["task_last_error"])


def test_the_inflight_view_says_cancel_requested_still_running_past_the_deadline(
    db: Database, conn: Conn
) -> None:
    from skconsole import read

    with EngineThread(db.dsn, tasks):
        task_id = post_and_start(db, conn, "cancel.stubborn", 4)
        cancel(conn, task_id, wait_s=0)
        [job] = read.inflight(conn).jobs
        assert job.state is InflightState.CANCELLING
        # as if the request were older than the deadline (10 s)
        conn.execute(
            "UPDATE sk_task_results_t SET sk_cancel_requested_at_ts = now() - interval '12 s'"
            " WHERE task_id = %s",
            (task_id,),
        )
        [job] = read.inflight(conn).jobs
        assert job.state is InflightState.CANCEL_IGNORED
        assert job.note is not None and job.note.endswith("ago, still running")
        assert job.worker_host and job.worker_pid
        wait_until(lambda: status_of(conn, task_id) == JobStatus.CANCELLED, timeout=15)


def test_a_cancel_request_whose_notification_was_lost_is_found_by_polling(
    db: Database, conn: Conn
) -> None:
    with EngineThread(db.dsn, tasks):
        task_id = post_and_start(db, conn, "cancel.async_sleeper")
        # the request without its NOTIFY, as if the listen connection missed it
        conn.execute(
            "UPDATE sk_task_results_t SET sk_cancel_requested_at_ts = now() WHERE task_id = %s",
            (task_id,),
        )
        wait_until(lambda: status_of(conn, task_id) == JobStatus.CANCELLED, timeout=15)
    assert seen[str(task_id)] == ["started", "CancelledError"]


def test_waiting_and_running_jobs_are_counted_apart(db: Database, conn: Conn) -> None:
    with EngineThread(db.dsn, tasks, concurrency=1):
        running = post_and_start(db, conn, "cancel.async_sleeper")
        with Producer(db) as p:
            waiting = p.post("cancel.async_sleeper")  # concurrency 1: it waits
        result = cancel(conn, running, waiting)
    assert result.changed == 2
    assert result.details["cancelled_waiting"] == 1
    assert result.details["cancelled_running"] == 1
    assert ops.CANCEL.summary(result.details) == ": 1 while waiting, 1 while running"
    assert (status_of(conn, running), status_of(conn, waiting)) == (
        JobStatus.CANCELLED,
        JobStatus.CANCELLED,
    )
    assert seen.get(str(waiting)) is None  # never started


def test_a_type_wide_cancel_leaves_running_jobs_alone_unless_status_2_is_named(
    db: Database, conn: Conn
) -> None:
    with EngineThread(db.dsn, tasks):
        task_id = post_and_start(db, conn, "cancel.async_sleeper")
        by_type = ops.CANCEL.preview(conn, Selection(task_type="cancel.async_sleeper"))
        assert by_type.count == 0
        named = ops.CANCEL.preview(
            conn, Selection(task_type="cancel.async_sleeper", statuses=(JobStatus.PROCESSING,))
        )
        assert named.ids == (task_id,)
        assert named.sample[0].note is not None and "running on" in named.sample[0].note
        cancel(conn, task_id)


def fake_running(conn: Conn, worker_id: uuid.UUID | None, claim_id: int = 41) -> uuid.UUID:
    """A job in 2 Processing as a claim leaves it, owned by ``worker_id``."""
    task_id = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_error_count, task_last_error_is_recoverable,"
        " task_processing_time_milliseconds, task_posted_at_ts,"
        " task_last_processing_attempted_at_ts, sk_owner_worker_id, sk_attempt, sk_claim_id)"
        " VALUES (%s, 'cancel.fake', 'test', 'null', 2, 0, 0, false, 0, now(), now(), %s, 1, %s)",
        (task_id, worker_id, claim_id),
    )
    return task_id


def test_a_running_job_whose_worker_is_gone_is_cancelled_at_once(conn: Conn) -> None:
    task_id = fake_running(conn, uuid.uuid4())  # an owner that is not registered: hung
    result = cancel(conn, task_id, wait_s=0)
    assert result.details["cancelled_gone"] == 1
    row = result_row(conn, task_id)
    assert (row["task_status"], row["queued"], row["finalized"]) == (JobStatus.CANCELLED, 0, True)
    assert "its worker was gone" in readable_error(row["task_last_error"])
    assert "at once: their worker was gone" in ops.CANCEL.summary(result.details)


def test_a_gone_workers_attempt_that_a_cancel_ends_is_kept_in_the_jobs_attempts(
    conn: Conn,
) -> None:
    """The attempt is accounted for as a reap accounts for it (outcome reaped)."""
    worker = uuid.uuid4()
    conn.execute(  # registered, its lease lapsed an hour ago: gone
        "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,"
        " worker_concurrency, worker_task_types, worker_lease_seconds,"
        " worker_lease_margin_seconds, worker_heartbeat_at_ts)"
        " VALUES (%s, 'p', 'gone-host', 4242, 4, '{cancel.fake}', 10, 2,"
        " now() - interval '1 hour')",
        (worker,),
    )
    task_id = fake_running(conn, worker, claim_id=91)

    assert cancel(conn, task_id, wait_s=0).details["cancelled_gone"] == 1

    attempts = conn.execute(
        "SELECT attempt, claim_id, outcome, status, worker_host FROM sk_attempts_t"
        " WHERE task_id = %s",
        (task_id,),
    ).fetchall()
    assert attempts == [(1, 91, "reaped", JobStatus.CANCELLED, "gone-host")]


def test_a_job_run_by_a_worker_without_owner_data_is_not_selected(conn: Conn) -> None:
    """A Stakhanovise.NET worker cannot be told, and the job is not hung yet."""
    task_id = fake_running(conn, None)
    assert ops.CANCEL.preview(conn, Selection(ids=(task_id,)), ops.CancelParams()).count == 0
    assert status_of(conn, task_id) == JobStatus.PROCESSING


@pytest.mark.parametrize(
    ("statement", "params"),
    [
        (
            "finish_failure",
            {"statuses": [4], "errors": ["boom"], "recoverable": [True], "delays_ms": [0.0]},
        ),
        ("hand_back", {"delays_ms": [0.0], "snoozed": [True]}),
    ],
)
def test_an_attempt_that_ends_before_the_worker_hears_of_the_cancel_still_ends_cancelled(
    conn: Conn, statement: str, params: dict[str, Any]
) -> None:
    """The retry (4 Error) or the hand-back (a snooze) the worker writes is turned
    into 7 Cancelled by the statement itself, under the usual fence."""
    from skconsole.db.sqlfiles import query

    worker = uuid.uuid4()
    task_id = fake_running(conn, worker, claim_id=77)
    conn.execute(
        "UPDATE sk_task_results_t SET sk_cancel_requested_at_ts = now() WHERE task_id = %s",
        (task_id,),
    )
    written = conn.execute(
        query(statement),
        {
            "worker_id": worker,
            "ids": [task_id],
            "claims": [77],
            "ms": [5],
            "skip_locked": False,
            **params,
        },
    ).fetchall()
    assert [r[0] for r in written] == [task_id]
    row = result_row(conn, task_id)
    assert (row["task_status"], row["queued"], row["finalized"]) == (JobStatus.CANCELLED, 0, True)
    assert final_exception_line(row["task_last_error"]).startswith("skconsole.JobCancelled")


def test_a_hung_job_with_a_pending_cancel_is_reaped_as_cancelled_not_reposted(conn: Conn) -> None:
    from skconsole.db.sqlfiles import query

    task_id = fake_running(conn, uuid.uuid4())
    conn.execute(
        "UPDATE sk_task_results_t SET sk_cancel_requested_at_ts = now() WHERE task_id = %s",
        (task_id,),
    )
    reaped = conn.execute(
        query("reap"),
        {
            "unowned_s": 3600.0,
            "default_max_attempts": 5,
            "ids": None,
            "limit": 10,
            "exclude_owner": None,
        },
    ).fetchall()
    assert [r[0] for r in reaped] == [task_id]
    row = result_row(conn, task_id)
    assert (row["task_status"], row["queued"]) == (JobStatus.CANCELLED, 0)


def test_a_new_claim_clears_an_earlier_attempts_cancel_request(db: Database, conn: Conn) -> None:
    """Requeued after it was cancelled while running, the job runs again, not
    stopped by the earlier request (it stops when cancelled anew)."""
    with EngineThread(db.dsn, tasks):
        task_id = post_and_start(db, conn, "cancel.sync_poller")
        cancel(conn, task_id)
        started[str(task_id)].clear()
        ops.REQUEUE.execute(
            conn,
            Selection(ids=(task_id,), statuses=(JobStatus.CANCELLED,)),
            ops.RequeueParams(),
            actor=ops.Actor("t", "h"),
        )
        assert started[str(task_id)].wait(30)
        wait_until(lambda: status_of(conn, task_id) == JobStatus.PROCESSING, timeout=10)
        assert conn.execute(
            "SELECT sk_cancel_requested_at_ts FROM sk_task_results_t WHERE task_id = %s",
            (task_id,),
        ).fetchone() == (None,)
        cancel(conn, task_id)
    assert seen[str(task_id)] == ["started", "cancelled", "started", "cancelled"]


def _finish_failure(conn: Conn, worker: uuid.UUID, task_id: uuid.UUID) -> None:
    from skconsole.db.sqlfiles import query

    conn.execute(
        query("finish_failure"),
        {
            "worker_id": worker,
            "ids": [task_id],
            "claims": [77],
            "ms": [5],
            "skip_locked": False,
            "statuses": [4],
            "errors": ["boom"],
            "recoverable": [True],
            "delays_ms": [0.0],
        },
    )


def test_a_keyed_re_post_that_arrived_while_it_ran_wins_over_a_pending_cancel(
    conn: Conn,
) -> None:
    """As for every other ending: the newest payload runs once more, afresh."""
    worker = uuid.uuid4()
    task_id = fake_running(conn, worker, claim_id=77)
    conn.execute(
        "UPDATE sk_task_results_t SET sk_cancel_requested_at_ts = now(),"
        " sk_rerun_requested = true WHERE task_id = %s",
        (task_id,),
    )
    _finish_failure(conn, worker, task_id)
    row = result_row(conn, task_id)
    assert (row["task_status"], row["task_error_count"], row["queued"]) == (
        JobStatus.UNPROCESSED,
        0,
        1,
    )


def test_a_success_written_while_a_cancel_is_pending_is_kept(conn: Conn) -> None:
    """The handler finished before its worker heard of the request: the work was done,
    so the statement recording the success keeps it (3 Processed), fenced as usual."""
    from skconsole.db.sqlfiles import query
    from skconsole.worker.results import children_params

    worker = uuid.uuid4()
    task_id = fake_running(conn, worker, claim_id=77)
    conn.execute(
        "UPDATE sk_task_results_t SET sk_cancel_requested_at_ts = now() WHERE task_id = %s",
        (task_id,),
    )
    written = conn.execute(
        query("finish_success"),
        {
            "worker_id": worker,
            "ids": [task_id],
            "claims": [77],
            "ms": [5],
            "skip_locked": False,
            **children_params([]),
        },
    ).fetchall()
    assert [r[0] for r in written] == [task_id]
    row = result_row(conn, task_id)
    assert (row["task_status"], row["queued"], row["finalized"]) == (JobStatus.PROCESSED, 0, True)


# -- a keyed re-post that arrived while the job ran takes precedence over a cancel ----------
def _rerun_requested(conn: Conn, task_id: uuid.UUID) -> None:
    """What a keyed re-post of a running job leaves: the newest payload, and the request."""
    conn.execute(
        "UPDATE sk_task_results_t SET sk_rerun_requested = true, task_payload = '{\"v\": 2}'"
        " WHERE task_id = %s",
        (task_id,),
    )


def test_a_cancel_of_a_gone_workers_job_runs_the_re_post_instead(conn: Conn) -> None:
    """Its worker is gone, so the cancel would end it at once; a keyed re-post arrived
    while it ran, and that wins: the newest payload runs afresh, and the result says so."""
    task_id = fake_running(conn, uuid.uuid4())
    _rerun_requested(conn, task_id)
    result = cancel(conn, task_id, wait_s=0)
    assert result.details["reposted"] == 1
    row = result_row(conn, task_id)
    assert (row["task_status"], row["queued"], row["finalized"], row["task_error_count"]) == (
        JobStatus.UNPROCESSED,
        1,
        False,
        0,
    )
    assert "run again instead" in ops.CANCEL.summary(result.details)


@pytest.mark.parametrize(
    ("statement", "params"),
    [
        (
            "finish_failure",
            {
                "statuses": [7],
                "errors": [StoredError("skconsole.JobCancelled", "stopped").stored()],
                "recoverable": [False],
                "delays_ms": [0.0],
            },
        ),
        ("hand_back", {"delays_ms": [0.0], "snoozed": [False]}),
    ],
)
def test_an_attempt_stopped_for_a_cancel_runs_the_re_post_that_arrived_meanwhile(
    conn: Conn, statement: str, params: dict[str, Any]
) -> None:
    """The worker stopped the handler for the cancel (a 7 outcome), or handed the job back
    (shutdown, or fenced during a partition): a keyed re-post that arrived while it ran
    takes precedence, so the newest payload goes back to the queue, and the cancel is
    no error of the job's."""
    from skconsole.db.sqlfiles import query

    worker = uuid.uuid4()
    task_id = fake_running(conn, worker, claim_id=78)
    conn.execute(
        "UPDATE sk_task_results_t SET sk_cancel_requested_at_ts = now() WHERE task_id = %s",
        (task_id,),
    )
    _rerun_requested(conn, task_id)
    written = conn.execute(
        query(statement),
        {
            "worker_id": worker,
            "ids": [task_id],
            "claims": [78],
            "ms": [5],
            "skip_locked": False,
            **params,
        },
    ).fetchall()
    assert [r[0] for r in written] == [task_id]
    row = result_row(conn, task_id)
    assert (row["task_status"], row["queued"], row["finalized"]) == (
        JobStatus.UNPROCESSED,
        1,
        False,
    )
    assert row["task_last_error"] is None


def test_a_cancel_racing_a_re_post_of_a_live_workers_job_says_it_runs_again(
    db: Database, conn: Conn
) -> None:
    """A live worker stops the first run for the cancel; the keyed re-post that arrived
    while it ran then runs its newest payload to success. The cancel's result says the
    job runs again (not that it is still running), and the success does not carry the
    cancel as its last error."""
    with EngineThread(db.dsn, tasks):
        with Producer(db) as p:
            task_id = p.post_many([Job("cancel.keyed", {"v": 1}, key="cancel-rerun")]).ids[0]
        started.setdefault(str(task_id), threading.Event())
        assert started[str(task_id)].wait(30), "the job did not start"
        wait_until(lambda: status_of(conn, task_id) == JobStatus.PROCESSING, timeout=10)
        with Producer(db) as p:
            assert p.post_many([Job("cancel.keyed", {"v": 2}, key="cancel-rerun")]).rerun_requested
        result = cancel(conn, task_id, wait_s=10.0)
        assert result.details["still_running"] == []
        assert result.details["reposted"] == 1
        wait_until(lambda: status_of(conn, task_id) == JobStatus.PROCESSED, timeout=30)
    assert seen[str(task_id)] == ["v1", "started", "v2"]
    assert result_row(conn, task_id)["task_last_error"] is None
