"""The audit row moves with the batches: its committed count is always the committed changes.

Each test counts the jobs an action really changed in the tables and
compares them with the audit row, after stopping, failing or killing the
action at the worst moments: between two batches, inside a batch, after the
last batch before the final update, and with SIGKILL in the middle of a real
CLI run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any, LiteralString

import psycopg
import pytest

from skconsole import ops
from skconsole.core.status import JobStatus
from skconsole.ops import Actor, Selection
from tests.support.rows import one_row
from tests.support.statuses import status_of
from tests.support.waiting import wait_until

from ..conftest import ROOT, skconsole_cmd
from .test_ops import TIMEOUT_A, add_job

Conn = psycopg.Connection[Any]
ACTOR = Actor(user="tester", host="test-host")


class StopAction(Exception):
    """Raised from an on_progress callback to stop an action between two batches."""


def stop_when_done(jobs: int, why: str = "stopped") -> Callable[[int, int], None]:
    """An on_progress callback that stops the action (:class:`StopAction`) once ``jobs``
    jobs are done."""

    def stop(done: int, total: int) -> None:
        if done == jobs:
            raise StopAction(why)

    return stop


def add_failed_jobs(conn: Conn, n: int, *, task_type: str = "t.bulk") -> None:
    """``n`` jobs parked as 5 Faulted, in one statement."""
    conn.execute(
        """
        INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,
            task_priority, task_last_error, task_error_count, task_posted_at_ts,
            task_first_processing_attempted_at_ts, task_last_processing_attempted_at_ts,
            task_processing_finalized_at_ts, task_processing_time_milliseconds, sk_attempt)
        SELECT gen_random_uuid(), %(type)s, 'tests', '{}', 5, 5, %(error)s, 5,
            now() - interval '2 hours', now() - interval '1 hour' - i * interval '1 ms',
            now() - interval '1 hour' - i * interval '1 ms',
            now() - interval '1 hour' - i * interval '1 ms', 0, 5
        FROM generate_series(1, %(n)s) AS i
        """,
        {"type": task_type, "error": TIMEOUT_A, "n": n},
    )


def audit_row(conn: Conn) -> tuple[int, dict[str, Any]]:
    """(count, details) of the only audit row."""
    rows = conn.execute("SELECT audit_count, audit_details FROM sk_audit_t").fetchall()
    assert len(rows) == 1, rows
    return int(rows[0][0]), rows[0][1]


def audit_rows(conn: Conn) -> list[tuple[str, int, dict[str, Any]]]:
    return [
        (r[0], int(r[1]), r[2])
        for r in conn.execute(
            "SELECT audit_action, audit_count, audit_details FROM sk_audit_t ORDER BY audit_id"
        ).fetchall()
    ]


def count_status(conn: Conn, status: int) -> int:
    row = one_row(conn, "SELECT count(*) FROM sk_task_results_t WHERE task_status = %s", (status,))
    return int(row[0])


def count_queued(conn: Conn) -> int:
    row = one_row(conn, "SELECT count(*) FROM sk_tasks_queue_t")
    return int(row[0])


def count_results(conn: Conn) -> int:
    row = one_row(conn, "SELECT count(*) FROM sk_task_results_t")
    return int(row[0])


def backends(conn: Conn, application_name: str, *, waiting_on_lock: bool = False) -> int:
    row = one_row(
        conn,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
        "AND (NOT %s OR wait_event_type = 'Lock') AND datname = current_database()",
        (application_name, waiting_on_lock),
    )
    return int(row[0])


# -- stopped between batches -----------------------------------------------------------------
def test_an_action_stopped_after_its_second_batch_audits_exactly_the_jobs_it_changed(
    conn: Conn,
) -> None:
    jobs = [add_job(conn, 5) for _ in range(7)]

    with pytest.raises(StopAction):
        ops.REQUEUE.execute(
            conn,
            Selection(statuses=(5,)),
            actor=ACTOR,
            batch_size=2,
            on_progress=stop_when_done(4, "operator pressed ctrl-c"),  # after two batches
        )

    count, details = audit_row(conn)
    requeued = [j for j in jobs if status_of(conn, j) == JobStatus.UNPROCESSED]
    assert len(requeued) == count == details["changed"] == 4
    assert count_queued(conn) == 4
    assert details["requested"] == 7
    assert details["state"] == "interrupted"
    assert details["interrupted"] == "StopAction: operator pressed ctrl-c"


def test_while_an_action_runs_its_audit_row_counts_exactly_the_batches_committed(
    conn: Conn, dsn: str
) -> None:
    for _ in range(7):
        add_job(conn, 5)
    seen: list[tuple[int, int, int, str]] = []

    with psycopg.connect(dsn, autocommit=True) as watcher:

        def look(done: int, total: int) -> None:
            count, details = audit_row(watcher)
            seen.append((done, count, count_status(watcher, 1), details["state"]))

        result = ops.REQUEUE.execute(
            conn, Selection(statuses=(5,)), actor=ACTOR, batch_size=2, on_progress=look
        )

    assert seen == [
        (2, 2, 2, "in_progress"),
        (4, 4, 4, "in_progress"),
        (6, 6, 6, "in_progress"),
        (7, 7, 7, "in_progress"),
    ]
    count, details = audit_row(conn)
    assert count == result.changed == 7
    assert "state" not in details


def test_a_finished_action_s_audit_details_have_the_final_shape_and_no_state(
    conn: Conn,
) -> None:
    for _ in range(3):
        add_job(conn, 5)

    result = ops.REQUEUE.execute(
        conn,
        Selection(statuses=(5,)),
        actor=ACTOR,
        batch_size=2,
        params=ops.RequeueParams(reset_errors=True),
    )

    count, details = audit_row(conn)
    assert count == 3
    assert details == {
        "requested": 3,
        "changed": 3,
        "skipped_changed_state": 0,
        "reset_errors": True,
        "attempts": {  # what became of the jobs' attempts: no worker recorded a limit
            "jobs": 3,
            "errors_min": 1,
            "errors_max": 1,
            "limit_min": None,
            "limit_max": None,
            "left_min": None,
            "left_max": None,
        },
    }
    assert [e.audit_id for e in ops.audit.entries(conn)] == [result.audit_id]


def test_an_action_that_changes_nothing_still_gets_its_audit_row(conn: Conn) -> None:
    job = add_job(conn, 5)
    preview = ops.REQUEUE.preview(conn, Selection(ids=(job,)))
    conn.execute("UPDATE sk_task_results_t SET task_status = 3 WHERE task_id = %s", (job,))

    changed_meanwhile = ops.REQUEUE.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)
    nothing_selected = ops.REQUEUE.execute(conn, Selection(task_type="t.none"), actor=ACTOR)

    assert [(a, c) for a, c, _ in audit_rows(conn)] == [("requeue", 0), ("requeue", 0)]
    planned = {"jobs": 1, "errors_min": 1, "errors_max": 1}
    unknown = dict.fromkeys(("limit_min", "limit_max", "left_min", "left_max"))
    assert [d for _, _, d in audit_rows(conn)] == [
        {
            "requested": 1,
            "changed": 0,
            "skipped_changed_state": 1,
            "reset_errors": False,
            "attempts": {**planned, **unknown},
        },
        {"requested": 0, "changed": 0, "skipped_changed_state": 0, "reset_errors": False},
    ]
    assert changed_meanwhile.audit_id is not None and nothing_selected.audit_id is not None


# -- a batch that fails inside its transaction -----------------------------------------------
def test_a_batch_whose_audit_update_fails_is_rolled_back_and_not_counted(
    conn: Conn, dsn: str
) -> None:
    for _ in range(6):
        add_job(conn, 5)
    preview = ops.REQUEUE.preview(conn, Selection(statuses=(5,)))
    ids = list(preview.ids or ())
    conn.execute("SET lock_timeout = '300ms'")
    lockers: list[Conn] = []

    def lock_the_audit_row_after_two_batches(done: int, total: int) -> None:
        if done == 4:  # the third batch will apply its requeue, then wait for the row
            locker = psycopg.connect(dsn)
            locker.execute("SELECT 1 FROM sk_audit_t FOR UPDATE")
            lockers.append(locker)

    try:
        with pytest.raises(psycopg.errors.LockNotAvailable):
            ops.REQUEUE.execute(
                conn,
                preview.selection,
                actor=ACTOR,
                ids=ids,
                batch_size=2,
                on_progress=lock_the_audit_row_after_two_batches,
            )
    finally:
        for locker in lockers:
            locker.close()

    assert [status_of(conn, j) for j in ids] == [JobStatus.UNPROCESSED] * 4 + [
        JobStatus.FAULTED
    ] * 2
    assert count_queued(conn) == 4
    count, details = audit_row(conn)
    assert count == 4
    # the row could not be marked interrupted either (still locked): its count is exact anyway
    assert details["state"] == "in_progress"


def test_an_action_whose_audit_row_cannot_be_written_changes_nothing(conn: Conn, dsn: str) -> None:
    jobs = [add_job(conn, 5) for _ in range(3)]
    conn.execute("SET lock_timeout = '300ms'")

    with psycopg.connect(dsn) as locker:
        locker.execute("LOCK TABLE sk_audit_t IN EXCLUSIVE MODE")  # reads pass, writes wait
        with pytest.raises(psycopg.errors.LockNotAvailable):
            ops.REQUEUE.execute(conn, Selection(statuses=(5,)), actor=ACTOR, batch_size=2)
        locker.rollback()

    assert [status_of(conn, j) for j in jobs] == [5, 5, 5]
    assert count_queued(conn) == 0
    assert audit_rows(conn) == []


# -- killed ------------------------------------------------------------------------------------
def test_a_requeue_cli_killed_in_the_middle_leaves_an_audit_row_counting_exactly_the_jobs_requeued(
    conn: Conn, dsn: str
) -> None:
    """SIGKILL while a batch has requeued its jobs but not committed; the batches before it
    committed with their audit counts, that one with neither."""
    total = 30_000
    add_failed_jobs(conn, total)
    cli = subprocess.Popen(
        skconsole_cmd("--dsn", dsn, "requeue", "--type", "t.bulk", "--yes"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        with psycopg.connect(dsn) as locker:
            # hold the audit row as soon as the first batch has committed it: the next
            # batch requeues its 2,000 jobs, then waits for the row in its transaction
            deadline = time.monotonic() + 120
            while not locker.execute("SELECT 1 FROM sk_audit_t FOR UPDATE").fetchall():
                locker.rollback()
                assert cli.poll() is None and time.monotonic() < deadline, "no audit row"
                time.sleep(0.002)

            def waits_for_the_row() -> bool:
                assert cli.poll() is None, "the CLI ended before it could be killed mid-way"
                return backends(conn, "skconsole-requeue", waiting_on_lock=True) == 1

            wait_until(waits_for_the_row)

            os.kill(cli.pid, signal.SIGKILL)
            cli.wait(30)
            locker.rollback()
        wait_until(lambda: backends(conn, "skconsole-requeue") == 0)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait(30)

    count, details = audit_row(conn)
    requeued = count_status(conn, 1)
    assert 0 < requeued < total
    assert requeued == count == count_queued(conn) == total - count_status(conn, 5)
    assert details["state"] == "in_progress"  # the process never got to the final update
    listed = subprocess.run(
        skconsole_cmd("--dsn", dsn, "audit", "--json"),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    (entry,) = json.loads(listed.stdout)["entries"]
    assert (entry["action"], entry["count"]) == ("requeue", requeued)


KILLED_AFTER_THE_LAST_BATCH = """
import sys, time
import psycopg
from skconsole import ops

