"""One row the server refuses never stops the queue, and a refused statement is said for
what it is.

An application's own trigger (or constraint, or index) may refuse one job's row: that
job's claim, its reap, or a post. The claim then goes type by type and leaves the
refused type out for a while; the reaper reaps each hung job alone; a command names the
database error and its SQLSTATE instead of calling it a failed connection.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.producer import Job, Producer
from skconsole.worker.registry import TaskOptions, TaskRegistry
from tests.support.statuses import status_of
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]

#: raises for a row whose payload says "poison": an application's rule the queue meets
REFUSE = """
CREATE OR REPLACE FUNCTION test_refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.task_payload LIKE '%%poison%%' THEN
        RAISE EXCEPTION 'poisoned payload refused' USING ERRCODE = 'P0001';
    END IF;
    RETURN NEW;
END $$
"""


@pytest.fixture
def refuse(conn: Conn) -> Iterator[Callable[[str, str], None]]:
    """``refuse(table, events)``: a trigger on ``table`` refusing poisoned rows on ``events``."""
    made: list[str] = []
    conn.execute(REFUSE)

    def add(table: str, events: str) -> None:
        name = f"test_refuse_{len(made)}"
        conn.execute(
            f"CREATE TRIGGER {name} BEFORE {events} ON {table}"
            " FOR EACH ROW EXECUTE FUNCTION test_refuse_poison()"
        )
        made.append(f"{name} ON {table}")

    yield add
    for trigger in made:
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    conn.execute("DROP FUNCTION IF EXISTS test_refuse_poison()")


def _tasks() -> TaskRegistry:
    tasks = TaskRegistry(TaskOptions(max_attempts=3, timeout=30.0))
    for name in ("bad.type", "good.type"):
        tasks.task(name)(lambda payload: None)
    return tasks


def _statuses(conn: Conn, task_type: str) -> list[int]:
    rows = conn.execute(
        "SELECT task_status FROM sk_task_results_t WHERE task_type = %s ORDER BY 1", (task_type,)
    ).fetchall()
    return [int(r[0]) for r in rows]


def test_a_type_whose_claim_is_refused_does_not_stop_the_other_types(
    db: Database, conn: Conn, refuse: Callable[[str, str], None]
) -> None:
    with Producer(db) as p:
        p.post("bad.type", {"note": "poison"})
        p.post_many([Job("good.type", {"n": n}) for n in range(20)])
    refuse("sk_task_results_t", "UPDATE")  # the claim's move to 2 Processing is refused
    with EngineThread(db.dsn, _tasks()):
        wait_until(lambda: _statuses(conn, "good.type") == [3] * 20, timeout=30)
    assert _statuses(conn, "bad.type") == [1]  # still waiting, never lost


def test_a_hung_job_the_server_will_not_re_post_does_not_keep_the_others_hung(
    db: Database, conn: Conn, refuse: Callable[[str, str], None]
) -> None:
    gone = uuid.uuid4()  # a worker that is not registered: its jobs are hung at once
    ids = {}
    for name, payload in (("bad", {"note": "poison"}), ("good", {"n": 1})):
        ids[name] = uuid.uuid4()
        conn.execute(
            "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
            " task_status, task_priority, task_error_count, task_last_error_is_recoverable,"
            " task_processing_time_milliseconds, task_posted_at_ts,"
            " task_last_processing_attempted_at_ts, sk_owner_worker_id, sk_attempt, sk_claim_id)"
            " VALUES (%s, 'hung.type', 'test', %s, 2, 0, 0, false, 0, now(), now(), %s, 1, %s)",
            (ids[name], json.dumps(payload), gone, 40 + len(ids)),
        )
    refuse("sk_tasks_queue_t", "INSERT")  # the reap's re-post of the poisoned job is refused
    with EngineThread(db.dsn, _tasks(), reap=True):
        wait_until(lambda: status_of(conn, ids["good"]) == JobStatus.ERROR, timeout=30)
    # still hung, tried again every round
    assert status_of(conn, ids["bad"]) == JobStatus.PROCESSING


def test_a_refused_statement_is_a_database_error_with_its_sqlstate_not_a_connection_failure(
    run_cli: CLI, refuse: Callable[[str, str], None]
) -> None:
    refuse("sk_task_results_t", "INSERT")
    proc = run_cli("enqueue", "t.refused", "--payload", '{"note": "poison"}')
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: database error: poisoned payload refused (SQLSTATE P0001)"
    ]
