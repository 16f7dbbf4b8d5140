"""The one definition of a worker's liveness and of a hung job (sk_worker_liveness,
sk_inflight_tasks), read by the reaper, the operator's reap and the console.

A worker is judged by its lease: reapable only once ``lease + margin`` seconds
have passed since its last renewal, whatever its liveness lock says. The lock
only tells whether its control connection is up.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest

from skconsole import ops, read
from skconsole.core.signature import final_exception_line
from skconsole.core.states import InflightState, WorkerState
from skconsole.core.status import JobStatus
from skconsole.db.schema import LOCK_CLASS
from tests.support.rows import one_row

from .test_ops import add_job

Conn = psycopg.Connection[Any]


def register(
    conn: Conn,
    *,
    heartbeat_age_s: float = 0.2,
    lease_s: float | None = 10.0,
    margin_s: float | None = 2.0,
    host: str = "host-a",
    stopped: bool = False,
) -> tuple[uuid.UUID, int]:
    """A worker registered as the engine registers one; returns (worker id, lock key)."""
    worker = uuid.uuid4()
    row = one_row(
        conn,
        "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,"
        " worker_concurrency, worker_task_types, worker_heartbeat_at_ts, worker_lease_seconds,"
        " worker_lease_margin_seconds, worker_stopped_at_ts)"
        " VALUES (%s, 'p', %s, 42, 4, '{t.a}', now() - %s * interval '1 second', %s, %s,"
        " CASE WHEN %s THEN now() END)"
        " RETURNING worker_lock_key",
        (worker, host, heartbeat_age_s, lease_s, margin_s, stopped),
    )
    return worker, int(row[0])


def connect_worker(holder: Conn, key: int) -> None:
    """``holder`` takes the worker's liveness lock, as its control connection does."""
    holder.execute("SELECT pg_advisory_lock(%s, %s)", (LOCK_CLASS, key))


@pytest.fixture
def holder(dsn: str) -> Any:
    with psycopg.connect(dsn, autocommit=True) as c:
        yield c


def state_of(conn: Conn, worker: uuid.UUID) -> tuple[str, str]:
    row = one_row(
        conn, "SELECT state, note FROM sk_worker_liveness() WHERE worker_id = %s", (worker,)
    )
    return row[0], row[1]


def job_verdict(conn: Conn, task_id: uuid.UUID) -> tuple[str, str | None, str | None]:
    row = one_row(
        conn,
        "SELECT state, note, hung_reason FROM sk_inflight_tasks(3600) WHERE task_id = %s",
        (task_id,),
    )
    return row[0], row[1], row[2]


def test_the_lock_class_of_python_and_sql_is_the_same(conn: Conn) -> None:
    assert conn.execute("SELECT sk_lock_class()").fetchone() == (LOCK_CLASS,)


def test_a_connected_worker_with_a_fresh_lease_is_alive_and_its_job_running(
    conn: Conn, holder: Conn
) -> None:
    worker, key = register(conn)
    connect_worker(holder, key)
    job = add_job(conn, 2, owner=worker, age_s=5)

    assert state_of(conn, worker)[0] == "alive"
    assert job_verdict(conn, job)[0] == "running"
    assert job_verdict(conn, job)[2] is None


def test_a_free_lock_with_a_fresh_lease_is_a_lost_connection_not_a_dead_worker(
    conn: Conn,
) -> None:
    """The control session is gone (a blip, or a role at its connection limit), but
    the lease was renewed 0.2 s ago: the worker still runs its job."""
    worker, _ = register(conn, heartbeat_age_s=0.2)
    job = add_job(conn, 2, owner=worker)

    state, note, hung = job_verdict(conn, job)

    assert (state, hung) == ("connection lost", None)
    assert note is not None and note.startswith("control connection lost, heartbeat 0.")
    assert note.endswith(" s ago")


