"""Retention: workers purge finished results past their policy, exactly those, audited."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import psycopg
import pytest

from skconsole import ops
from skconsole.core.actor import Actor
from skconsole.core.retention import Policy
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.ops import retention
from skconsole.producer import Producer
from skconsole.worker import retention as worker_retention
from skconsole.worker.registry import TaskOptions, TaskRegistry
from tests.support.rows import one_row
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
ACTOR = Actor("ops", "laptop")
DAY = 86_400.0


def add_result(
    conn: Conn, task_type: str, status: int, age_days: float, queued: bool = False
) -> uuid.UUID:
    task_id = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,"
        " task_priority, task_posted_at_ts, task_processing_finalized_at_ts)"
        " VALUES (%s, %s, 'test', 'null', %s, 0, now() - %s * interval '1 day',"
        " CASE WHEN %s IN (3, 5, 6, 7) THEN now() - %s * interval '1 day' END)",
        (task_id, task_type, status, age_days, status, age_days),
    )
    if queued:
        conn.execute(
            "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,"
            " task_priority, task_locked_until_ts) VALUES (%s, %s, 'test', 'null', 0, now() + interval '1 day')",
            (task_id, task_type),
        )
    return task_id


def remaining(conn: Conn) -> set[uuid.UUID]:
    return {r[0] for r in conn.execute("SELECT task_id FROM sk_task_results_t")}


@pytest.fixture
def seeded(conn: Conn) -> dict[str, set[uuid.UUID]]:
    """Results of every kind, around a 30-day default and a 1-day policy for 'short'."""
    gone = {add_result(conn, "long", s, 40) for s in (3, 6, 7)}
    gone |= {add_result(conn, "short", s, 2) for s in (3, 6, 7)}
    kept = {add_result(conn, "long", s, 10) for s in (3, 6, 7)}  # within 30 days
    kept |= {add_result(conn, "short", 3, 0.5)}  # within 1 day
    kept |= {add_result(conn, "long", 5, 40)}  # Faulted: the default keeps it
    gone |= {add_result(conn, "short", 5, 2)}  # ... the 'short' policy includes it
    kept |= {add_result(conn, "long", 2, 40)}  # running
    kept |= {add_result(conn, "long", 1, 40, queued=True)}  # waiting
    kept |= {add_result(conn, "long", 4, 40, queued=True)}  # waiting to retry
    set_policy(conn, None, 30 * DAY)
    set_policy(conn, "short", DAY, include_faulted=True)
    return {"gone": gone, "kept": kept}


def set_policy(
    conn: Conn, task_type: str | None, older_than_s: float, include_faulted: bool = False
) -> ops.ActionResult:
    """Set a policy through the operator action, as the CLI does."""
    return ops.RETENTION.execute(
        conn,
        ops.Selection(task_type=task_type),
        ops.RetentionParams(older_than_s=older_than_s, include_faulted=include_faulted),
        actor=ACTOR,
    )


def idle_registry() -> TaskRegistry:
    tasks = TaskRegistry(TaskOptions(timeout=10.0))
    tasks.task("busy")(lambda payload: None)
    return tasks


def test_a_running_worker_purges_exactly_the_finished_results_past_their_policy(
    db: Database, conn: Conn, seeded: dict[str, set[uuid.UUID]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_retention, "FIRST_ROUND_AFTER_S", 0.0)
    with Producer(db) as p:
        fresh = set(p.post_many([p_job for p_job in _jobs(200)]).ids)
    with EngineThread(db.dsn, idle_registry(), reap=True):
        wait_until(lambda: not (remaining(conn) & seeded["gone"]), timeout=20)
        wait_until(lambda: fresh <= _processed(conn), timeout=20)
    assert remaining(conn) == seeded["kept"] | fresh


def test_a_retention_round_is_one_audit_row_of_the_system_counting_what_it_purged(
    db: Database, conn: Conn, seeded: dict[str, set[uuid.UUID]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_retention, "FIRST_ROUND_AFTER_S", 0.0)
    monkeypatch.setattr(worker_retention, "BATCH_ROWS", 2)  # several batches a policy
    with EngineThread(db.dsn, idle_registry(), reap=True):
        wait_until(lambda: not (remaining(conn) & seeded["gone"]), timeout=20)
    rows = conn.execute(
        "SELECT audit_user, audit_selection, audit_count, audit_details FROM sk_audit_t"
        " WHERE audit_action = 'retention' AND audit_user = 'system' ORDER BY audit_id"
    ).fetchall()
    assert [(r[0], r[1]["task_type"], r[2]) for r in rows] == [
        ("system", None, 3),
        ("system", "short", 4),
    ]
    assert rows[1][3]["by"] == "retention"


def test_purged_results_are_counted_in_the_workers_metrics(
    db: Database, conn: Conn, seeded: dict[str, set[uuid.UUID]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_retention, "FIRST_ROUND_AFTER_S", 0.0)
    with EngineThread(db.dsn, idle_registry(), reap=True) as worker:
        wait_until(lambda: not (remaining(conn) & seeded["gone"]), timeout=20)
        owner = worker.metrics_owner
    row = conn.execute(
        "SELECT metric_value FROM sk_metrics_t WHERE metric_id = 'retention@purged-count'"
        " AND metric_owner_process_id = %s",
        (owner,),
    ).fetchone()
    assert row == (len(seeded["gone"]),)


def test_without_a_policy_nothing_is_purged(
    db: Database, conn: Conn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_retention, "FIRST_ROUND_AFTER_S", 0.0)
    old = {add_result(conn, "long", 3, 3650)}
    with EngineThread(db.dsn, idle_registry(), reap=True) as worker:
        wait_until(lambda: _round_done(worker), timeout=20)
    assert remaining(conn) == old


def test_a_worker_purges_nothing_while_another_holds_the_maintenance_lock(
    conn: Conn, seeded: dict[str, set[uuid.UUID]], dsn: str
) -> None:
    with psycopg.connect(dsn, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(sk_maintenance_lock_class(), 1)")
        policy = retention.policies(conn)[0]
        row = conn.execute(query("retention_purge"), _purge_params(policy, conn)).fetchone()
        assert row == (False, 0, None)
        # Released here, not by closing: a closed session's locks go when its backend exits, later.
        other.execute("SELECT pg_advisory_unlock(sk_maintenance_lock_class(), 1)")
    row = conn.execute(query("retention_purge"), _purge_params(policy, conn)).fetchone()
    assert row is not None and row[0] is True and row[1] == 3


def test_setting_a_policy_replaces_the_types_one_and_audits_both(conn: Conn) -> None:
    set_policy(conn, "t", DAY)
    result = set_policy(conn, "t", 2 * DAY, include_faulted=True)
    assert retention.replaced("t", result.details) == Policy("t", DAY, False)
    (policy,) = retention.policies(conn)
    assert (policy.task_type, policy.older_than_s, policy.include_faulted) == ("t", 2 * DAY, True)
    assert policy.set_by == f"{ACTOR.user}@{ACTOR.host}"
    row = one_row(
        conn,
        "SELECT audit_action, audit_user, audit_details FROM sk_audit_t"
        " ORDER BY audit_id DESC LIMIT 1",
    )
    action, user, details = row
    assert (action, user, result.audit_id is not None) == ("retention", ACTOR.user, True)
    assert details["old"]["older_than_s"] == DAY and details["new"]["older_than_s"] == 2 * DAY


def test_clearing_the_default_removes_only_it_and_is_audited(conn: Conn) -> None:
    set_policy(conn, None, DAY)
    set_policy(conn, "t", 2 * DAY)
    result = ops.RETENTION.execute(
        conn, ops.Selection(), ops.RetentionParams(clear=True), actor=ACTOR
    )
    assert (result.changed, retention.replaced(None, result.details)) == (1, Policy(None, DAY))
    assert [p.task_type for p in retention.policies(conn)] == ["t"]
    again = ops.RETENTION.execute(
        conn, ops.Selection(), ops.RetentionParams(clear=True), actor=ACTOR
    )
    assert (again.changed, retention.replaced(None, again.details)) == (0, None)


def test_the_cli_sets_shows_and_clears_policies(run_cli: Any) -> None:
    assert run_cli("retention", "set", "--older-than", "30d", "--yes").returncode == 0
    assert (
        run_cli("retention", "set", "--type", "a.b", "--older-than", "2h", "--yes").returncode == 0
    )
    shown = json.loads(run_cli("retention", "--json").stdout)["policies"]
    assert [(p["task_type"], p["older_than_s"]) for p in shown] == [
        (None, 30 * DAY),
        ("a.b", 7200.0),
    ]
    assert run_cli("retention", "clear", "--type", "a.b", "--yes").returncode == 0
    shown = json.loads(run_cli("retention", "--json").stdout)["policies"]
    assert [p["task_type"] for p in shown] == [None]


def test_the_cli_dry_run_counts_what_a_policy_would_purge_and_sets_nothing(
    run_cli: Any, conn: Conn
) -> None:
    for _ in range(3):
        add_result(conn, "x", 3, 10)
    proc = run_cli("retention", "set", "--older-than", "7d", "--dry-run", "--json")
    assert json.loads(proc.stdout)["eligible"] == 3
    assert retention.policies(conn) == []


@pytest.mark.parametrize(
    ("args", "message", "code"),
    [
        (("retention", "set", "--older-than", "5s", "--yes"), "--older-than must be between 1m", 2),
        (("retention", "set", "--older-than", "soon", "--yes"), "invalid duration 'soon'", 2),
        (("--read-only", "retention", "set", "--older-than", "1d", "--yes"), "read-only", 5),
        (("--read-only", "retention", "clear", "--yes"), "read-only", 5),
    ],
)
def test_a_refused_retention_change_is_one_line_and_changes_nothing(
    run_cli: Any, conn: Conn, args: tuple[str, ...], message: str, code: int
) -> None:
    proc = run_cli(*args)
    assert proc.returncode == code
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert retention.policies(conn) == []


def _jobs(n: int) -> list[Any]:
    from skconsole.producer import Job

    return [Job("busy", {"n": i}) for i in range(n)]


def _processed(conn: Conn) -> set[uuid.UUID]:
    return {
        r[0] for r in conn.execute("SELECT task_id FROM sk_task_results_t WHERE task_status = 3")
    }


def _round_done(worker: EngineThread) -> bool:
    """The worker's first retention round has run (the next is a minute away)."""
    job = worker.engine.upkeep.retention
    return job is not None and job.due_at - time.monotonic() > 30


def _purge_params(policy: Policy, conn: Conn) -> dict[str, object]:
    return worker_retention.purge_params(policy, retention.policies(conn), "test", None, 100)
