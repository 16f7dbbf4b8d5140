"""Running jobs: failures, retries with back-off, timeouts, bad data, types a
worker cannot or must not run, fencing of late finishers, and the metrics a
worker writes. Handlers live in tests/support/tasks_retry.py."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import psycopg
import pytest

from skconsole import read
from skconsole.core.signature import final_exception_line
from skconsole.core.status import JobStatus
from skconsole.core.stored_error import readable_error
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.producer import Producer
from skconsole.worker.metrics import MetricsBuffer
from skconsole.worker.registry import TaskRegistry
from tests.support.rows import one_row
from tests.support.statuses import status_of
from tests.support.tasks_retry import BACKOFF_CALLS, LONG_BACKOFF, EngineThread, tasks
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]


# -- helpers ----------------------------------------------------------------------
def result_row(conn: Conn, task_id: uuid.UUID) -> dict[str, Any]:
    cur = conn.execute("SELECT * FROM sk_task_results_t WHERE task_id = %s", (task_id,))
    row = cur.fetchone()
    assert row is not None and cur.description is not None
    return dict(zip([c.name for c in cur.description], row, strict=True))


def in_queue(conn: Conn, task_id: uuid.UUID) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM sk_tasks_queue_t WHERE task_id = %s", (task_id,)
    ).fetchone()
    return bool(row and row[0])


def metric(conn: Conn, metric_id: str, owner: str) -> tuple[str, int] | None:
    row = conn.execute(
        "SELECT metric_category, metric_value FROM sk_metrics_t "
        "WHERE metric_id = %s AND metric_owner_process_id = %s",
        (metric_id, owner),
    ).fetchone()
    return (row[0], int(row[1])) if row else None


def post(db: Database, task_type: str, payload: Any = None, **kw: Any) -> uuid.UUID:
    with Producer(db) as p:
        return p.post(task_type, payload, **kw)


def insert_by_hand(conn: Conn, task_type: str, payload_text: str) -> uuid.UUID:
    """Queue and result rows as another producer (e.g. Stakhanovise.NET) might write them."""
    task_id = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status, "
        "task_priority, task_posted_at_ts) VALUES (%s, %s, 'by-hand', %s, 1, 0, now())",
        (task_id, task_type, payload_text),
    )
    conn.execute(
        "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority, "
        "task_locked_until_ts) VALUES (%s, %s, 'by-hand', %s, 0, now() - interval '1 second')",
        (task_id, task_type, payload_text),
    )
    return task_id


# -- failures and retries ------------------------------------------------------------
def test_a_recoverable_failure_records_the_error_and_schedules_a_retry_after_the_backoff(
    dsn: str, db: Database, conn: Conn
) -> None:
    task_id = post(db, "retry.fails_then_waits", {"n": 7})

    with EngineThread(dsn):
        wait_until(lambda: status_of(conn, task_id) == JobStatus.ERROR, timeout=15)

    r = result_row(conn, task_id)
    assert r["task_error_count"] == 1
    assert r["task_last_error_is_recoverable"] is True
    assert r["task_processing_finalized_at_ts"] is None
    error = r["task_last_error"]
    assert "UpstreamUnavailable: upstream unavailable for order 7" in error
    assert "Traceback (most recent call last)" in error
    assert "fail_with_long_backoff" in error  # the handler's frame
    row = conn.execute(
        "SELECT extract(epoch FROM task_locked_until_ts - task_posted_at_ts), task_locked_until_ts > now() "
        "FROM sk_tasks_queue_t WHERE task_id = %s",
        (task_id,),
    ).fetchone()
    assert row is not None, "a job that will be retried is back in the queue"
    assert float(row[0]) == pytest.approx(LONG_BACKOFF, abs=0.01)
    assert row[1] is True


def test_a_job_that_keeps_failing_is_faulted_after_max_attempts(
    db: Database, conn: Conn, start_worker: Any
) -> None:
    max_attempts = tasks.get("retry.always_fails").options.max_attempts  # type: ignore[union-attr]
    task_id = post(db, "retry.always_fails", {"amount": "12,00"})

    worker = start_worker("--tasks", "tests.support.tasks_retry", "--burst", "--poll", "100ms")
    output, _ = worker.communicate(timeout=60)
    assert worker.returncode == 0, output

    r = result_row(conn, task_id)
    assert r["task_status"] == JobStatus.FAULTED
    assert r["task_error_count"] == max_attempts == 3
    assert r["sk_attempt"] == max_attempts
    assert r["task_processing_finalized_at_ts"] is not None
    assert r["task_last_error_is_recoverable"] is True
    assert "ValueError: cannot parse amount" in readable_error(r["task_last_error"])
    assert not in_queue(conn, task_id)


def test_a_fatal_task_error_ends_the_job_at_once_without_retry(
    dsn: str, db: Database, conn: Conn
) -> None:
    task_id = post(db, "retry.fatal")

    with EngineThread(dsn):
        wait_until(lambda: status_of(conn, task_id) == JobStatus.FATAL, timeout=15)

    r = result_row(conn, task_id)
    assert r["task_error_count"] == 1
    assert r["task_last_error_is_recoverable"] is False
    assert r["task_processing_finalized_at_ts"] is not None
    assert "FatalTaskError: recipient address is invalid" in readable_error(r["task_last_error"])
    assert not in_queue(conn, task_id)


def test_a_handler_that_exceeds_its_timeout_fails_recoverably_with_a_timeout_error(
    dsn: str, db: Database, conn: Conn
) -> None:
    task_id = post(db, "retry.slow")

    with EngineThread(dsn):
        wait_until(lambda: status_of(conn, task_id) == JobStatus.ERROR, timeout=15)

    r = result_row(conn, task_id)
    assert final_exception_line(r["task_last_error"]).startswith("TimeoutError")
    assert "timeout of 0.2s" in readable_error(r["task_last_error"])
    assert r["task_last_error_is_recoverable"] is True
    assert r["task_error_count"] == 1
    assert in_queue(conn, task_id)


def test_an_invalid_json_payload_fails_the_job_fatally_and_the_worker_carries_on(
    dsn: str, db: Database, conn: Conn
) -> None:
    bad = insert_by_hand(conn, "retry.ok", "not json{")

    with EngineThread(dsn) as worker:
        wait_until(lambda: status_of(conn, bad) == JobStatus.FATAL, timeout=15)
        good = post(db, "retry.ok", {"fine": True})
        wait_until(lambda: status_of(conn, good) == JobStatus.PROCESSED, timeout=15)
        assert worker.alive

    r = result_row(conn, bad)
    assert final_exception_line(r["task_last_error"]).startswith("InvalidPayload")
    assert "not json{" in readable_error(r["task_last_error"])
    assert "Traceback" not in readable_error(r["task_last_error"])
    assert r["task_last_error_is_recoverable"] is False
    assert r["task_error_count"] == 1
    assert not in_queue(conn, bad)


def test_a_queue_row_without_a_result_row_is_run_and_tracked(
    dsn: str, db: Database, conn: Conn
) -> None:
    task_id = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority, "
        "task_locked_until_ts) VALUES (%s, 'retry.ok', 'by-hand', '{}', 0, now() - interval '1 second')",
        (task_id,),
    )

    with EngineThread(dsn, burst=True) as worker:
        worker.join()

    r = result_row(conn, task_id)
    assert (r["task_status"], r["task_source"], r["sk_attempt"]) == (
        JobStatus.PROCESSED,
        "by-hand",
        1,
    )


def test_a_registry_mixing_whole_and_fractional_timeouts_runs_its_jobs(
    dsn: str, db: Database, conn: Conn
) -> None:
    registry = TaskRegistry()  # the default timeout is 300.0 (a float)

    @registry.task("mixed.whole_timeout", timeout=30)  # an int, as people write it
    async def whole(payload: Any) -> None:
        pass

    @registry.task("mixed.default_timeout")
    async def default(payload: Any) -> None:
        pass

    task_id = post(db, "mixed.whole_timeout")
    worker = EngineThread(dsn, registry).start()
    try:
        wait_until(
            lambda: status_of(conn, task_id) == JobStatus.PROCESSED or not worker.alive, timeout=15
        )
    finally:
        worker.stop()  # re-raises an error that ended the engine

    assert status_of(conn, task_id) == JobStatus.PROCESSED


# -- which jobs a worker claims ----------------------------------------------------------
def test_a_job_of_a_type_the_worker_cannot_run_stays_in_the_queue(
    db: Database, conn: Conn, start_worker: Any
) -> None:
    unknown = post(db, "nobody.runs.this", {"x": 1}, priority=0)
    known = [post(db, "retry.ok", {"i": i}, priority=5) for i in range(3)]

    worker = start_worker("--tasks", "tests.support.tasks_retry", "--burst", "--poll", "100ms")
    output, _ = worker.communicate(timeout=60)
    assert worker.returncode == 0, output

    assert [status_of(conn, k) for k in known] == [JobStatus.PROCESSED] * 3
    assert status_of(conn, unknown) == JobStatus.UNPROCESSED
    assert in_queue(conn, unknown)
    r = result_row(conn, unknown)
    assert (r["sk_attempt"], r["task_error_count"], r["sk_owner_worker_id"]) == (0, 0, None)


def test_a_worker_limited_to_some_types_leaves_the_others_alone(
    db: Database, conn: Conn, start_worker: Any
) -> None:
    other = post(db, "retry.fatal")
    mine = post(db, "retry.ok")

    worker = start_worker(
        "--tasks", "tests.support.tasks_retry", "--types", "retry.ok", "--burst", "--poll", "100ms"
    )
    output, _ = worker.communicate(timeout=60)
    assert worker.returncode == 0, output

    assert status_of(conn, mine) == JobStatus.PROCESSED
    assert status_of(conn, other) == JobStatus.UNPROCESSED and in_queue(conn, other)


def test_a_paused_type_is_not_claimed_until_it_is_resumed(
    dsn: str, db: Database, conn: Conn
) -> None:
    conn.execute(
        "INSERT INTO sk_task_types_t (task_type, tt_paused, tt_paused_at_ts) VALUES ('retry.ok', true, now())"
    )
    paused = post(db, "retry.ok", priority=0)
    witness = post(db, "retry.fatal", priority=9)

    with EngineThread(dsn):
        wait_until(lambda: status_of(conn, witness) == JobStatus.FATAL, timeout=15)
        time.sleep(0.5)  # several poll rounds
        assert status_of(conn, paused) == JobStatus.UNPROCESSED
        assert in_queue(conn, paused)
        # the worker publishing its settings leaves the operator's pause alone
        assert conn.execute(
            "SELECT tt_paused FROM sk_task_types_t WHERE task_type = 'retry.ok'"
        ).fetchone() == (True,)

        conn.execute("UPDATE sk_task_types_t SET tt_paused = false WHERE task_type = 'retry.ok'")
        wait_until(lambda: status_of(conn, paused) == JobStatus.PROCESSED, timeout=15)


def test_a_burst_worker_exits_when_only_paused_jobs_are_left(
    dsn: str, db: Database, conn: Conn
) -> None:
    conn.execute("INSERT INTO sk_task_types_t (task_type, tt_paused) VALUES ('retry.ok', true)")
    paused = post(db, "retry.ok")

    worker = EngineThread(dsn, burst=True).start()
    try:
        worker.join(timeout=5)
    finally:
        worker.stop()

    assert status_of(conn, paused) == JobStatus.UNPROCESSED


# -- fencing -----------------------------------------------------------------------------
def test_a_late_finisher_of_a_job_claimed_again_changes_nothing_and_is_counted(
    dsn: str, db: Database, conn: Conn
) -> None:
    gate = threading.Event()
    started = threading.Event()
    registry = TaskRegistry()

    @registry.task("fence.gated")
    def handler(payload: Any) -> None:
        started.set()
        gate.wait(10)

    task_id = post(db, "fence.gated")
    worker = EngineThread(dsn, registry).start()
    try:
        assert started.wait(15)
        wait_until(lambda: status_of(conn, task_id) == JobStatus.PROCESSING)
        # meanwhile the job is reaped and claimed again by someone else: a new attempt
        conn.execute(
            "UPDATE sk_task_results_t SET sk_attempt = sk_attempt + 1, "
            "sk_claim_id = nextval('sk_claim_id_seq'), "
            "task_last_processing_attempted_at_ts = now() WHERE task_id = %s",
            (task_id,),
        )
        before = result_row(conn, task_id)
        gate.set()
        wait_until(lambda: worker.engine.processed == 1, timeout=15)
    finally:
        gate.set()
        worker.stop()

    assert result_row(conn, task_id) == before
    assert metric(conn, "worker@fenced-result-count", worker.metrics_owner) == ("task-worker", 1)


def test_a_late_failure_of_a_job_claimed_again_changes_nothing(
    dsn: str, db: Database, conn: Conn
) -> None:
    gate = threading.Event()
    started = threading.Event()
    registry = TaskRegistry()

    @registry.task("fence.gated_failure")
    def handler(payload: Any) -> None:
        started.set()
        gate.wait(10)
        raise RuntimeError("too late")

    task_id = post(db, "fence.gated_failure")
    worker = EngineThread(dsn, registry).start()
    try:
        assert started.wait(15)
        wait_until(lambda: status_of(conn, task_id) == JobStatus.PROCESSING)
        conn.execute(
            "UPDATE sk_task_results_t SET sk_attempt = sk_attempt + 1,"
            " sk_claim_id = nextval('sk_claim_id_seq') WHERE task_id = %s",
            (task_id,),
        )
        before = result_row(conn, task_id)
        gate.set()
        wait_until(lambda: worker.engine.processed == 1, timeout=15)
    finally:
        gate.set()
        worker.stop()

    assert result_row(conn, task_id) == before
    assert not in_queue(conn, task_id)
    assert metric(conn, "worker@fenced-result-count", worker.metrics_owner) == ("task-worker", 1)


# -- metrics -----------------------------------------------------------------------------
def test_successes_write_app_metrics_under_stakhanovise_ids_and_execution_time_stats(
    dsn: str, db: Database, conn: Conn
) -> None:
    ids = [post(db, "retry.ok", {"i": i}) for i in range(5)]

    with EngineThread(dsn) as worker:
        wait_until(lambda: all(status_of(conn, i) == JobStatus.PROCESSED for i in ids), timeout=15)
    owner = worker.metrics_owner

    assert metric(conn, "worker@processed-payload-count", owner) == ("task-worker", 5)
    assert metric(conn, "worker@successful-processed-payload-count", owner) == ("task-worker", 5)
    assert metric(conn, "result-queue@result-writes-count", owner) == ("task-result-queue", 5)
    assert metric(conn, "worker@failed-processed-payload-count", owner) is None
    dequeued = metric(conn, "poller@dequeue-count", owner)
    assert dequeued == ("task-poller", 5)
    assert metric(conn, "queue-consumer@total-dequeue-duration", owner) is not None
    stats = one_row(
        conn,
        "SELECT et_n_execution_cycles, et_fastest_execution_time, et_longest_execution_time, "
        "et_avg_execution_time, et_total_execution_time FROM sk_task_execution_time_stats_t "
        "WHERE et_payload_type = 'retry.ok' AND et_owner_process_id = %s",
        (owner,),
    )
    n, fastest, longest, avg, total = stats
    assert n == 5
    assert 0 <= fastest <= avg <= longest <= total


def test_failures_are_counted_in_the_failed_payload_metric(
    dsn: str, db: Database, conn: Conn
) -> None:
    task_id = post(db, "retry.fatal")

    with EngineThread(dsn) as worker:
        wait_until(lambda: status_of(conn, task_id) == JobStatus.FATAL, timeout=15)

    owner = worker.metrics_owner
    assert metric(conn, "worker@failed-processed-payload-count", owner) == ("task-worker", 1)
    assert metric(conn, "worker@processed-payload-count", owner) == ("task-worker", 1)
    assert metric(conn, "worker@successful-processed-payload-count", owner) is None


def test_each_run_writes_its_own_totals_and_readers_sum_them(
    dsn: str, db: Database, conn: Conn
) -> None:
    """As Stakhanovise.NET does: absolute values per owner process, summed by readers
    (two runs under one process id, e.g. a restarted container, never overwrite each other)."""
    post(db, "retry.ok")
    with EngineThread(dsn, burst=True, process_id="shared-host") as first:
        first.join()
    post(db, "retry.ok")
    post(db, "retry.ok")
    with EngineThread(dsn, burst=True, process_id="shared-host") as second:
        second.join()

    assert first.metrics_owner != second.metrics_owner
    assert metric(conn, "worker@processed-payload-count", first.metrics_owner) == ("task-worker", 1)
    assert metric(conn, "worker@processed-payload-count", second.metrics_owner) == (
        "task-worker",
        2,
    )
    assert read.metrics(conn).values()["worker@processed-payload-count"] == 3
    assert conn.execute(
        "SELECT sum(et_n_execution_cycles)::int FROM sk_task_execution_time_stats_t "
        "WHERE et_payload_type = 'retry.ok'"
    ).fetchone() == (3,)


def test_a_late_write_of_older_totals_changes_nothing(conn: Conn) -> None:
    """A write whose connection was abandoned may land after a newer one."""
    older, newer = MetricsBuffer(), MetricsBuffer()
    older.add("worker@processed-payload-count", 5)
    older.execution_time("retry.ok", 10)
    newer.add("worker@processed-payload-count", 7)
    for _ in range(2):
        newer.execution_time("retry.ok", 10)
    for buffer in (newer, older):
        conn.execute(query("add_metrics"), buffer.metric_params("p"))
        conn.execute(query("add_execution_times"), buffer.time_params("p"))
    assert metric(conn, "worker@processed-payload-count", "p") == ("task-worker", 7)
    assert conn.execute(
        "SELECT et_n_execution_cycles FROM sk_task_execution_time_stats_t"
        " WHERE et_owner_process_id = 'p'"
    ).fetchone() == (2,)


# -- retry_on= / fatal_on= / a backoff= callable ---------------------------------------------
def attempts_recorded(conn: Conn, task_id: uuid.UUID) -> int:
    row = one_row(conn, "SELECT count(*) FROM sk_attempts_t WHERE task_id = %s", (task_id,))
    return int(row[0])


def queue_delay_s(conn: Conn, task_id: uuid.UUID) -> float:
    """The back-off a failure set: the re-posted queue row's due time minus its re-post time."""
    row = conn.execute(
        "SELECT extract(epoch FROM task_locked_until_ts - task_posted_at_ts)"
        " FROM sk_tasks_queue_t WHERE task_id = %s",
        (task_id,),
    ).fetchone()
    assert row is not None, "a job that will be retried is back in the queue"
    return float(row[0])


