"""The shared SQL expressions (110_skconsole_shared.sql): what they answer, and that
PostgreSQL inlines them, so a query using one plans as if it spelled the expression out."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import psycopg
import pytest

from skconsole.core.signature import NO_ERROR
from skconsole.db.sqlfiles import query
from skconsole.worker.results import children_params
from tests.support.rows import one_row

T1 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
T2 = datetime(2026, 1, 1, 12, 5, tzinfo=UTC)
T3 = datetime(2026, 1, 1, 12, 9, tzinfo=UTC)
SHARED = (
    "sk_last_run_at",
    "sk_last_activity_at",
    "sk_signature_key",
    "sk_signature_matches",
    "sk_rerun_value",
    "sk_selected",
    "sk_waiting_selection",
    "sk_result_selection",
)


def _one(conn: psycopg.Connection[Any], sql: str, *params: Any) -> Any:
    row = one_row(conn, sql, params)
    return row[0]


@pytest.mark.parametrize(
    ("finalized", "attempted", "posted", "last_run", "last_activity"),
    [
        (T3, T2, T1, T3, T3),  # it ran and ended: when it ended
        (None, T2, T1, T2, T2),  # running, or its end unknown: when it started
        (None, None, T1, None, T1),  # never ran: when it was posted
        (None, None, None, None, None),
    ],
)
def test_a_jobs_last_run_and_last_activity(
    conn: psycopg.Connection[Any],
    finalized: datetime | None,
    attempted: datetime | None,
    posted: datetime | None,
    last_run: datetime | None,
    last_activity: datetime | None,
) -> None:
    got_run = _one(conn, "SELECT sk_last_run_at(%s::timestamptz, %s)", finalized, attempted)
    got_activity = _one(
        conn, "SELECT sk_last_activity_at(%s::timestamptz, %s, %s)", finalized, attempted, posted
    )
    assert (got_run, got_activity) == (last_run, last_activity)


@pytest.mark.parametrize(
    ("signature", "wanted", "has_result", "matches"),
    [
        ("ValueError: x", None, True, True),  # no filter: every job
        (None, None, False, True),  # ... a queue row without result row too
        ("ValueError: x", "ValueError: x", True, True),
        ("ValueError: x", "KeyError: y", True, False),
        (None, NO_ERROR, True, True),  # a failure without a signature is in that group
        (None, NO_ERROR, False, False),  # a job without a result row is in no group
        ("ValueError: x", NO_ERROR, True, False),
    ],
)
def test_the_signature_filter(
    conn: psycopg.Connection[Any],
    signature: str | None,
    wanted: str | None,
    has_result: bool,
    matches: bool,
) -> None:
    got = _one(
        conn, "SELECT sk_signature_matches(%s::text, %s::text, %s)", signature, wanted, has_result
    )
    assert bool(got) is matches  # NULL (no match) reads as false, as in a WHERE


def test_a_failure_without_signature_has_the_group_key_python_uses(
    conn: psycopg.Connection[Any],
) -> None:
    assert _one(conn, "SELECT sk_signature_key(NULL)") == NO_ERROR
    assert _one(conn, "SELECT sk_signature_key('KeyError: y')") == "KeyError: y"


@pytest.mark.parametrize(
    ("requested", "newest", "own", "next_run"),
    [
        (False, None, "own", "own"),  # no re-post: the job keeps its own
        (False, "newest", "own", "own"),  # ... whatever waits there
        (True, "newest", "own", "newest"),  # a keyed re-post arrived while it ran
        (True, None, "own", "own"),  # ... and gave none: its own stays
    ],
)
def test_what_the_next_run_takes_when_an_attempt_ends(
    conn: psycopg.Connection[Any], requested: bool, newest: str | None, own: str, next_run: str
) -> None:
    assert _one(conn, "SELECT sk_rerun_value(%s, %s::text, %s::text)", requested, newest, own) == (
        next_run
    )
    assert _one(conn, "SELECT sk_rerun_value(%s, NULL::integer, 4)", requested) == 4


@pytest.fixture
def many_finished_few_failed(conn: psycopg.Connection[Any]) -> str:
    """20,000 processed jobs and 300 failed ones in 30 groups, analyzed; one group's signature."""
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,"
        " task_priority, task_posted_at_ts, task_last_processing_attempted_at_ts,"
        " task_processing_finalized_at_ts, task_last_error)"
        " SELECT gen_random_uuid(), 'plan', 'test', 'null', CASE WHEN g <= 300 THEN 6 ELSE 3 END,"
        " 0, now(), now(), now(),"
        " CASE WHEN g <= 300 THEN 'ValueError: case ' || (g % 30) END"
        " FROM generate_series(1, 20300) g"
    )
    conn.execute("VACUUM ANALYZE sk_task_results_t")
    signature = _one(
        conn, "SELECT sk_error_signature FROM sk_task_results_t WHERE task_status = 6 LIMIT 1"
    )
    assert isinstance(signature, str)
    return signature


def _explain(conn: psycopg.Connection[Any], name: str, params: dict[str, Any]) -> str:
    rows = conn.execute("EXPLAIN (VERBOSE) " + query(name), params, prepare=False).fetchall()
    return "\n".join(r[0] for r in rows)


def test_a_failure_groups_jobs_are_read_along_the_failure_index(
    conn: psycopg.Connection[Any], many_finished_few_failed: str
) -> None:
    plan = _explain(conn, "failure_jobs", {"signature": many_finished_few_failed, "limit": 200})
    assert "idx_sk_task_results_failures" in plan, plan
    assert not any(f in plan for f in SHARED), plan  # inlined, not called per row


