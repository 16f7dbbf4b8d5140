"""No handler behaviour takes the engine down or leaves its job unaccounted for.

Real PostgreSQL, a real ``skconsole worker`` process with ``--concurrency 1``
(so a leaked slot would wedge it), no mocks. After each misbehaving job, an
ordinary job posted behind it must still run: the worker carries on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skconsole.core.signature import final_exception_line, read_error
from skconsole.core.status import JobStatus
from skconsole.producer import Job, Producer
from tests.support.rows import one_row
from tests.support.tasks_faults import (
    all_final,
    completions,
    executions,
    overlaps,
    queue_count,
    status_counts,
)
from tests.support.waiting import wait_until


def _row(conn: psycopg.Connection[Any], task_id: Any) -> tuple[int, int, str]:
    row = one_row(
        conn,
        "SELECT task_status, task_error_count, task_last_error FROM sk_task_results_t"
        " WHERE task_id = %s",
        (task_id,),
    )
    return int(row[0]), int(row[1]), str(row[2])


#: post a job, then an ok job; run them on a worker with one slot: the first job's row
RunThenOk = Callable[[Job], tuple[int, int, str]]


@pytest.fixture
def run_then_ok(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> RunThenOk:
    """Run a job, then an ok job, on a worker with one slot: both must end, the ok job
    succeed and the worker carry on. The first job's (status, error count, last error)."""

    def run(job: Job) -> tuple[int, int, str]:
        with Producer(db) as p:
            bad = p.post_many([job]).ids[0]
            ok = p.post_many([Job("ok", 1, priority=9)]).ids[0]
        w = spawn("--concurrency", "1")
        wait_until(
            lambda: all_final(conn),
            60,
            lambda: (
                f"statuses {status_counts(conn)}, queue {queue_count(conn)}\n{w.drain.tail(30)}"
            ),
        )
        assert _row(conn, ok)[0] == 3, "the worker carried on with the next job"
        assert completions(log_dir) == {str(ok): 1}
        assert w.poll() is None, "the worker must survive its handlers\n" + w.drain.tail()
        return _row(conn, bad)

    return run


@pytest.mark.parametrize(
    ("task_type", "error"),
    [
        ("exit", "SystemExit: 3"),
        ("exit-async", "SystemExit: 4"),
        ("interrupt", "KeyboardInterrupt"),
        ("base-exc", "CustomBaseError: not an Exception"),
    ],
)
def test_a_base_exception_from_a_handler_fails_its_job_and_nothing_else(
    run_then_ok: RunThenOk, task_type: str, error: str
) -> None:
    status, errors, last_error = run_then_ok(Job(task_type))

    assert (status, errors) == (JobStatus.FAULTED, 2), (
        "failed and retried like any error, then parked"
    )
    assert final_exception_line(last_error).endswith(error), last_error


def test_an_exception_that_cannot_be_printed_still_fails_its_job(run_then_ok: RunThenOk) -> None:
    status, errors, last_error = run_then_ok(Job("bad-str"))

    assert (status, errors) == (JobStatus.FAULTED, 1)
    assert "UnprintableError" in last_error, last_error


def test_a_handlers_own_timeout_error_without_a_timeout_set_fails_its_job_with_that_error(
    run_then_ok: RunThenOk,
) -> None:
    status, errors, last_error = run_then_ok(Job("own-timeout"))

    assert (status, errors) == (JobStatus.FAULTED, 1)
    assert final_exception_line(last_error) == "TimeoutError: upstream took too long", last_error
    assert "Traceback" in last_error


def test_a_handlers_own_timeout_error_is_not_mistaken_for_the_engines_timeout(
    run_then_ok: RunThenOk,
) -> None:
    status, _, last_error = run_then_ok(Job("own-timeout-async"))

    assert status == JobStatus.FAULTED
    assert "exceeded its timeout" not in last_error, last_error
    assert final_exception_line(last_error) == "TimeoutError: upstream took too long", last_error