def test_a_worker_silent_past_lease_minus_margin_is_expiring_but_not_yet_reapable(
    conn: Conn,
) -> None:
    worker, _ = register(conn, heartbeat_age_s=9)
    job = add_job(conn, 2, owner=worker)

    state, note, hung = job_verdict(conn, job)

    assert (state, hung) == ("lease expiring", None)
    assert note is not None and note.startswith("silent for 9.") and "; reapable in 2." in note


def test_a_worker_silent_past_lease_plus_margin_is_gone_and_its_jobs_are_hung(
    conn: Conn,
) -> None:
    worker, _ = register(conn, heartbeat_age_s=12.5, host="web-7")
    job = add_job(conn, 2, owner=worker)

    state, _, hung = job_verdict(conn, job)

    assert state == "hung"
    assert hung == "worker gone (web-7 pid 42): no heartbeat for 12.5 s"
    assert state_of(conn, worker)[0] == "gone"


def test_a_silent_worker_that_still_holds_its_lock_is_unresponsive_and_its_jobs_are_hung(
    conn: Conn, holder: Conn
) -> None:
    """A partitioned worker's session lingers on the server, its lock held: the lock
    does not keep its jobs from being reaped once its lease has lapsed."""
    worker, key = register(conn, heartbeat_age_s=30)
    connect_worker(holder, key)
    job = add_job(conn, 2, owner=worker)

    state, _, hung = job_verdict(conn, job)

    assert state == "hung"
    assert hung is not None and hung.startswith("worker unresponsive (host-a pid 42)")
    assert state_of(conn, worker)[0] == "unresponsive"


def test_each_worker_is_judged_by_its_own_lease(conn: Conn) -> None:
    long_lease, _ = register(conn, heartbeat_age_s=20, lease_s=60, margin_s=5)
    short_lease, _ = register(conn, heartbeat_age_s=20, lease_s=10, margin_s=2)
    kept = add_job(conn, 2, owner=long_lease)
    reaped = add_job(conn, 2, owner=short_lease)

    assert job_verdict(conn, kept)[2] is None
    assert job_verdict(conn, reaped)[2] is not None


def test_a_worker_of_schema_version_1_is_judged_by_a_30_second_lease(conn: Conn) -> None:
    worker, _ = register(conn, heartbeat_age_s=20, lease_s=None, margin_s=None)
    job = add_job(conn, 2, owner=worker)

    assert job_verdict(conn, job)[2] is None


def test_a_job_over_its_timeout_on_a_live_worker_is_timed_out_and_running_not_hung(
    conn: Conn, holder: Conn
) -> None:
    """Its worker enforces the timeout; a sync handler it cannot interrupt keeps the
    job until it returns, so no one else may run it meanwhile."""
    conn.execute("INSERT INTO sk_task_types_t (task_type, tt_timeout_seconds) VALUES ('t.a', 1)")
    worker, key = register(conn)
    connect_worker(holder, key)
    job = add_job(conn, 2, owner=worker, age_s=60)

    state, note, hung = job_verdict(conn, job)

    assert (state, hung) == ("timed out, still running", None)
    assert note is not None and note.startswith("timed out 5")
    assert note.endswith(" s ago, still running")


def test_a_job_of_an_unregistered_worker_is_hung(conn: Conn) -> None:
    job = add_job(conn, 2, owner=uuid.uuid4())

    assert job_verdict(conn, job) == (
        "hung",
        "worker no longer registered",
        "worker gone (no longer registered)",
    )


def test_an_applications_own_advisory_lock_on_the_same_number_does_not_make_a_worker_connected(
    conn: Conn, holder: Conn
) -> None:
    worker, key = register(conn)
    holder.execute("SELECT pg_advisory_lock(%s)", (key,))  # the application's bigint key space

    assert state_of(conn, worker)[0] == "connection lost"


