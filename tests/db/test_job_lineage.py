"""A job's detail tells where it came from and what it posted: its parent (a
pipeline's previous stage, or the job whose ctx.post posted it), its pipeline
and stage, how many jobs it posted, and how often it snoozed. On a real
PostgreSQL, with the jobs run by a real engine."""

from __future__ import annotations

import uuid
from typing import Any
from uuid import UUID

import psycopg

from skconsole import Snooze, read
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.producer import Producer
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from tests.support.rows import add_big_results
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

from .test_ops import add_job

Conn = psycopg.Connection[Any]

lineage = TaskRegistry(TaskOptions(max_attempts=1, timeout=10.0))
snoozed: dict[str, int] = {}


@lineage.task("lineage.validate", then="lineage.charge")
async def validate(payload: Any) -> Any:
    return payload


@lineage.task("lineage.charge")
async def charge(payload: Any) -> None:
    pass


@lineage.task("lineage.fanout")
async def fan_out(payload: Any, ctx: JobContext) -> None:
    for n in range(3):
        ctx.post("lineage.child", {"n": n})


@lineage.task("lineage.child")
async def child(payload: Any) -> None:
    pass


@lineage.task("lineage.sleepy")
async def sleepy(payload: Any, ctx: JobContext) -> None:
    key = str(ctx.task_id)
    snoozed[key] = snoozed.get(key, 0) + 1
    if snoozed[key] <= 2:
        raise Snooze(0.05)


def run(db: Database, conn: Conn, task_type: str, payload: Any = None) -> UUID:
    """Post one job and let a real engine run it and everything it posts."""
    with Producer(db) as p:
        root = p.post(task_type, payload)

    def settled() -> bool:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM sk_tasks_queue_t)"
            " + (SELECT count(*) FROM sk_task_results_t WHERE task_status IN (1, 2, 4))"
        ).fetchone()
        return row is not None and row[0] == 0

    with EngineThread(db.dsn, lineage):
        wait_until(settled, timeout=30)
    return root


def only_child(conn: Conn, parent: UUID) -> UUID:
    (row,) = conn.execute(
        "SELECT task_id FROM sk_task_results_t WHERE sk_parent_task_id = %s", (parent,)
    ).fetchall()
    task_id: UUID = row[0]
    return task_id


def test_a_stage_job_names_its_pipeline_stage_and_previous_stage(db: Database, conn: Conn) -> None:
    root = run(db, conn, "lineage.validate", {"order": 1})

    detail = read.job(conn, only_child(conn, root))

    assert detail is not None
    assert (detail.pipeline, detail.stage) == ("lineage", 2)
    assert (detail.parent_task_id, detail.parent_task_type) == (root, "lineage.validate")
    assert detail.parent_purged is False


def test_the_first_stage_has_no_parent_and_posted_one_job(db: Database, conn: Conn) -> None:
    root = run(db, conn, "lineage.validate", {"order": 1})

    detail = read.job(conn, root)

    assert detail is not None
    assert (detail.parent_task_id, detail.pipeline, detail.stage) == (None, None, None)
    assert detail.children == 1


def test_a_ctx_post_child_names_its_parent_and_no_stage(db: Database, conn: Conn) -> None:
    root = run(db, conn, "lineage.fanout")
    (child_id, *_) = [
        r[0]
        for r in conn.execute(
            "SELECT task_id FROM sk_task_results_t WHERE sk_parent_task_id = %s", (root,)
        )
    ]

    detail = read.job(conn, child_id)

    assert detail is not None
    assert (detail.parent_task_id, detail.parent_task_type) == (root, "lineage.fanout")
    assert (detail.pipeline, detail.stage, detail.children) == (None, None, 0)


def test_a_job_counts_the_jobs_it_posted(db: Database, conn: Conn) -> None:
    root = run(db, conn, "lineage.fanout")

    detail = read.job(conn, root)

    assert detail is not None and detail.children == 3


def test_a_job_counts_its_snoozes_apart_from_its_errors(db: Database, conn: Conn) -> None:
    root = run(db, conn, "lineage.sleepy")

    detail = read.job(conn, root)

    assert detail is not None
    assert (detail.snooze_count, detail.error_count, detail.status) == (2, 0, JobStatus.PROCESSED)


def test_a_parent_that_was_purged_is_said_to_be(conn: Conn) -> None:
    job = add_job(conn, 5, task_type="t.child")
    gone = uuid.uuid4()
    conn.execute("UPDATE sk_task_results_t SET sk_parent_task_id = %s", (gone,))

    detail = read.job(conn, job)

    assert detail is not None
    assert (detail.parent_task_id, detail.parent_task_type, detail.parent_purged) == (
        gone,
        None,
        True,
    )


def test_the_job_json_carries_its_lineage(db: Database, conn: Conn) -> None:
    root = run(db, conn, "lineage.validate", {"order": 1})

    detail = read.job(conn, only_child(conn, root))

    assert detail is not None
    doc = detail.as_dict()
    assert (doc["parent_task_id"], doc["parent_task_type"], doc["pipeline"], doc["stage"]) == (
        str(root),
        "lineage.validate",
        "lineage",
        2,
    )
    assert (doc["snooze_count"], doc["children"], doc["parent_purged"]) == (0, 0, False)


def test_counting_the_jobs_a_job_posted_reads_the_parent_index(conn: Conn) -> None:
    add_big_results(conn)

    plan = "\n".join(
        r[0] for r in conn.execute("EXPLAIN " + query("job"), {"task_id": uuid.uuid4()})
    )

    assert "idx_sk_task_results_parent" in plan
    assert "Seq Scan on sk_task_results_t" not in plan