def test_an_exception_in_fatal_on_ends_the_job_fatal_after_one_attempt(
    dsn: str, db: Database, conn: Conn
) -> None:
    task_id = post(db, "retry.fatal_on")

    with EngineThread(dsn):
        wait_until(lambda: status_of(conn, task_id) == JobStatus.FATAL, timeout=15)

    r = result_row(conn, task_id)
    assert (r["sk_attempt"], r["task_error_count"], attempts_recorded(conn, task_id)) == (1, 1, 1)
    assert r["task_last_error_is_recoverable"] is False
    error = readable_error(r["task_last_error"])
    assert "skconsole.RetryPolicy: RecipientRejected is in fatal_on=(RecipientRejected,)" in error
    assert final_exception_line(r["task_last_error"]).endswith(
        "RecipientRejected: mailbox does not exist"
    )  # named and grouped by the handler's error
    assert not in_queue(conn, task_id)


def test_an_exception_not_in_retry_on_ends_the_job_fatal_after_one_attempt(
    dsn: str, db: Database, conn: Conn
) -> None:
    task_id = post(db, "retry.not_in_retry_on")

    with EngineThread(dsn):
        wait_until(lambda: status_of(conn, task_id) == JobStatus.FATAL, timeout=15)

    r = result_row(conn, task_id)
    assert (r["sk_attempt"], r["task_error_count"], attempts_recorded(conn, task_id)) == (1, 1, 1)
    assert "KeyError is not in retry_on=(UpstreamUnavailable,)" in readable_error(
        r["task_last_error"]
    )
    assert not in_queue(conn, task_id)


