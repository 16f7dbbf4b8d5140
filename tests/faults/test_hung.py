"""Hung jobs: a handler over its type's timeout, and the reaper's verdicts.

Real PostgreSQL, real ``skconsole worker`` processes (``--tasks
tests.support.tasks_faults``), no mocks. Two paths end a hung job:

* its own worker, when the handler exceeds the type's timeout: the attempt
  fails with a TimeoutError like any recoverable error;
* the reaper of any running worker, for a job in 2 Processing whose owner is
  gone (dead or unregistered) or, with no owner recorded at all (a
  Stakhanovise.NET worker), that has been processing for longer than the
  unowned threshold (3600 s by default).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from skconsole.core.signature import final_exception_line
from skconsole.core.status import JobStatus
from skconsole.core.stored_error import readable_error
from skconsole.producer import Job, Producer
from tests.support.tasks_faults import HANG_ATTEMPTS, completions
from tests.support.waiting import wait_until


def _row(conn: psycopg.Connection[Any], task_id: uuid.UUID) -> dict[str, Any]:
    cur = conn.execute(
        "SELECT task_status, task_error_count, task_last_error, task_last_error_is_recoverable,"
        " sk_attempt, sk_owner_worker_id,"
        " (SELECT count(*) FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id) AS queued"
        " FROM sk_task_results_t r WHERE task_id = %s",
        (task_id,),
    )
    row = cur.fetchone()
    assert row is not None, f"no result row for {task_id}"
    names = [d.name for d in cur.description or []]
    return dict(zip(names, row, strict=True))


def _insert_processing(
    conn: psycopg.Connection[Any], task_type: str, owner: uuid.UUID | None, started_ago_s: float
) -> uuid.UUID:
    """A result row in 2 Processing with no queue row, as a worker that vanished leaves it."""
    task_id = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,"
        " task_priority, task_error_count, task_last_error_is_recoverable,"
        " task_processing_time_milliseconds, task_posted_at_ts, task_first_processing_attempted_at_ts,"
        " task_last_processing_attempted_at_ts, sk_owner_worker_id, sk_attempt)"
        " VALUES (%(id)s, %(type)s, 'test-by-hand', 'null', 2, 0, 0, false, 0,"
        " now() - make_interval(secs => %(ago)s + 1), now() - make_interval(secs => %(ago)s),"
        " now() - make_interval(secs => %(ago)s), %(owner)s, 1)",
        {"id": task_id, "type": task_type, "owner": owner, "ago": started_ago_s},
    )
    return task_id


def _pause(conn: psycopg.Connection[Any], task_type: str, paused: bool) -> None:
    conn.execute(
        "INSERT INTO sk_task_types_t (task_type, tt_paused, tt_paused_at_ts)"
        " VALUES (%(t)s, %(p)s, CASE WHEN %(p)s THEN now() END)"
        " ON CONFLICT (task_type) DO UPDATE SET tt_paused = EXCLUDED.tt_paused,"
        " tt_paused_at_ts = EXCLUDED.tt_paused_at_ts",
        {"t": task_type, "p": paused},
    )


def test_handler_over_its_timeout_is_failed_by_its_own_worker(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """hang (async) and hang-sync (a thread) both exceed their 1 s timeout on each of
    their 2 attempts: the worker fails each attempt with a TimeoutError (not the
    reaper), then parks the job as 5 Faulted."""
    with Producer(db) as p:
        ids = p.post_many([Job("hang"), Job("hang-sync", 4)]).ids
    started = time.monotonic()
    w = spawn("--concurrency", "4")
    wait_until(
        lambda: (
            conn.execute(
                "SELECT count(*) FROM sk_task_results_t WHERE task_status IN (5, 6, 3)"
            ).fetchone()
            == (2,)
        ),
        timeout=90,
    )
    print(
        f"\nboth hanging jobs faulted after {time.monotonic() - started:.1f}s (2 attempts x 1 s timeout)"
    )
    for task_id in ids:
        r = _row(conn, task_id)
        assert r["task_status"] == JobStatus.FAULTED, r
        assert r["task_error_count"] == HANG_ATTEMPTS, r
        assert final_exception_line(r["task_last_error"]).startswith(
            "TimeoutError: job exceeded its timeout of 1s"
        ), r
        assert "HungJob" not in readable_error(r["task_last_error"]), (
            "failed by the worker, not by a reaper"
        )
        assert r["task_last_error_is_recoverable"] is True
        assert r["queued"] == 0
    assert completions(log_dir) == {}
    assert w.poll() is None, w.drain.tail()


def test_timed_out_sync_handlers_do_not_make_later_jobs_time_out_unstarted(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """A sync handler cannot be interrupted: after its timeout its thread keeps
    running. The engine must not start a later job's timeout clock while that
    job merely waits for a free thread. With concurrency 1 (a pool of 2 threads),
    three 'stuck' jobs (sleep 6 s, timeout 1 s, 1 attempt) each time out and pin
    a thread; then a 'brief' job (0.05 s of work, timeout 3 s, 1 attempt) must
    still run and succeed once a thread is free, not fail with a TimeoutError
    without ever having started."""
    w = spawn("--concurrency", "1")
    with Producer(db) as p:
        stuck = p.post_many([Job("stuck", 6, priority=0) for _ in range(3)]).ids
        brief_id = p.post("brief", priority=5)  # runs after the stuck ones
    posted = time.monotonic()
    wait_until(
        lambda: all(
            _row(conn, i)["task_status"]
            in (JobStatus.PROCESSED, JobStatus.FAULTED, JobStatus.FATAL)
            for i in [*stuck, brief_id]
        ),
        timeout=120,
    )
    r = _row(conn, brief_id)
    print(
        f"\nbrief job final after {time.monotonic() - posted:.1f}s: status {r['task_status']}, "
        f"error {str(r['task_last_error'])[:60]!r}"
    )
    for i in stuck:
        s = _row(conn, i)
        assert s["task_status"] == JobStatus.FAULTED and final_exception_line(
            s["task_last_error"]
        ).startswith("TimeoutError"), s
    assert r["task_status"] == JobStatus.PROCESSED, (
        "a job failed without ever running: its timeout ran out while it waited for a thread still "
        f"held by a timed-out sync handler: {r['task_last_error']!r}"
    )
    assert completions(log_dir) == {str(brief_id): 1}
    assert w.poll() is None, w.drain.tail()


def test_reaper_reposts_job_of_unregistered_worker(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """A job in 2 Processing owned by a worker id that is not registered (and no
    queue row) is re-posted by a running worker's reaper within seconds: 4 Error
    with 'skconsole.HungJob: worker gone ...', then it runs and is processed.

    The type is paused while the reaper acts, so the intermediate 4 Error state
    can be observed deterministically (the reaper ignores pauses, claims do not)."""
    _pause(conn, "ok", True)
    ghost = uuid.uuid4()
    task_id = _insert_processing(conn, "ok", ghost, started_ago_s=1)
    started = time.monotonic()
    w = spawn("--concurrency", "2")
    wait_until(lambda: _row(conn, task_id)["task_status"] != JobStatus.PROCESSING, timeout=60)
    reaped_after = time.monotonic() - started
    print(f"\nunregistered owner's job reaped {reaped_after:.1f}s after the worker started")
    r = _row(conn, task_id)
    assert r["task_status"] == JobStatus.ERROR, r
    assert r["task_error_count"] == 1
    assert (
        final_exception_line(r["task_last_error"])
        == "skconsole.HungJob: worker gone (no longer registered)"
    )
    assert r["task_last_error_is_recoverable"] is True
    assert r["queued"] == 1, "re-posted to the queue"
    assert completions(log_dir) == {}

    _pause(conn, "ok", False)
    wait_until(lambda: _row(conn, task_id)["task_status"] == JobStatus.PROCESSED, timeout=60)
    r = _row(conn, task_id)
    assert r["task_error_count"] == 1
    assert final_exception_line(r["task_last_error"]).startswith("skconsole.HungJob: worker gone")
    assert r["sk_attempt"] == 2
    assert r["sk_owner_worker_id"] not in (None, ghost)
    assert r["queued"] == 0
    assert completions(log_dir) == {str(task_id): 1}
    assert w.poll() is None, w.drain.tail()


def test_a_worker_reaps_an_unowned_job_only_when_told_and_past_the_threshold(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """A 2 Processing row with NULL owner is what a Stakhanovise.NET worker leaves
    while it runs a job: a worker never reaps it by default (a claim it did not make
    is not its to judge), and with --reap-unowned-after only once it is older than
    that. An unregistered owner's job in the same table proves each reap round ran:
    one round judges every in-flight job."""
    _pause(conn, "ok", True)
    young = _insert_processing(conn, "ok", None, started_ago_s=5)
    old = _insert_processing(conn, "ok", None, started_ago_s=7200)
    ghost_job = _insert_processing(conn, "ok", uuid.uuid4(), started_ago_s=1)

    verdicts = dict(
        conn.execute("SELECT task_id, hung_reason FROM sk_inflight_tasks(3600)").fetchall()
    )
    assert verdicts[young] is None
    assert verdicts[old] == "no owner recorded; processing for more than 3600 s"
    assert verdicts[ghost_job] == "worker gone (no longer registered)"
    strict = dict(conn.execute("SELECT task_id, hung_reason FROM sk_inflight_tasks(1)").fetchall())
    assert strict[young] == "no owner recorded; processing for more than 1 s"
    never = dict(
        conn.execute("SELECT task_id, hung_reason FROM sk_inflight_tasks(NULL)").fetchall()
    )
    assert never[old] is None

    by_default = spawn("--concurrency", "2")
    wait_until(lambda: _row(conn, ghost_job)["task_status"] == JobStatus.ERROR, timeout=60)
    assert _row(conn, old)["task_status"] == JobStatus.PROCESSING, "reaped by a worker not told to"
    by_default.terminate()
    by_default.wait(30)

    second_ghost = _insert_processing(conn, "ok", uuid.uuid4(), started_ago_s=1)
    w = spawn("--concurrency", "2", "--reap-unowned-after", "1h")
    wait_until(
        lambda: (
            _row(conn, old)["task_status"] == JobStatus.ERROR
            and _row(conn, second_ghost)["task_status"] == JobStatus.ERROR
        ),
        timeout=60,
    )
    r = _row(conn, young)
    assert r["task_status"] == JobStatus.PROCESSING, r
    assert r["sk_owner_worker_id"] is None
    assert r["task_error_count"] == 0
    assert r["task_last_error"] is None
    assert r["queued"] == 0
    o = _row(conn, old)
    assert (
        final_exception_line(o["task_last_error"])
        == "skconsole.HungJob: no owner recorded; processing for more than 3600 s"
    )
    assert o["queued"] == 1
    assert w.poll() is None, w.drain.tail()
