"""Every attempt of a job is kept (sk_attempts_t), written by the statement that
records how it ended, with the worker's host, pid and code version; bounded per
job, purged with the result; shown by ``skconsole job ID-or-prefix``. On a real
PostgreSQL, with the jobs run by a real engine."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any
from uuid import UUID

import psycopg

from skconsole import Snooze, read
from skconsole.core.attempt import AttemptOutcome
from skconsole.core.status import FINAL, JobStatus
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.producer import Producer
from skconsole.worker.registry import TaskOptions, TaskRegistry
from skconsole.worker.results import FINISH_SETTINGS, children_params
from tests.support.statuses import status_of
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

from .test_retention import _purge_params, add_result, set_policy

Conn = psycopg.Connection[Any]
VERSION = "1.8.3"
AT_THE_END = (*FINAL, JobStatus.FAULTED)

tasks = TaskRegistry(TaskOptions(max_attempts=3, timeout=10.0, backoff=0.01))
runs: dict[str, int] = {}


@tasks.task("att.ok")
async def ok(payload: Any) -> None:
    pass


@tasks.task("att.flaky")
async def flaky(payload: Any) -> None:
    key = str(payload["key"])
    runs[key] = runs.get(key, 0) + 1
    if runs[key] == 1:
        raise RuntimeError(payload.get("message", "first try fails"))


@tasks.task("att.sleepy")
async def sleepy(payload: Any) -> None:
    key = str(payload["key"])
    runs[key] = runs.get(key, 0) + 1
    if runs[key] == 1:
        raise Snooze(0.01)


def run(db: Database, conn: Conn, task_type: str, payload: Any = None) -> UUID:
    """Post one job and let a real engine (code version VERSION) run it to its end: final,
    or Faulted (no attempt left)."""
    with Producer(db) as p:
        task_id = p.post(task_type, payload)
    with EngineThread(db.dsn, tasks, app_version=VERSION):
        wait_until(lambda: status_of(conn, task_id) in AT_THE_END, timeout=30)
    return task_id


def attempts(conn: Conn, task_id: UUID) -> list[read.JobAttempt]:
    detail = read.job(conn, task_id)
    assert detail is not None
    return list(detail.attempts)


def test_a_success_is_one_attempt_with_its_worker_and_code_version(
    db: Database, conn: Conn
) -> None:
    task_id = run(db, conn, "att.ok")

    (a,) = attempts(conn, task_id)
    assert (a.attempt, a.outcome, a.status) == (1, AttemptOutcome.SUCCEEDED, JobStatus.PROCESSED)
    assert a.app_version == VERSION and a.host and a.pid and a.error is None
    assert a.started_at is not None and a.ended_at is not None and a.started_at <= a.ended_at


def test_a_failure_then_its_retry_are_two_attempts_the_first_with_its_error(
    db: Database, conn: Conn
) -> None:
    key = uuid.uuid4().hex
    task_id = run(db, conn, "att.flaky", {"key": key, "message": "card declined"})

    first, second = attempts(conn, task_id)
    assert (first.outcome, first.status) == (AttemptOutcome.FAILED, JobStatus.ERROR)
    assert first.error is not None and "card declined" in first.error
    assert (second.attempt, second.outcome, second.error) == (2, AttemptOutcome.SUCCEEDED, None)
    assert {first.app_version, second.app_version} == {VERSION}


def test_a_snooze_is_an_attempt_handed_back_without_error(db: Database, conn: Conn) -> None:
    task_id = run(db, conn, "att.sleepy", {"key": uuid.uuid4().hex})

    first, second = attempts(conn, task_id)
    assert (first.outcome, first.status, first.error) == (
        AttemptOutcome.SNOOZED,
        JobStatus.UNPROCESSED,
        None,
    )
    assert second.outcome is AttemptOutcome.SUCCEEDED


def test_the_worker_registers_its_code_version(db: Database, conn: Conn, run_cli: Any) -> None:
    with EngineThread(db.dsn, tasks, app_version=VERSION):
        wait_until(lambda: bool(read.workers(conn)), timeout=20)
        doc = json.loads(run_cli("status", "workers", "--json").stdout)
    assert [w["app_version"] for w in doc["workers"]] == [VERSION]


# -- written by the finish statements themselves --------------------------------------------
def running_job(conn: Conn, owner: UUID, attempt: int) -> tuple[UUID, int]:
    """A job in 2 Processing at ``attempt``, claimed by ``owner`` (registered)."""
    conn.execute(
        "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,"
        " worker_concurrency, worker_task_types, worker_app_version)"
        " VALUES (%s, 'p', 'web-1', 42, 1, '{}', %s) ON CONFLICT DO NOTHING",
        (owner, VERSION),
    )
    task_id = uuid.uuid4()
    (claim,) = conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_posted_at_ts, task_last_processing_attempted_at_ts,"
        " sk_owner_worker_id, sk_attempt, sk_claim_id)"
        " VALUES (%s, 'att.x', 't', 'null', 2, 0, now(), now(), %s, %s, nextval('sk_claim_id_seq'))"
        " RETURNING sk_claim_id",
        (task_id, owner, attempt),
    ).fetchone() or (0,)
    return task_id, claim


def finish(conn: Conn, owner: UUID, task_id: UUID, claim: int) -> None:
    params: dict[str, Any] = {"ids": [task_id], "claims": [claim], "ms": [1], "worker_id": owner}
    params |= {"skip_locked": False, **children_params([])}
    conn.execute(query("finish_success"), params)


def test_only_the_last_attempts_of_a_job_are_kept(conn: Conn) -> None:
    owner = uuid.uuid4()
    task_id, claim = running_job(conn, owner, read.ATTEMPTS_KEPT + 5)
    conn.execute(
        "INSERT INTO sk_attempts_t (task_id, attempt, outcome, status)"
        " SELECT %s, n, 'failed', 4 FROM generate_series(1, %s) n",
        (task_id, read.ATTEMPTS_KEPT + 4),
    )

    finish(conn, owner, task_id, claim)

    kept = [a.attempt for a in attempts(conn, task_id)]
    assert kept == list(range(6, read.ATTEMPTS_KEPT + 6))


def test_a_finish_that_is_fenced_records_no_attempt(conn: Conn) -> None:
    owner = uuid.uuid4()
    task_id, claim = running_job(conn, owner, 1)

    finish(conn, owner, task_id, claim + 1000)  # an earlier attempt's late writer

    assert attempts(conn, task_id)[0].outcome is AttemptOutcome.RUNNING


def test_a_running_attempt_is_shown_with_its_worker(conn: Conn) -> None:
    task_id, _ = running_job(conn, uuid.uuid4(), 3)

    (a,) = attempts(conn, task_id)
    assert (a.attempt, a.outcome, a.host, a.app_version) == (
        3,
        AttemptOutcome.RUNNING,
        "web-1",
        VERSION,
    )


def function_plans(conn: Conn, function: str, types: str) -> str:
    """The generic and custom plans of each statement of the PL/pgSQL ``function``
    (its parameters, of ``types``, bound to NULL arrays), under the finish settings."""
    (src, names) = conn.execute(
        "SELECT prosrc, proargnames FROM pg_proc WHERE proname = %s", (function,)
    ).fetchone() or ("", [])
    body = src[src.index("BEGIN") + len("BEGIN") : src.rindex("END")]
    for n, name in enumerate(names, 1):
        body = re.sub(rf"\b{name}\b", f"${n}", body)
    statements = [s.strip() for s in body.split(";") if s.strip().startswith(("INSERT", "DELETE"))]
    for name, value in FINISH_SETTINGS.items():
        conn.execute("SELECT set_config(%s, %s, false)", (name, value))
    plans = []
    for i, statement in enumerate(statements):
        conn.execute(f"PREPARE plan_{i}({types}) AS {statement}")
        for mode in ("force_generic_plan", "force_custom_plan"):
            conn.execute("SELECT set_config('plan_cache_mode', %s, false)", (mode,))
            nulls = ", ".join("NULL" for _ in names)
            plans += [r[0] for r in conn.execute(f"EXPLAIN EXECUTE plan_{i}({nulls})")]
    conn.execute("RESET plan_cache_mode")
    return "\n".join(plans)


def test_recording_attempts_reads_attempts_and_workers_by_their_keys(conn: Conn) -> None:
    """sk_record_attempts() runs on the finish connection: no sequential scan of the
    attempts (kept for every job) or of the workers, no nested loop, whatever the statistics."""
    types = "uuid[], integer[], bigint[], timestamptz[], uuid[], text[], integer[], text[]"

    plans = function_plans(conn, "sk_record_attempts", types)

    assert "Insert on sk_attempts_t" in plans and "Delete on sk_attempts_t" in plans, plans
    assert "pk_sk_attempts_t" in plans, plans
    assert "Seq Scan" not in plans, plans
    assert "Nested Loop" not in plans, plans


# -- sk_record_attempts(), what every ending calls ----------------------------------------
def record(conn: Conn, task_id: UUID, attempt: int, owner: UUID | None, claim: int | None) -> int:
    (n,) = conn.execute(
        "SELECT sk_record_attempts(%s::uuid[], %s::integer[], %s::bigint[], ARRAY[now()],"
        " %s::uuid[], ARRAY['failed'], ARRAY[4], ARRAY['boom'])",
        ([task_id], [attempt], [claim], [owner]),
    ).fetchone() or (None,)
    return int(n)


def test_recording_an_attempt_copies_who_ran_it_from_the_workers_registration(
    conn: Conn,
) -> None:
    owner = uuid.uuid4()
    task_id, claim = running_job(conn, owner, 2)

    assert record(conn, task_id, 2, owner, claim) == 1

    (row,) = conn.execute(
        "SELECT outcome, status, error, worker_host, worker_pid, app_version FROM sk_attempts_t"
        " WHERE task_id = %s",
        (task_id,),
    ).fetchall()
    assert row == ("failed", JobStatus.ERROR, "boom", "web-1", 42, VERSION)


def test_recording_an_attempt_again_overwrites_it_with_the_last_ending(conn: Conn) -> None:
    owner = uuid.uuid4()
    task_id, claim = running_job(conn, owner, 1)
    conn.execute(
        "INSERT INTO sk_attempts_t (task_id, attempt, outcome, status) VALUES (%s, 1, 'reaped', 4)",
        (task_id,),
    )

    record(conn, task_id, 1, owner, claim)

    (row,) = conn.execute(
        "SELECT outcome, error FROM sk_attempts_t WHERE task_id = %s", (task_id,)
    ).fetchall()
    assert row == ("failed", "boom")


def test_an_attempt_without_a_worker_or_claim_of_ours_is_not_recorded(conn: Conn) -> None:
    """An unowned job's attempt is another consumer's (Stakhanovise.NET): unnumbered."""
    task_id = uuid.uuid4()

    assert record(conn, task_id, 1, None, 7) == 0
    assert record(conn, task_id, 1, uuid.uuid4(), None) == 0
    assert attempt_rows(conn) == set()


def test_an_unregistered_workers_attempt_is_recorded_without_its_host(conn: Conn) -> None:
    task_id = uuid.uuid4()

    assert record(conn, task_id, 1, uuid.uuid4(), 7) == 1

    (row,) = conn.execute(
        "SELECT worker_host, worker_pid, app_version FROM sk_attempts_t WHERE task_id = %s",
        (task_id,),
    ).fetchall()
    assert row == (None, None, None)


# -- purged with the result -------------------------------------------------------------------
def add_attempt(conn: Conn, task_id: UUID) -> None:
    conn.execute(
        "INSERT INTO sk_attempts_t (task_id, attempt, outcome, status) VALUES (%s, 1, 'succeeded', 3)",
        (task_id,),
    )


def attempt_rows(conn: Conn) -> set[UUID]:
    return {r[0] for r in conn.execute("SELECT task_id FROM sk_attempts_t")}


def test_purging_results_deletes_their_attempts(conn: Conn, run_cli: Any) -> None:
    gone, kept = add_result(conn, "att.old", 3, 40), add_result(conn, "att.new", 3, 40)
    add_attempt(conn, gone)
    add_attempt(conn, kept)

    assert run_cli("purge", "--type", "att.old", "--older-than", "30d", "--yes").returncode == 0

    assert attempt_rows(conn) == {kept}


def test_retention_deletes_the_attempts_of_what_it_purges(conn: Conn) -> None:
    gone, kept = add_result(conn, "att.old", 3, 40), add_result(conn, "att.old", 3, 1)
    add_attempt(conn, gone)
    add_attempt(conn, kept)
    set_policy(conn, None, 30 * 86_400.0)
    from skconsole.ops import retention

    policy = retention.policies(conn)[0]
    conn.execute(query("retention_purge"), _purge_params(policy, conn))

    assert attempt_rows(conn) == {kept}


def test_a_reaped_attempt_is_recorded_with_the_worker_that_held_it(conn: Conn) -> None:
    owner = uuid.uuid4()
    task_id, _ = running_job(conn, owner, 1)
    conn.execute(  # its worker's lease lapsed long ago, and it holds no liveness lock
        "UPDATE sk_workers_t SET worker_heartbeat_at_ts = now() - interval '1 hour',"
        " worker_lease_seconds = 10, worker_lease_margin_seconds = 2 WHERE worker_id = %s",
        (owner,),
    )
    params = {
        "unowned_s": None,
        "default_max_attempts": 5,
        "ids": None,
        "limit": 10,
        "exclude_owner": None,
    }

    conn.execute(query("reap"), params)

    (a,) = attempts(conn, task_id)
    assert (a.outcome, a.status, a.host, a.app_version) == (
        AttemptOutcome.REAPED,
        JobStatus.ERROR,
        "web-1",
        VERSION,
    )
    assert a.error is not None and "HungJob" in a.error
