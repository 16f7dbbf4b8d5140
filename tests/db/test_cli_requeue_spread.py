"""``skconsole requeue --spread``: the jobs made due over the window, what becomes of
their attempts said, and a bad duration refused with one line."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from skconsole.core.status import JobStatus
from tests.support.statuses import status_of

from .test_cli_errors import assert_one_line_error
from .test_ops import add_job

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]


def test_requeue_spread_makes_the_jobs_due_over_the_window(run_cli: CLI, conn: Conn) -> None:
    jobs = {add_job(conn, 5) for _ in range(4)}

    proc = run_cli("requeue", "--status", "5", "--spread", "10m", "--yes", "--json")

    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["changed"] == 4 and doc["details"]["spread_s"] == 600.0
    due = sorted(t for (t,) in conn.execute("SELECT task_locked_until_ts FROM sk_tasks_queue_t"))
    assert [t - due[0] for t in due] == [timedelta(seconds=150 * n) for n in range(4)]
    assert {status_of(conn, j) for j in jobs} == {JobStatus.UNPROCESSED}


def test_requeue_says_what_became_of_the_attempts_and_the_spread(run_cli: CLI, conn: Conn) -> None:
    conn.execute("INSERT INTO sk_task_types_t (task_type, tt_max_attempts) VALUES ('t.a', 4)")
    add_job(conn, 5, error_count=3)

    proc = run_cli("requeue", "--status", "5", "--spread", "10m", "--yes")

    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())  # as wrapped to the terminal's width
    assert "would requeue 1 job(s) (status 5 Faulted), error counts kept, due over" in text
    assert (
        "requeued 1 job(s); error counts kept: the job has 1 try left; due over the next 10m"
        in text
    )


@pytest.mark.parametrize(
    ("value", "fragment"),
    [("soon", "invalid duration"), ("8d", "--spread must be between 0s and 7d"), ("-1m", "")],
)
def test_requeue_with_a_bad_spread_fails_with_one_line_and_changes_nothing(
    run_cli: CLI, conn: Conn, value: str, fragment: str
) -> None:
    job = add_job(conn, 5)

    proc = run_cli("requeue", "--status", "5", f"--spread={value}", "--yes")

    assert_one_line_error(proc, fragment)
    assert proc.returncode == 2
    assert status_of(conn, job) == JobStatus.FAULTED
