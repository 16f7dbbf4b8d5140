"""The action commands and ``skconsole audit``, run as a real process."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from typing import Any

import psycopg

from skconsole.core.signature import error_signature
from skconsole.core.status import JobStatus
from skconsole.read import group_id
from tests.support.statuses import status_of

from .test_ops import DECLINED, TIMEOUT_A, add_job, queue_row

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]


def as_json(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_requeue_dry_run_reports_the_count_and_a_sample_and_changes_nothing(
    run_cli: CLI, conn: Conn
) -> None:
    jobs = {add_job(conn, 5) for _ in range(3)}

    doc = as_json(run_cli("requeue", "--status", "5", "--dry-run", "--json"))

    assert (doc["action"], doc["dry_run"], doc["count"]) == ("requeue", True, 3)
    assert {s["task_id"] for s in doc["sample"]} == {str(j) for j in jobs}
    assert doc["selection"] == {"statuses": [5]}
    assert {status_of(conn, j) for j in jobs} == {JobStatus.FAULTED}


def test_requeue_with_yes_changes_what_the_dry_run_counted(run_cli: CLI, conn: Conn) -> None:
    for _ in range(2):
        add_job(conn, 6, error=DECLINED)
    add_job(conn, 6, error=TIMEOUT_A)
    gid = group_id(error_signature(DECLINED))
    dry = as_json(run_cli("requeue", "--group", gid, "--dry-run", "--json"))

    done = as_json(run_cli("requeue", "--group", gid, "--yes", "--json"))

    assert dry["count"] == done["requested"] == done["changed"] == 2
    assert done["skipped_changed_state"] == 0 and done["audit_id"] is not None


def test_an_action_without_yes_refuses_when_stdin_is_not_a_terminal(
    run_cli: CLI, conn: Conn
) -> None:
    job = add_job(conn, 5)

    proc = run_cli("requeue", "--id", str(job), input="y\n")

    assert proc.returncode == 2
    assert "stdin is not a terminal" in proc.stderr and "--yes" in proc.stderr
    assert status_of(conn, job) == JobStatus.FAULTED


def test_requeue_prints_what_changed_for_people(run_cli: CLI, conn: Conn) -> None:
    add_job(conn, 5)

    proc = run_cli("requeue", "--status", "5", "--yes")

    assert proc.returncode == 0, proc.stderr
    assert "requeued 1 job(s)" in proc.stdout and "audit #" in proc.stdout


def test_a_repeated_requeue_finds_nothing_to_do(run_cli: CLI, conn: Conn) -> None:
    add_job(conn, 5)
    as_json(run_cli("requeue", "--status", "5", "--yes", "--json"))

    proc = run_cli("requeue", "--status", "5", "--yes")

    assert proc.returncode == 0, proc.stderr
    assert "nothing to requeue" in proc.stdout


def test_bump_to_sets_the_priority(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 1, priority=7)

    doc = as_json(run_cli("bump", "--id", str(job), "--to", "0", "--yes", "--json"))

    assert doc["changed"] == 1
    assert queue_row(conn, job) == (0, True)


def test_purge_deletes_old_results_in_batches(run_cli: CLI, conn: Conn) -> None:
    for _ in range(3):
        add_job(conn, 3, age_s=40 * 86400)
    young = add_job(conn, 3)

    doc = as_json(run_cli("purge", "--older-than", "30d", "--yes", "--json"))

    assert doc["changed"] == 3
    assert conn.execute("SELECT task_id FROM sk_task_results_t").fetchall() == [(young,)]


def test_purge_without_an_age_is_a_usage_error(run_cli: CLI) -> None:
    proc = run_cli("purge", "--type", "t.a", "--yes")

    assert proc.returncode == 2
    assert "--older-than" in proc.stderr


def test_reap_dry_run_lists_hung_jobs_with_the_reason(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 2, owner=uuid.uuid4())

    doc = as_json(run_cli("reap", "--dry-run", "--json"))

    assert doc["count"] == 1
    assert doc["sample"][0]["task_id"] == str(job)
    assert doc["sample"][0]["note"] == "worker gone (no longer registered)"


def test_cancel_by_id_cancels_a_waiting_job(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 1)

    doc = as_json(run_cli("cancel", "--id", str(job), "--yes", "--json"))

    assert doc["changed"] == 1
    assert status_of(conn, job) == JobStatus.CANCELLED


def test_cancel_of_a_running_job_says_how_it_was_cancelled(run_cli: CLI, conn: Conn) -> None:
    """Its worker is gone (not registered): cancelled at once, and the line says so."""
    from tests.db.test_cancel_running import fake_running

    job = fake_running(conn, uuid.uuid4())

    got = run_cli("cancel", "--id", str(job), "--wait", "0", "--yes")

    assert got.returncode == 0, got.stderr
    assert "cancelled 1 job(s): 1 while running (1 of them at once: their worker was gone)" in (
        " ".join(got.stdout.split())
    )
    assert status_of(conn, job) == JobStatus.CANCELLED


def test_pause_and_resume_a_type(run_cli: CLI, conn: Conn) -> None:
    paused = run_cli("pause", "emails.send", "--yes")
    again = run_cli("pause", "emails.send", "--yes")
    resumed = as_json(run_cli("resume", "--type", "emails.send", "--yes", "--json"))

    assert paused.returncode == 0 and "emails.send paused" in paused.stdout
    assert "already paused" in again.stdout
    assert resumed["changed"] == 1
    assert conn.execute("SELECT tt_paused FROM sk_task_types_t").fetchall() == [(False,)]


def test_audit_json_lists_executed_actions(run_cli: CLI, conn: Conn) -> None:
    add_job(conn, 5)
    as_json(run_cli("requeue", "--status", "5", "--yes", "--json"))

    doc = as_json(run_cli("audit", "--json"))

    (entry,) = doc["entries"]
    assert (entry["action"], entry["count"], entry["selection"]) == (
        "requeue",
        1,
        {"statuses": [5]},
    )
    assert entry["user"] and entry["host"] and entry["at"]
    assert entry["details"]["requested"] == 1


def test_an_id_prefix_of_eight_characters_names_its_job(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 1)

    doc = as_json(run_cli("cancel", "--id", str(job)[:8], "--yes", "--json"))

    assert doc["changed"] == 1 and doc["selection"]["ids"] == [str(job)]
    assert status_of(conn, job) == JobStatus.CANCELLED


def test_an_ambiguous_id_prefix_lists_the_jobs_and_changes_nothing(
    run_cli: CLI, conn: Conn
) -> None:
    jobs = [add_job(conn, 1) for _ in range(2)]
    for n, job in enumerate(jobs):
        conn.execute(
            "UPDATE sk_task_results_t SET task_id = %s WHERE task_id = %s",
            (uuid.UUID(f"abcdef01-0000-0000-0000-00000000000{n}"), job),
        )

    proc = run_cli("requeue", "--id", "abcdef01", "--yes")

    assert proc.returncode == 1
    assert (
        "matches several jobs" in proc.stderr
        and "abcdef01-0000-0000-0000-000000000001" in proc.stderr
    )


def test_an_id_prefix_shorter_than_eight_characters_is_a_usage_error(run_cli: CLI) -> None:
    proc = run_cli("bump", "--id", "abcdef", "--to", "0", "--yes")

    assert proc.returncode == 2
    assert "at least 8 of its first characters" in proc.stderr


def test_an_invalid_job_id_is_a_usage_error(run_cli: CLI) -> None:
    proc = run_cli("cancel", "--id", "not-a-uuid", "--yes")

    assert proc.returncode == 2
    assert "invalid job id 'not-a-uuid'" in proc.stderr