def _selection_of_a_signature(signature: str, statuses: list[int]) -> dict[str, Any]:
    """An operator's selection's parameters: the jobs of ``statuses`` that failed with
    ``signature``, nothing else asked (no ids, type, --where or unowned time)."""
    return {
        "statuses": statuses,
        "ids": None,
        "task_type": None,
        "signature": signature,
        "cutoff": datetime.now(UTC),
        "limit": 100,
        "where_path": None,
        "where_value": None,
        "where_rest": None,
        "unowned_s": None,
    }


def test_an_operator_selection_plans_the_shared_expressions_inline(
    conn: psycopg.Connection[Any], many_finished_few_failed: str
) -> None:
    params = _selection_of_a_signature(many_finished_few_failed, [4, 5, 6])
    plan = _explain(conn, "ops_select_results", params)
    assert not any(f in plan for f in SHARED), plan
    # no --where: the payload filters fold away (nothing parses a payload per row)
    assert "sk_payload" not in plan and "sk_try_jsonb" not in plan, plan
    # the signature filter, its constant parts folded away, is an index condition
    assert "Index Cond" in plan and "sk_error_signature =" in plan, plan
    assert "Seq Scan" not in plan, plan


@pytest.mark.parametrize("name", ["finish_success", "finish_failure", "hand_back", "reap"])
def test_an_attempts_ending_plans_the_rerun_value_inline(
    conn: psycopg.Connection[Any], name: str
) -> None:
    params: dict[str, Any] = {
        "ids": [],
        "claims": [],
        "ms": [],
        "statuses": [],
        "errors": [],
        "recoverable": [],
        "delays_ms": [],
        "snoozed": [],
        "worker_id": None,
        "skip_locked": False,
        "unowned_s": None,
        "default_max_attempts": 5,
        "limit": 10,
        "exclude_owner": None,
        **children_params([]),
    }
    plan = _explain(conn, name, params)
    assert "sk_rerun_payload" in plan, plan
    assert not any(f in plan for f in SHARED), plan


@pytest.mark.parametrize(
    "name",
    ["ops_select_results", "ops_count_results", "ops_select_queued", "ops_select_cancellable"],
)
@pytest.mark.parametrize("running", [False, True])
def test_an_operator_selection_is_planned_inline_whatever_it_asks(
    conn: psycopg.Connection[Any], many_finished_few_failed: str, name: str, running: bool
) -> None:
    """sk_selected() and the selections built on it: inlined, so no function is called
    per row, the filters not given fold away and the signature is an index condition."""
    statuses = [2, 4, 5, 6] if running else [4, 5, 6]
    params = _selection_of_a_signature(many_finished_few_failed, statuses)
    plan = _explain(conn, name, params)
    assert not any(f in plan for f in SHARED), plan
    assert "Function Scan on sk_waiting" not in plan and "Function Scan on sk_result" not in plan
    assert not any(f in plan for f in ("sk_payload_term", "sk_payload_matches", "sk_try_jsonb"))
    assert "sk_error_signature =" in plan, plan


@pytest.mark.parametrize("name", ["ops_bump", "ops_cancel"])
def test_a_waiting_jobs_write_plans_its_selection_inline(
    conn: psycopg.Connection[Any], name: str
) -> None:
    """bump and cancel re-check their batch against sk_waiting_selection(): inlined, its
    --where filters (not re-checked) folded away, each job looked up by its key."""
    params = {
        "statuses": [1, 4],
        "ids": [str(uuid4())],
        "task_type": None,
        "signature": None,
        "cutoff": datetime.now(UTC),
        "now": False,
        "to": 0,
        "by": None,
        "unowned_s": None,
    }
    plan = _explain(conn, name, params)
    # (a column may keep a function's name: the call itself is gone)
    assert not any(f + "(" in plan for f in SHARED) and "Function Scan on sk_" not in plan, plan
    assert "sk_payload_" not in plan and "sk_try_jsonb" not in plan, plan
    assert "pk_sk_tasks_queue_t" in plan, plan


@pytest.mark.parametrize("name", ["retention_eligible", "retention_purge"])
def test_a_retention_policys_scope_is_planned_inline(
    conn: psycopg.Connection[Any], many_finished_few_failed: str, name: str
) -> None:
    params = {
        "statuses": [3, 6, 7],
        "task_type": "plan",
        "except_types": None,
        "older_than_s": 3600.0,
        "cap": 1000,
        "batch": 1000,
        "user": "u",
        "host": "h",
        "action": "retention",
        "selection": "{}",
        "details": "{}",
        "origin": "worker",
        "audit_id": None,
    }
    plan = _explain(conn, name, params)
    assert "sk_retention_due" not in plan, plan  # inlined, not called per row
    assert "task_processing_finalized_at_ts <" in plan, plan


def test_a_purge_deletes_only_what_is_still_final_and_keeps_a_success_for_its_waiters(
    conn: psycopg.Connection[Any],
) -> None:
    done, failed, waiter = uuid4(), uuid4(), uuid4()
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_posted_at_ts)"
        " SELECT id, 'purge', 'test', 'null', s, 0, now()"
        " FROM unnest(%s::uuid[], %s::integer[]) AS x(id, s)",
        ([done, failed, waiter], [3, 6, 1]),
    )
    conn.execute("INSERT INTO sk_task_after_t (task_id, after_id) VALUES (%s, %s)", (waiter, done))
    gone = conn.execute(
        "SELECT task_id, task_status FROM sk_purge_results(%s::uuid[], '{3, 7}')",
        ([done, failed, waiter],),
    ).fetchall()
    assert gone == [(done, 3)]
    assert _one(conn, "SELECT after_succeeded FROM sk_task_after_t WHERE task_id = %s", waiter)
    left = _one(conn, "SELECT count(*) FROM sk_task_results_t WHERE task_type = 'purge'")
    assert left == 2
