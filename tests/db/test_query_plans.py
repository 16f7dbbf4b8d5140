"""The worker's per-batch statements stay on the primary key whatever the statistics say.

A queue goes from empty to a burst of many thousand jobs faster than
autovacuum re-analyzes it. Planned with the statistics of the empty table, a
finish statement once walked a status index (one cheap row, it believed) over
every dead entry for each batch: 8 s per batch, drain down from ~20,000 to
~1,300 jobs/s; another paired every result of a batch with every id (a
nested loop), quadratic in the batch. These tests recreate those statistics
and read the plans, as the worker's finish connection would get them.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest

from skconsole.db.sqlfiles import load_sql, query
from skconsole.producer.job import Job
from skconsole.worker.engine import CLAIM_SETTINGS
from skconsole.worker.jobs import Claimed, Ending, Outcome
from skconsole.worker.results import FINISH_SETTINGS, children_params

ROWS = 20_000
BATCH = 200
STATUS_INDEXES = ("idx_sk_task_results_processing", "idx_sk_task_results_t_task_status")


@pytest.fixture
def burst_on_stale_statistics(conn: psycopg.Connection[Any]) -> tuple[uuid.UUID, list[Any]]:
    """ROWS jobs in 2 Processing, owned by one worker, analyzed while the table was empty."""
    conn.execute("VACUUM ANALYZE sk_task_results_t")
    owner = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,"
        " task_priority, task_posted_at_ts, task_last_processing_attempted_at_ts,"
        " sk_owner_worker_id, sk_attempt, sk_claim_id)"
        " SELECT gen_random_uuid(), 'burst', 'test', 'null', 2, 0, now(), now(), %s, 1,"
        " nextval('sk_claim_id_seq')"
        " FROM generate_series(1, %s)",
        (owner, ROWS),
    )
    ids = [r[0] for r in conn.execute("SELECT task_id FROM sk_task_results_t LIMIT %s", (BATCH,))]
    return owner, ids


def _plan(conn: psycopg.Connection[Any], query: str, params: dict[str, Any]) -> str:
    """The generic and custom plans, in the normal mode and in the retry mode that
    skips locked rows."""
    return "\n".join(_plans(conn, query, {**params, "skip_locked": mode}) for mode in (False, True))


def _plans(conn: psycopg.Connection[Any], query: str, params: dict[str, Any]) -> str:
    for name, value in FINISH_SETTINGS.items():  # set up as the worker's finish connection
        conn.execute("SELECT set_config(%s, %s, false)", (name, value))
    # the worker's connections prepare every statement: look at the generic plan too
    conn.execute("SET plan_cache_mode = force_generic_plan")
    generic = "\n".join(r[0] for r in conn.execute("EXPLAIN " + load_sql(query), params))
    conn.execute("SET plan_cache_mode = force_custom_plan")
    custom = "\n".join(r[0] for r in conn.execute("EXPLAIN " + load_sql(query), params))
    conn.execute("RESET plan_cache_mode")
    return generic + "\n" + custom


def _assert_by_primary_key_in_one_pass(plan: str) -> None:
    assert "pk_sk_task_results_t" in plan, plan
    assert "Nested Loop" not in plan, plan  # pairs each result with each id: quadratic
    for index in STATUS_INDEXES:
        assert index not in plan, plan


def test_recording_successes_looks_jobs_up_by_primary_key(
    conn: psycopg.Connection[Any], burst_on_stale_statistics: tuple[uuid.UUID, list[Any]]
) -> None:
    owner, ids = burst_on_stale_statistics
    params = {"ids": ids, "claims": [1] * len(ids), "ms": [1] * len(ids), "worker_id": owner}

    _assert_by_primary_key_in_one_pass(
        _plan(conn, "queries/finish_success", params | children_params([]))
    )


def test_recording_successes_that_post_jobs_looks_jobs_up_by_primary_key(
    conn: psycopg.Connection[Any], burst_on_stale_statistics: tuple[uuid.UUID, list[Any]]
) -> None:
    """Each success posts two jobs (ctx.post and a pipeline's next stage)."""
    owner, ids = burst_on_stale_statistics
    params = {"ids": ids, "claims": [1] * len(ids), "ms": [1] * len(ids), "worker_id": owner}
    outcomes = [
        Outcome(
            Claimed(task_id, "burst", "test", "null", 0, None, 1, 1, 0),  # type: ignore[arg-type]
            Ending.SUCCESS,
            posts=[Job("child", {"n": 1})],
            stage=Job("next", {"n": 2}),
            pipeline="burst",
        )
        for task_id in ids
    ]

    _assert_by_primary_key_in_one_pass(
        _plan(conn, "queries/finish_success", params | children_params(outcomes))
    )


def test_recording_failures_looks_jobs_up_by_primary_key(
    conn: psycopg.Connection[Any], burst_on_stale_statistics: tuple[uuid.UUID, list[Any]]
) -> None:
    owner, ids = burst_on_stale_statistics
    n = len(ids)
    params = {
        "ids": ids,
        "claims": [1] * n,
        "ms": [1] * n,
        "statuses": [4] * n,
        "errors": ["boom"] * n,
        "recoverable": [True] * n,
        "delays_ms": [1000.0] * n,
        "worker_id": owner,
    }

    _assert_by_primary_key_in_one_pass(_plan(conn, "queries/finish_failure", params))


def test_handing_jobs_back_looks_them_up_by_primary_key(
    conn: psycopg.Connection[Any], burst_on_stale_statistics: tuple[uuid.UUID, list[Any]]
) -> None:
    owner, ids = burst_on_stale_statistics
    params = {
        "ids": ids,
        "claims": [1] * len(ids),
        "delays_ms": [0.0] * len(ids),
        "snoozed": [False] * len(ids),
        "worker_id": owner,
    }

    _assert_by_primary_key_in_one_pass(_plan(conn, "queries/hand_back", params))


def test_reaping_computes_the_verdict_once_and_looks_hung_jobs_up_by_primary_key(
    conn: psycopg.Connection[Any], burst_on_stale_statistics: tuple[uuid.UUID, list[Any]]
) -> None:
    """With statistics of an empty table, the reap once re-ran the whole verdict for
    every in-flight job (quadratic: 18 s for 800 jobs); it must run it once (a
    materialized CTE) and update each hung job through the primary key."""
    params = {
        "unowned_s": 3600,
        "default_max_attempts": 5,
        "ids": None,
        "limit": 1000,
        "exclude_owner": None,
    }
    conn.execute("SET plan_cache_mode = force_generic_plan")
    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + load_sql("queries/reap"), params))
    conn.execute("RESET plan_cache_mode")

    assert "CTE hung" in plan, plan  # materialized: computed once
    update = plan[plan.index("Update on sk_task_results_t") : plan.index("CTE q")]
    assert "Index Scan using pk_sk_task_results_t" in update, plan
    assert "idx_sk_task_results_processing" not in update, plan


