"""``skconsole job ID-or-prefix [--json]``: one job in full, its lineage and every
attempt kept; a prefix names one job or the command fails, naming candidates; the
lookup is a range of the primary key. Hostile text never reaches the terminal raw."""

from __future__ import annotations

import json
import uuid
from typing import Any
from uuid import UUID

import psycopg

from skconsole.db.sqlfiles import load_sql
from tests.support.rows import add_big_results

Conn = psycopg.Connection[Any]
ESC_ERROR = (
    '{"Type":"Boom\\u001b[31m","Message":"red \\u001b]0;pwned\\u0007 alert","StackTrace":null}'
)


def add_job(conn: Conn, task_id: UUID, *, parent: UUID | None = None, status: int = 3) -> UUID:
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,"
        " task_priority, task_posted_at_ts, task_first_processing_attempted_at_ts,"
        " task_last_processing_attempted_at_ts, task_last_error, task_error_count,"
        " sk_parent_task_id, sk_attempt)"
        " VALUES (%s, 'invoice.send', 'test', '{\"customer\": 42}', %s, 0, now(), now(), now(),"
        " %s, 1, %s, 2)",
        (task_id, status, ESC_ERROR, parent),
    )
    return task_id


def add_attempts(conn: Conn, task_id: UUID) -> None:
    conn.execute(
        "INSERT INTO sk_attempts_t (task_id, attempt, started_at_ts, ended_at_ts, worker_host,"
        " worker_pid, app_version, outcome, status, error) VALUES"
        " (%s, 1, now(), now(), 'web-1', 2200, '1.8.3', 'failed', 4, %s),"
        " (%s, 2, now(), now(), 'web-2', 2201, '1.8.4', 'succeeded', 3, NULL)",
        (task_id, ESC_ERROR, task_id),
    )


def job_tried_twice(conn: Conn) -> UUID:
    """A job with its two attempts kept: the first failed (its error hostile), the second
    succeeded."""
    task_id = add_job(conn, uuid.uuid4())
    add_attempts(conn, task_id)
    return task_id


def shown(run_cli: Any, task_id: UUID) -> str:
    """What ``skconsole job ID`` prints for the job, which it must find."""
    proc = run_cli("job", str(task_id))
    assert proc.returncode == 0, proc.stderr
    return str(proc.stdout)


def test_a_job_by_its_full_id_shows_every_attempt_with_its_worker_and_version(
    conn: Conn, run_cli: Any
) -> None:
    task_id = job_tried_twice(conn)

    out = shown(run_cli, task_id)

    assert str(task_id) in out and "invoice.send" in out
    assert "#1" in out and "failed → Error" in out and "web-1 pid 2200 1.8.3" in out
    assert "#2" in out and "succeeded → Processed" in out and "1.8.4" in out


def test_a_unique_prefix_is_enough(conn: Conn, run_cli: Any) -> None:
    task_id = add_job(conn, UUID("ab12cd34-0000-4000-8000-000000000001"))
    add_job(conn, UUID("ab99cd34-0000-4000-8000-000000000001"))

    doc = json.loads(run_cli("job", "AB12", "--json").stdout)

    assert doc["task_id"] == str(task_id)


def test_the_json_carries_the_job_its_lineage_and_its_attempts(conn: Conn, run_cli: Any) -> None:
    parent = add_job(conn, uuid.uuid4())
    child = add_job(conn, uuid.uuid4(), parent=parent)
    add_attempts(conn, parent)

    doc = json.loads(run_cli("job", str(parent), "--json").stdout)

    assert doc["children"] == 1
    assert doc["child_jobs"] == [
        {
            "task_id": str(child),
            "task_type": "invoice.send",
            "status": 3,
            "status_name": "Processed",
        }
    ]
    first, second = doc["attempts"]
    assert set(first) == {
        "attempt", "started_at", "ended_at", "worker_id", "host", "pid", "app_version",
        "outcome", "status", "status_name", "error",
    }  # fmt: skip
    assert (first["outcome"], first["status_name"], first["app_version"]) == (
        "failed",
        "Error",
        "1.8.3",
    )
    assert first["error"]["message"] == "red \x1b]0;pwned\x07 alert"
    assert (second["outcome"], second["error"]) == ("succeeded", None)
    assert json.loads(run_cli("job", str(child), "--json").stdout)["parent_task_id"] == str(parent)


def test_a_prefix_of_several_jobs_fails_naming_candidates(conn: Conn, run_cli: Any) -> None:
    a = add_job(conn, UUID("cafe0001-0000-4000-8000-000000000001"))
    b = add_job(conn, UUID("cafe0002-0000-4000-8000-000000000001"))

    proc = run_cli("job", "cafe")

    assert proc.returncode != 0
    assert "matches several jobs" in proc.stderr and str(a) in proc.stderr and str(b) in proc.stderr


def test_a_prefix_of_no_job_fails_saying_so(conn: Conn, run_cli: Any) -> None:
    add_job(conn, UUID("cafe0001-0000-4000-8000-000000000001"))

    proc = run_cli("job", "beef")

    assert proc.returncode != 0 and "no job id starts with 'beef'" in proc.stderr


def test_text_that_is_no_id_is_refused(run_cli: Any) -> None:
    proc = run_cli("job", "order-42")

    assert proc.returncode == 2 and "hexadecimal" in proc.stderr


def test_a_job_run_by_another_consumer_shows_what_the_result_row_knows(
    conn: Conn, run_cli: Any
) -> None:
    out = shown(run_cli, add_job(conn, uuid.uuid4()))

    assert "none recorded" in out and "first " in out


def test_hostile_text_in_attempt_errors_never_reaches_the_terminal_raw(
    conn: Conn, run_cli: Any
) -> None:
    task_id = job_tried_twice(conn)

    out = shown(run_cli, task_id)

    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b" in out


def test_a_prefix_is_a_range_of_the_primary_key(conn: Conn) -> None:
    add_big_results(conn)
    low, high = "ab120000-0000-0000-0000-000000000000", "ab12ffff-ffff-ffff-ffff-ffffffffffff"

    plan = "\n".join(
        r[0]
        for r in conn.execute(
            "EXPLAIN " + load_sql("queries/job_prefix"), {"low": low, "high": high, "limit": 6}
        )
    )

    assert "Index Scan using pk_sk_task_results_t" in plan, plan
    assert "Index Cond: ((task_id >= " in plan and "(task_id <= " in plan, plan