def test_the_operators_reap_leaves_a_live_workers_jobs_alone_whatever_its_lock_says(
    conn: Conn,
) -> None:
    """The operator's reap judged a worker whose control session was down as gone and
    re-posted the job it was still running. Now it uses the same verdict as the
    automatic reaper: no lapsed lease, no reap."""
    worker, _ = register(conn, heartbeat_age_s=0.15)
    job = add_job(conn, 2, owner=worker)

    preview = ops.REAP.preview(conn)
    result = ops.REAP.execute(conn, actor=ops.Actor("t", "h"))

    assert preview.count == 0
    assert result.changed == 0
    assert conn.execute(
        "SELECT task_status, task_error_count FROM sk_task_results_t WHERE task_id = %s", (job,)
    ).fetchone() == (2, 0)


def test_the_operators_reap_re_posts_a_job_whose_workers_lease_lapsed(conn: Conn) -> None:
    worker, _ = register(conn, heartbeat_age_s=15)
    job = add_job(conn, 2, owner=worker)

    result = ops.REAP.execute(conn, actor=ops.Actor("t", "h"))

    assert result.changed == 1
    status, errors, error = conn.execute(
        "SELECT task_status, task_error_count, task_last_error FROM sk_task_results_t"
        " WHERE task_id = %s",
        (job,),
    ).fetchone()
    assert (status, errors) == (JobStatus.ERROR, 1)
    assert final_exception_line(error).startswith(
        "skconsole.HungJob: worker gone (host-a pid 42): no heartbeat for 15"
    )


def test_the_in_flight_read_model_says_what_it_knows(conn: Conn) -> None:
    worker, _ = register(conn, heartbeat_age_s=0.2)
    add_job(conn, 2, owner=worker)

    job = read.inflight(conn).jobs[0]

    assert (job.worker_host, job.worker_pid, job.worker_connected, job.hung) == (
        "host-a",
        42,
        False,
        False,
    )
    assert job.state is InflightState.CONNECTION_LOST
    assert job.note is not None and job.note.startswith("control connection lost, heartbeat")
    assert job.reapable_in_s is not None and 11 < job.reapable_in_s <= 12


def test_the_workers_read_model_tells_each_liveness_state(conn: Conn, holder: Conn) -> None:
    _alive, key = register(conn, host="a-alive")
    connect_worker(holder, key)
    register(conn, host="b-lost", heartbeat_age_s=0.5)
    register(conn, host="c-gone", heartbeat_age_s=60)
    register(conn, host="d-stopped", heartbeat_age_s=60, stopped=True)

    states = sorted(((w.host, w.state, w.alive) for w in read.workers(conn)), key=lambda s: s[0])

    assert states == [
        ("a-alive", WorkerState.ALIVE, True),
        ("b-lost", WorkerState.CONNECTION_LOST, False),
        ("c-gone", WorkerState.GONE, False),
        ("d-stopped", WorkerState.STOPPED, False),
    ]


def test_a_reap_names_the_types_no_live_worker_runs(conn: Conn) -> None:
    """Reaped, a job of a type no live worker runs waits for one: the preview, the result
    and the audit row say which types (``no_live_worker``); none when one runs it."""
    gone, _ = register(conn, heartbeat_age_s=15)
    add_job(conn, 2, owner=gone, task_type="t.a")
    add_job(conn, 2, owner=gone, task_type="t.b")
    other, _ = register(conn, host="host-b")  # runs t.a (register's types)
    # no liveness lock to hold (as behind a transaction pooler): alive by its lease alone
    conn.execute(
        "UPDATE sk_workers_t SET worker_session_lock = false WHERE worker_id = %s", (other,)
    )
    assert read.served_types(read.workers(conn)) == {"t.a"}

    preview = ops.REAP.preview(conn)
    assert preview.count == 2
    assert preview.details["no_live_worker"] == ["t.b"]
    result = ops.REAP.execute(conn, actor=ops.Actor("t", "h"), ids=preview.ids)
    assert result.details["no_live_worker"] == ["t.b"]
    assert "No live worker runs t.b: nothing will take its jobs" in ops.REAP.result_summary(
        result.details
    )
