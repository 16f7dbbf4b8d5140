"""Accounting: 5,000 jobs of mixed types, priorities and failure modes, counted.

Real PostgreSQL, real worker processes, no mocks. "4 workers in 2 processes"
is one ``skconsole worker --processes 2 --concurrency 2`` command: the
supervisor starts two engine processes, each running at most two jobs at
once, so four jobs run at a time, in two processes, competing for the same
queue (and it exercises the supervisor's signal forwarding at the end).

When no job is waiting, running or backing off (no row in status 1, 2 or 4)
and the queue is empty, the supervisor gets SIGTERM and must exit 0. Then
every job must be in exactly one final state with exactly the error count its
handler dictates, and the handlers' own completion logs must show exactly one
successful execution per 3 Processed job and none for the failed ones.
"""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from skconsole.core.signature import read_error
from skconsole.producer import Job, Producer
from tests.support.tasks_faults import (
    ALWAYS_FAIL_ATTEMPTS,
    HANG_ATTEMPTS,
    all_final,
    child_pids,
    completions,
    completions_by_pid,
    queue_count,
    status_counts,
    wait_exit,
)
from tests.support.waiting import wait_until

TOTAL = 5_000


# (type, how many, payload maker); payloads are deterministic from the job's index
MIX: list[tuple[str, int, Callable[[int], Any]]] = [
    ("ok", 2_590, lambda i: {"n": i}),
    ("slow", 400, lambda i: 0.01 + (i % 5) * 0.01),
    ("slow-async", 200, lambda i: 0.02),
    ("flaky-until", 900, lambda i: 1 + i % 3),
    ("always-fail", 500, lambda i: None),
    ("fatal", 390, lambda i: None),
    ("hang", 16, lambda i: None),
    ("hang-sync", 4, lambda i: 2.0),
]


def _expected(task_type: str, payload: Any) -> tuple[int, int, str | None]:
    """(final status, error count, start of the last error as read: its naming line,
    then its stack trace) for a job of this type."""
    if task_type in ("ok", "slow", "slow-async"):
        return 3, 0, None
    if task_type == "flaky-until":
        return 3, int(payload), "FlakyError"  # the message is checked below
    if task_type == "always-fail":
        return 5, ALWAYS_FAIL_ATTEMPTS, "AlwaysFailError"
    if task_type == "fatal":
        return 6, 1, "FatalTaskError"
    if task_type in ("hang", "hang-sync"):
        return 5, HANG_ATTEMPTS, "TimeoutError: job exceeded its timeout of 1s"
    raise AssertionError(task_type)


def _metric(conn: psycopg.Connection[Any], metric_id: str) -> int:
    row = conn.execute(
        "SELECT coalesce(sum(metric_value), 0) FROM sk_metrics_t WHERE metric_id = %s", (metric_id,)
    ).fetchone()
    return int(row[0]) if row else 0