def test_a_cancelled_error_raised_by_a_handler_is_a_failure_not_a_hand_back(
    run_then_ok: RunThenOk, conn: psycopg.Connection[Any]
) -> None:
    """Only cancellations the engine started hand a job back; one the handler raises
    on its own is counted, so the job cannot loop for ever."""
    status, errors, last_error = run_then_ok(Job("cancel-self"))
    attempts = conn.execute("SELECT max(sk_attempt) FROM sk_task_results_t").fetchone()

    assert (status, errors) == (JobStatus.FAULTED, 3)
    assert attempts == (3,)
    assert final_exception_line(last_error).startswith("skconsole.HandlerCancelled"), last_error


def test_a_huge_error_is_stored_capped_and_does_not_hold_up_other_results(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """A 40 MB message once hit the statement timeout on every retry, and the results
    behind it were not written until shutdown."""
    with Producer(db) as p:
        bad = p.post("huge-error")
    w = spawn("--concurrency", "4")
    wait_until(lambda: _row(conn, bad)[0] == 5, 60, lambda: w.drain.tail(20))
    with Producer(db) as p:
        oks = p.post_many([Job("ok", i) for i in range(100)]).ids
    took = wait_until(lambda: all_final(conn), 30, lambda: w.drain.tail(20))
    print(f"\n100 jobs posted after the huge error recorded in {took:.1f}s")

    status, errors, last_error = _row(conn, bad)
    assert (status, errors) == (JobStatus.FAULTED, 1)
    assert len(last_error) <= 65_536
    assert "characters omitted" in last_error
    stored = read_error(last_error)
    assert stored is not None and stored.stack_trace is not None
    assert stored.stack_trace.rstrip().endswith("x" * 100)  # the tail (the exception line) is kept
    signature = conn.execute(
        "SELECT sk_error_signature FROM sk_task_results_t WHERE task_id = %s", (bad,)
    ).fetchone()
    assert signature is not None and str(signature[0]).startswith("ValueError: ")
    assert completions(log_dir) == {str(i): 1 for i in oks}
    assert w.poll() is None, w.drain.tail()


def test_a_sync_handler_past_its_timeout_holds_its_job_until_its_thread_returns(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """A thread cannot be killed: while it runs on past the 1 s timeout, the job stays
    2 Processing, shown as timed out and still running, and its retry starts only
    once the thread has returned, so two runs never overlap."""
    with Producer(db) as p:
        job = p.post("overrun", 3.0)
    w = spawn("--concurrency", "2")

    def state() -> str | None:
        row = conn.execute(
            "SELECT state FROM sk_inflight_tasks(3600) WHERE task_id = %s", (job,)
        ).fetchone()
        return row[0] if row else None

    wait_until(lambda: state() == "timed out, still running", 30, lambda: w.drain.tail(20))
    assert _row(conn, job)[1] == 0, "not failed while its thread still runs"
    wait_until(lambda: _row(conn, job)[0] == 5, 60, lambda: w.drain.tail(20))

    runs = executions(log_dir)[str(job)]
    status, errors, last_error = _row(conn, job)
    assert (status, errors) == (JobStatus.FAULTED, 2)
    assert len(runs) == 2
    assert overlaps(runs) == [], runs
    assert final_exception_line(last_error).startswith(
        "TimeoutError: job exceeded its timeout of 1s; a sync handler cannot be interrupted: "
        "it returned "
    ), last_error
    assert w.poll() is None, w.drain.tail()


def test_a_timed_out_sync_handler_does_not_take_a_slot_while_it_lingers(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    """With one slot, a job posted behind an overrunning one starts once the first has
    timed out, not only when its thread returns."""
    with Producer(db) as p:
        first = p.post("overrun", 20.0)
        ok = p.post("ok", priority=9)
    w = spawn("--concurrency", "1")
    started = time.monotonic()
    wait_until(lambda: _row(conn, ok)[0] == 3, 15, lambda: w.drain.tail(20))
    print(
        f"\nthe next job ran {time.monotonic() - started:.1f}s in (its neighbour's thread runs 20 s)"
    )
    assert _row(conn, first)[0] == 2, "the first job is held while its thread runs"