def on_progress(done: int, total: int) -> None:
    time.sleep(0.02)  # slow: an operator's terminal
    if done == total:
        print("all batches committed", flush=True)
        time.sleep(120)  # killed here, before the action's final audit update

with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    ops.REQUEUE.execute(conn, ops.Selection(task_type="t.bulk"),
                        actor=ops.Actor("tester", "test-host"), batch_size=500,
                        on_progress=on_progress)
"""


def test_a_process_killed_between_its_last_batch_and_the_final_update_leaves_an_exact_audit_row(
    conn: Conn, dsn: str
) -> None:
    """The window of the old defect: every batch committed, the audit row not yet written."""
    total = 3_000
    add_failed_jobs(conn, total)
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_AFTER_THE_LAST_BATCH, dsn],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "all batches committed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)

    count, details = audit_row(conn)
    assert count == count_status(conn, 1) == count_queued(conn) == total
    assert (details["state"], details["changed"], details["requested"]) == (
        "in_progress",
        total,
        total,
    )


# -- purge by selection ------------------------------------------------------------------------
def test_purge_by_selection_audits_each_batch_with_the_results_it_deleted(
    conn: Conn, dsn: str
) -> None:
    for _ in range(7):
        add_job(conn, 3, age_s=7200)
    seen: list[tuple[int, int]] = []

    with psycopg.connect(dsn, autocommit=True) as watcher:

        def look(done: int, total: int) -> None:
            seen.append((audit_row(watcher)[0], 7 - count_results(watcher)))

        result = ops.PURGE.execute(
            conn, Selection(older_than_seconds=3600), actor=ACTOR, batch_size=3, on_progress=look
        )

    assert seen == [(3, 3), (6, 6), (7, 7)]
    count, details = audit_row(conn)
    assert count == result.changed == 7
    assert details == {
        "requested": 7,
        "changed": 7,
        "skipped_changed_state": 0,
        "include_faulted": False,
    }


def test_purge_by_selection_stopped_after_two_batches_audits_exactly_what_it_deleted(
    conn: Conn,
) -> None:
    for _ in range(7):
        add_job(conn, 3, age_s=7200)

    with pytest.raises(StopAction):
        ops.PURGE.execute(
            conn,
            Selection(older_than_seconds=3600),
            actor=ACTOR,
            batch_size=3,
            on_progress=stop_when_done(6),  # after two batches
        )

    count, details = audit_row(conn)
    assert count == 7 - count_results(conn) == 6
    assert details["state"] == "interrupted"


def test_purge_by_ids_audits_exactly_what_it_deleted(conn: Conn) -> None:
    jobs = [add_job(conn, 3, age_s=7200) for _ in range(5)]
    preview = ops.PURGE.preview(conn, Selection(older_than_seconds=3600))
    conn.execute("DELETE FROM sk_task_results_t WHERE task_id = %s", (jobs[0],))

    result = ops.PURGE.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids, batch_size=2)

    count, details = audit_row(conn)
    assert count == result.changed == 4
    assert (details["requested"], details["skipped_changed_state"]) == (5, 1)
    assert count_results(conn) == 0


# -- pause / resume ----------------------------------------------------------------------------
def test_pause_and_resume_each_write_an_audit_row_counting_the_flip(conn: Conn) -> None:
    sel = Selection(task_type="t.a")

    paused = ops.PAUSE.execute(conn, sel, actor=ACTOR)
    again = ops.PAUSE.execute(conn, sel, actor=ACTOR)
    resumed = ops.RESUME.execute(conn, sel, actor=ACTOR)

    assert [(a, c) for a, c, _ in audit_rows(conn)] == [("pause", 1), ("pause", 0), ("resume", 1)]
    assert [d for _, _, d in audit_rows(conn)] == [
        {
            "requested": 1,
            "changed": 1,
            "skipped_changed_state": 0,
            "task_type": "t.a",
            "unchanged": 0,
        },
        {
            "requested": 1,
            "changed": 0,
            "skipped_changed_state": 0,
            "task_type": "t.a",
            "unchanged": 1,
        },
        {
            "requested": 1,
            "changed": 1,
            "skipped_changed_state": 0,
            "task_type": "t.a",
            "unchanged": 0,
        },
    ]
    assert None not in (paused.audit_id, again.audit_id, resumed.audit_id)


def test_a_pause_whose_audit_row_cannot_be_written_leaves_the_type_running(
    conn: Conn, dsn: str
) -> None:
    conn.execute("SET lock_timeout = '300ms'")

    with psycopg.connect(dsn) as locker:
        locker.execute("LOCK TABLE sk_audit_t IN EXCLUSIVE MODE")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            ops.PAUSE.execute(conn, Selection(task_type="t.a"), actor=ACTOR)
        locker.rollback()

    assert conn.execute("SELECT count(*) FROM sk_task_types_t WHERE tt_paused").fetchone() == (0,)
    assert audit_rows(conn) == []


Execute = Callable[..., ops.ActionResult]
BATCHED: dict[str, tuple[int, Execute, LiteralString]] = {
    # action: (status of the jobs it acts on, how to run it, what a changed job looks like)
    "requeue": (5, lambda c, s, **kw: ops.REQUEUE.execute(c, s, **kw), "task_status = 1"),
    "bump": (
        1,
        lambda c, s, **kw: ops.BUMP.execute(c, s, params=ops.BumpParams(to=0), **kw),
        "task_priority = 0",
    ),
    "cancel": (1, lambda c, s, **kw: ops.CANCEL.execute(c, s, **kw), "task_status = 7"),
    "reap": (2, lambda c, s, **kw: ops.REAP.execute(c, s, **kw), "task_status = 4"),
}


@pytest.mark.parametrize("action", list(BATCHED))
def test_every_batched_action_stopped_after_two_batches_audits_exactly_what_it_changed(
    conn: Conn, action: str
) -> None:
    status, execute, changed_sql = BATCHED[action]
    jobs = tuple(
        add_job(
            conn, status, priority=9, owner=uuid.uuid4() if status == JobStatus.PROCESSING else None
        )
        for _ in range(5)
    )

    with pytest.raises(StopAction):
        execute(
            conn,
            Selection(ids=jobs),
            actor=ACTOR,
            batch_size=2,
            on_progress=stop_when_done(4),  # after two batches
        )

    changed = conn.execute("SELECT count(*) FROM sk_task_results_t WHERE " + changed_sql).fetchone()
    count, details = audit_row(conn)
    assert changed == (count,) == (4,)
    assert (details["state"], details["changed"]) == ("interrupted", 4)