def test_every_job_accounted_for(
    db: Any, conn: psycopg.Connection[Any], spawn: Callable[..., Any], log_dir: Path
) -> None:
    rng = random.Random(20240611)
    jobs: list[Job] = []
    for task_type, n, payload in MIX:
        jobs.extend(Job(task_type, payload(i), priority=rng.randint(0, 9)) for i in range(n))
    assert len(jobs) == TOTAL
    rng.shuffle(jobs)
    expected = {j.task_id: (j.task_type, *_expected(j.task_type, j.payload)) for j in jobs}

    # half before the workers start, the rest in batches while they run (wake-up by NOTIFY)
    posted: list[Any] = []
    with Producer(db) as p:
        result = p.post_many(jobs[: TOTAL // 2])
        assert result.posted == TOTAL // 2
        posted.extend(result.ids)
        sup = spawn("--processes", "2", "--concurrency", "2")
        started = time.monotonic()

        def describe() -> str:
            return (
                f"statuses {status_counts(conn)}, queue {queue_count(conn)}\n{sup.drain.tail(40)}"
            )

        wait_until(
            lambda: conn.execute("SELECT count(*) FROM sk_workers_t").fetchone() == (2,),
            60,
            describe,
        )
        for start in range(TOTAL // 2, TOTAL, 500):
            result = p.post_many(jobs[start : start + 500])
            assert result.posted == len(jobs[start : start + 500])
            posted.extend(result.ids)
            time.sleep(0.2)
    assert posted == [j.task_id for j in jobs]

    took = wait_until(lambda: all_final(conn), 300, describe, interval=0.25)
    pids = [r[0] for r in conn.execute("SELECT worker_pid FROM sk_workers_t").fetchall()]
    print(
        f"\n{TOTAL} jobs final after {took:.1f}s with 2 processes x 2 concurrent jobs (engine pids {pids})"
    )
    assert sup.poll() is None, sup.drain.tail()
    assert len(pids) == 2, "two engine processes registered, none restarted"
    assert set(pids) <= set(child_pids(sup.pid)), "both are children of the supervisor"

    sup.send_signal(signal.SIGTERM)  # the supervisor only: it forwards the signal to its children
    code = wait_exit(sup, 60)
    assert code == 0, f"exit {code}\n{sup.drain.tail()}"
    print(f"supervisor exited 0, {time.monotonic() - started:.1f}s after start")

    # -- the database: one row per job, each in exactly one final state ---------------
    rows = conn.execute(
        "SELECT task_id, task_type, task_status, task_error_count, task_last_error,"
        " task_last_error_is_recoverable, sk_attempt, task_processing_finalized_at_ts IS NOT NULL,"
        " sk_owner_worker_id IS NOT NULL FROM sk_task_results_t"
    ).fetchall()
    assert len(rows) == TOTAL, "results count == posted count"
    assert {r[0] for r in rows} == set(expected), "exactly the posted jobs, no more, no fewer"
    assert queue_count(conn) == 0, "queue empty"

    want_status = Counter(e[1] for e in expected.values())
    got_status = status_counts(conn)
    print(
        f"statuses: {dict(sorted(got_status.items()))} (expected {dict(sorted(want_status.items()))})"
    )
    assert got_status == dict(want_status)
    assert set(got_status) <= {3, 5, 6}

    mismatches = []
    for task_id, task_type, st, errors, last_error, recoverable, attempt, finalized, owned in rows:
        want_type, want_st, want_errors, want_error_start = expected[task_id]
        problems = []
        if (task_type, st, errors) != (want_type, want_st, want_errors):
            problems.append(
                f"type/status/errors {(task_type, st, errors)} != {(want_type, want_st, want_errors)}"
            )
        # every attempt either failed (counted) or, the last one only, succeeded
        if attempt != errors + (1 if st == 3 else 0):
            problems.append(f"{attempt} attempts for {errors} errors (a reap or a lost result?)")
        if not finalized or not owned:
            problems.append("no finalized time or no owner")
        if want_error_start is None:
            if last_error is not None:
                problems.append(f"unexpected error {last_error[:80]!r}")
        else:
            stored = read_error(last_error)
            named = f"{stored.type.rsplit('.', 1)[-1]}: {stored.message}" if stored else ""
            if not named.startswith(want_error_start):
                problems.append(f"last error {str(last_error)[:80]!r}")
            raised = task_type in ("flaky-until", "always-fail", "fatal")
            if raised and not (stored and (stored.stack_trace or "").startswith("Traceback")):
                problems.append("no traceback as the stack trace")
            if "HungJob" in (last_error or ""):
                problems.append("reaped although its worker was alive")
            marker = {
                "flaky-until": f"FlakyError: flaky: failure {errors} of {errors}",
                "always-fail": "AlwaysFailError: always fails",
                "fatal": "FatalTaskError: fatal: this job can never succeed",
            }.get(task_type)
            if marker and marker not in (last_error or ""):
                problems.append(f"last error lacks {marker!r}")
            if recoverable != (task_type != "fatal"):
                problems.append(f"recoverable={recoverable}")
        if problems:
            mismatches.append((task_id, task_type, problems))
    assert not mismatches, f"{len(mismatches)} job(s) off; first: {mismatches[:5]}"

    # -- the handlers' own logs: exactly one success per 3 Processed job --------------
    done = completions(log_dir)
    processed = {str(r[0]) for r in rows if r[2] == 3}
    twice = {k: v for k, v in done.items() if v != 1}
    assert not twice, f"{len(twice)} job(s) completed more than once: {list(twice.items())[:5]}"
    assert set(done) == processed, (
        f"{len(processed - set(done))} processed without a completion, "
        f"{len(set(done) - processed)} completed but not 3 Processed"
    )
    per_pid = {pid: sum(c.values()) for pid, c in completions_by_pid(log_dir).items()}
    print(f"successful completions per process: {per_pid}")
    assert set(per_pid) <= set(pids)

    # -- the engine's own counters agree ------------------------------------------------
    successes = _metric(conn, "worker@successful-processed-payload-count")
    failures = _metric(conn, "worker@failed-processed-payload-count")
    fenced = _metric(conn, "worker@fenced-result-count")
    reaped = _metric(conn, "reaper@reaped-count")
    failed_attempts = sum(r[3] for r in rows)
    print(
        f"metrics: {successes} successes, {failures} failed attempts, {fenced} fenced, {reaped} reaped"
    )
    assert successes == len(processed)
    assert failures == failed_attempts
    assert fenced == 0
    assert reaped == 0
    assert conn.execute(
        "SELECT count(*) FROM sk_workers_t WHERE worker_stopped_at_ts IS NULL"
    ).fetchone() == (0,)