# -- the claim: its cost must not depend on how many types a worker runs ------------------
TYPES = [f"plan.type{i:03d}" for i in range(200)]
BUSY = TYPES[7]


def _fill_one_type(conn: psycopg.Connection[Any]) -> None:
    conn.execute(
        "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,"
        " task_priority, task_posted_at_ts, task_locked_until_ts)"
        " SELECT gen_random_uuid(), %s, 'test', 'null', 0, now(), now() - interval '1 s'"
        " FROM generate_series(1, %s)",
        (BUSY, ROWS),
    )


def _claim_plan(conn: psycopg.Connection[Any]) -> str:
    """The claim's plan for a worker of 200 types, on the worker's claim connection."""
    for name, value in CLAIM_SETTINGS.items():
        conn.execute("SELECT set_config(%s, %s, false)", (name, value))
    params = {"types": TYPES, "limit": 100, "worker_id": uuid.uuid4(), "hold_s": 12.0}
    plans = []
    for mode in ("force_generic_plan", "force_custom_plan"):
        conn.execute("SELECT set_config('plan_cache_mode', %s, false)", (mode,))
        plans.append("\n".join(r[0] for r in conn.execute("EXPLAIN " + query("claim"), params)))
    conn.execute("RESET plan_cache_mode")
    return "\n".join(plans)


def _assert_walks_each_types_claim_order(plan: str) -> None:
    # the per-type head comes from the type-led index, read in order and stopped early
    assert "idx_sk_tasks_queue_type_claim_order" in plan, plan
    # not Stakhanovise's (priority, ...) index walked through every row for each type
    assert "idx_sk_tasks_queue_t_sort_index" not in plan, plan
    # not all of a type's rows read and sorted
    assert "Bitmap Heap Scan on sk_tasks_queue_t" not in plan, plan
    assert "Seq Scan on sk_tasks_queue_t" not in plan, plan


def test_a_claim_for_many_types_walks_each_types_head_with_fresh_statistics(
    conn: psycopg.Connection[Any],
) -> None:
    """With statistics that say one type holds every row, an equality on the type let
    the planner walk the (priority, ...) index for each of the 200 types: 560 ms a claim."""
    _fill_one_type(conn)
    conn.execute("ANALYZE sk_tasks_queue_t")

    _assert_walks_each_types_claim_order(_claim_plan(conn))


def test_a_claim_for_many_types_walks_each_types_head_on_an_empty_tables_statistics(
    conn: psycopg.Connection[Any],
) -> None:
    """Analyzed empty, then a burst: the planner thinks a type has a few rows and
    would read them all (bitmap scan) to sort them."""
    conn.execute("VACUUM ANALYZE sk_tasks_queue_t")
    _fill_one_type(conn)

    _assert_walks_each_types_claim_order(_claim_plan(conn))


# -- the post: one statement, whatever the statistics ---------------------------------------
def test_a_post_finds_a_keyed_jobs_result_row_by_primary_key(
    conn: psycopg.Connection[Any], burst_on_stale_statistics: tuple[uuid.UUID, list[Any]]
) -> None:
    """The re-run request rides in the post statement: it must look the job up by its
    id, not scan the results table (20,000 rows the statistics call empty)."""
    _, ids = burst_on_stale_statistics
    params = {
        "ids": [ids[0]],
        "types": ["burst"],
        "sources": ["test"],
        "payloads": ["null"],
        "priorities": [0],
        "delays_ms": [0.0],
        "keyed": [True],
        "run_ats": [None],
        "trace": None,
    }
    conn.execute("SET plan_cache_mode = force_generic_plan")
    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + query("post_jobs"), params))
    conn.execute("RESET plan_cache_mode")

    assert "Seq Scan on sk_task_results_t" not in plan, plan
    assert "pk_sk_task_results_t" in plan, plan