def test_an_exception_in_retry_on_is_retried_up_to_max_attempts_then_faulted(
    dsn: str, db: Database, conn: Conn
) -> None:
    task_id = post(db, "retry.in_retry_on")

    with EngineThread(dsn):
        wait_until(lambda: status_of(conn, task_id) == JobStatus.FAULTED, timeout=30)

    r = result_row(conn, task_id)
    assert (r["sk_attempt"], r["task_error_count"], attempts_recorded(conn, task_id)) == (3, 3, 3)
    assert r["task_last_error_is_recoverable"] is True
    assert "RetryPolicy" not in readable_error(r["task_last_error"])


def test_a_backoff_callable_sets_the_next_due_time(dsn: str, db: Database, conn: Conn) -> None:
    BACKOFF_CALLS.clear()
    task_id = post(db, "retry.callable_backoff")

    with EngineThread(dsn):
        wait_until(lambda: status_of(conn, task_id) == JobStatus.ERROR, timeout=15)

    assert BACKOFF_CALLS == [1]  # called with the failed attempts so far
    assert queue_delay_s(conn, task_id) == pytest.approx(41.0, abs=0.01)


@pytest.mark.parametrize(
    ("task_type", "says"),
    [
        ("retry.backoff_raises", "backoff(1) raised ZeroDivisionError: division by zero"),
        ("retry.backoff_negative", "backoff(1) returned -1: not a number of seconds >= 0"),
    ],
)
def test_a_failing_backoff_callable_parks_the_job_as_faulted_with_both_errors(
    dsn: str, db: Database, conn: Conn, task_type: str, says: str
) -> None:
    task_id = post(db, task_type)

    with EngineThread(dsn):
        wait_until(lambda: status_of(conn, task_id) == JobStatus.FAULTED, timeout=15)

    r = result_row(conn, task_id)
    assert (r["sk_attempt"], r["task_error_count"]) == (1, 1)
    assert r["task_last_error_is_recoverable"] is True  # parked for an operator: requeue works
    error = readable_error(r["task_last_error"])
    assert final_exception_line(r["task_last_error"]).startswith("skconsole.BackoffError")
    assert says in error
    assert "UpstreamUnavailable: upstream unavailable" in error  # the handler's error is kept
    assert not in_queue(conn, task_id)


def test_a_timeout_is_fatal_when_fatal_on_names_timeout_error(
    dsn: str, db: Database, conn: Conn
) -> None:
    task_id = post(db, "retry.slow_fatal_on_timeout")

    with EngineThread(dsn):
        wait_until(lambda: status_of(conn, task_id) == JobStatus.FATAL, timeout=15)

    r = result_row(conn, task_id)
    assert r["task_error_count"] == 1
    error = readable_error(r["task_last_error"])
    assert "timeout of 0.2s" in error
    assert "TimeoutError is in fatal_on=(TimeoutError,)" in error


def test_a_timeout_is_retried_whatever_retry_on_names(dsn: str, db: Database, conn: Conn) -> None:
    task_id = post(db, "retry.slow_retry_on")

    with EngineThread(dsn):
        wait_until(lambda: status_of(conn, task_id) == JobStatus.ERROR, timeout=15)

    r = result_row(conn, task_id)
    assert final_exception_line(r["task_last_error"]).startswith("TimeoutError")
    assert r["task_last_error_is_recoverable"] is True
    assert in_queue(conn, task_id)
