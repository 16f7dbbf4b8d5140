"""Jobs that post jobs: a pipeline's next stage (then=) and ctx.post are written in
the transaction that records the parent's success, and only then."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from skconsole.core.errors import FatalTaskError
from skconsole.core.status import JobStatus
from skconsole.core.stored_error import readable_error
from skconsole.db.connect import Database
from skconsole.producer import Producer
from skconsole.worker.jobs import Claimed, Ending, Outcome
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from skconsole.worker.results import children_params
from tests.support.rows import one_row
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]

tasks = TaskRegistry(TaskOptions(max_attempts=2, backoff=0.05, max_backoff=0.1, timeout=10.0))
attempts: dict[str, int] = {}


@tasks.task("orders.validate", then="orders.charge")
def validate(payload: dict[str, Any]) -> dict[str, Any]:
    return {"order": payload["order"], "valid": True}


@tasks.task("orders.charge", then="orders.ship")
async def charge(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "charged": 10}


@tasks.task("orders.ship")
async def ship(payload: dict[str, Any]) -> None:
    pass


@tasks.task("fanout.ok")
async def fan_out(payload: dict[str, Any], ctx: JobContext) -> None:
    for n in range(payload["children"]):
        ctx.post("fanout.child", {"n": n}, priority=3)


@tasks.task("fanout.child")
async def child(payload: Any) -> None:
    pass


@tasks.task("fanout.fails_after_posting", max_attempts=1)
async def post_then_fail(payload: Any, ctx: JobContext) -> None:
    ctx.post("fanout.child", {"n": 0})
    raise FatalTaskError("the order was cancelled")


@tasks.task("fanout.fails_once_then_posts")
def post_then_fail_once(payload: Any, ctx: JobContext) -> None:
    key = str(ctx.task_id)
    attempts[key] = attempts.get(key, 0) + 1
    ctx.post("fanout.child", {"attempt": attempts[key]})
    if attempts[key] == 1:
        raise ValueError("first attempt fails")


@tasks.task("pipeline.not_json", then="orders.ship", max_attempts=1)
async def return_a_set(payload: Any) -> set[int]:
    return {1, 2}


def rows(conn: Conn, where: str = "true", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    cur = conn.execute(
        "SELECT task_id, task_type, task_source, task_status, task_payload::jsonb AS payload,"
        " task_priority, sk_parent_task_id, sk_pipeline, sk_stage, task_last_error"
        f" FROM sk_task_results_t WHERE {where} ORDER BY task_posted_at_ts",  # test-only literal
        params,
    )
    assert cur.description is not None
    names = [c.name for c in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def settled(conn: Conn) -> bool:
    row = conn.execute(
        "SELECT (SELECT count(*) FROM sk_tasks_queue_t)"
        " + (SELECT count(*) FROM sk_task_results_t WHERE task_status IN (1, 2, 4))"
    ).fetchone()
    return row is not None and row[0] == 0


def post(db: Database, task_type: str, payload: Any) -> uuid.UUID:
    with Producer(db) as p:
        return p.post(task_type, payload)


def run_until_settled(db: Database, conn: Conn, task_type: str, payload: Any) -> uuid.UUID:
    """Post one job and let a real engine run it and everything it posts, until no job
    is left waiting or running."""
    task_id = post(db, task_type, payload)
    with EngineThread(db.dsn, tasks):
        wait_until(lambda: settled(conn), timeout=30)
    return task_id


def test_each_stage_posts_the_next_with_its_return_value(db: Database, conn: Conn) -> None:
    run_until_settled(db, conn, "orders.validate", {"order": 7})
    by_type = {r["task_type"]: r for r in rows(conn)}
    assert by_type["orders.charge"]["payload"] == {"order": 7, "valid": True}
    assert by_type["orders.ship"]["payload"] == {"order": 7, "valid": True, "charged": 10}
    assert [r["task_status"] for r in by_type.values()] == [3, 3, 3]


def test_stage_jobs_name_their_parent_pipeline_and_stage(db: Database, conn: Conn) -> None:
    root = run_until_settled(db, conn, "orders.validate", {"order": 1})
    by_type = {r["task_type"]: r for r in rows(conn)}
    charge, ship = by_type["orders.charge"], by_type["orders.ship"]
    assert (charge["sk_parent_task_id"], charge["sk_pipeline"], charge["sk_stage"]) == (
        root,
        "orders",
        2,
    )
    assert (ship["sk_parent_task_id"], ship["sk_pipeline"], ship["sk_stage"]) == (
        charge["task_id"],
        "orders",
        3,
    )
    assert by_type["orders.validate"]["sk_stage"] is None  # the first stage is posted by a producer
    assert charge["task_source"] == "orders.validate"


def test_ctx_post_children_are_posted_when_the_job_succeeds(db: Database, conn: Conn) -> None:
    parent = run_until_settled(db, conn, "fanout.ok", {"children": 5})
    children = rows(conn, "sk_parent_task_id = %s", (parent,))
    assert sorted(c["payload"]["n"] for c in children) == [0, 1, 2, 3, 4]
    assert {(c["task_status"], c["task_priority"], c["sk_stage"]) for c in children} == {
        (3, 3, None)
    }


def test_a_failed_job_posts_nothing(db: Database, conn: Conn) -> None:
    parent = run_until_settled(db, conn, "fanout.fails_after_posting", None)
    assert rows(conn, "task_id = %s", (parent,))[0]["task_status"] == JobStatus.FATAL
    assert rows(conn, "sk_parent_task_id = %s", (parent,)) == []


def test_a_retried_job_posts_only_what_its_successful_attempt_posted(
    db: Database, conn: Conn
) -> None:
    parent = run_until_settled(db, conn, "fanout.fails_once_then_posts", None)
    assert [c["payload"] for c in rows(conn, "sk_parent_task_id = %s", (parent,))] == [
        {"attempt": 2}
    ]


def test_a_return_value_that_is_not_json_fails_the_stage_and_posts_nothing(
    db: Database, conn: Conn
) -> None:
    parent = run_until_settled(db, conn, "pipeline.not_json", None)
    row = rows(conn, "task_id = %s", (parent,))[0]
    assert row["task_status"] == JobStatus.FAULTED
    assert "skconsole.PipelineError" in readable_error(row["task_last_error"])
    assert "'orders.ship'" in readable_error(row["task_last_error"])
    assert rows(conn, "sk_parent_task_id = %s", (parent,)) == []


def test_a_fenced_late_finisher_posts_nothing(db: Database, conn: Conn) -> None:
    """The success of an attempt that is no longer the job's current one (reaped and
    claimed again) changes nothing, and the jobs it would have posted are not posted."""
    from skconsole.db.sqlfiles import query
    from skconsole.producer.job import Job

    task_id = post(db, "fanout.ok", {"children": 1})
    worker = uuid.uuid4()
    claim = one_row(
        conn,
        query("claim"),
        {"types": ["fanout.ok"], "limit": 1, "worker_id": worker, "hold_s": 12.0},
    )
    stale = Outcome(
        Claimed(task_id, "fanout.ok", "t", None, 0, claim[5], 1, claim[7] - 1, 0),
        Ending.SUCCESS,
        posts=[Job("fanout.child", {"late": True})],
    )
    written = conn.execute(
        query("finish_success"),
        {
            "worker_id": worker,
            "ids": [task_id],
            "claims": [claim[7] - 1],
            "ms": [1],
            "skip_locked": False,
            **children_params([stale]),
        },
    ).fetchall()
    assert written == []
    assert rows(conn, "task_id = %s", (task_id,))[0]["task_status"] == JobStatus.PROCESSING
    assert rows(conn, "sk_parent_task_id = %s", (task_id,)) == []


def test_a_job_may_not_post_more_than_the_cap(db: Database, conn: Conn) -> None:
    from skconsole.worker.registry import MAX_POSTS_PER_JOB

    parent = post(db, "fanout.ok", {"children": MAX_POSTS_PER_JOB + 1})
    with EngineThread(db.dsn, tasks):
        wait_until(
            lambda: rows(conn, "task_id = %s", (parent,))[0]["task_status"] == JobStatus.FAULTED, 30
        )
    row = rows(conn, "task_id = %s", (parent,))[0]
    assert "at most 1000 jobs with ctx.post" in readable_error(row["task_last_error"])
    assert rows(conn, "sk_parent_task_id = %s", (parent,)) == []
