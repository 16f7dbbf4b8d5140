"""Snooze: a handler asks to run again later; it is not a failure."""

from __future__ import annotations

import itertools
import time
from typing import Any

import psycopg

from skconsole import Snooze
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.producer import Producer
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from tests.support.rows import one_row
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]

tasks = TaskRegistry(TaskOptions(max_attempts=1, backoff=0.05, timeout=10.0))
runs: dict[str, list[float]] = {}


@tasks.task("snooze.three_times")
async def snooze_three_times(payload: Any, ctx: JobContext) -> None:
    seen = runs.setdefault(str(ctx.task_id), [])
    seen.append(time.monotonic())
    if len(seen) <= 3:
        ctx.post("snooze.child", {"attempt": len(seen)})
        raise Snooze(0.3)
    ctx.post("snooze.child", {"attempt": len(seen)})


@tasks.task("snooze.sync_once")
def snooze_sync_once(payload: Any, ctx: JobContext) -> None:
    seen = runs.setdefault(str(ctx.task_id), [])
    seen.append(time.monotonic())
    if len(seen) == 1:
        raise Snooze(0)


@tasks.task("snooze.child")
async def snooze_child(payload: Any) -> None:
    pass


def result(conn: Conn, task_id: Any) -> tuple[int, int, int, int]:
    row = one_row(
        conn,
        "SELECT task_status, task_error_count, sk_snooze_count, sk_attempt"
        " FROM sk_task_results_t WHERE task_id = %s",
        (task_id,),
    )
    return row[0], row[1], row[2], row[3]


def test_snoozing_keeps_the_error_count_and_counts_the_snoozes(db: Database, conn: Conn) -> None:
    """max_attempts is 1: had the snoozes been failures, the job would be 5 Faulted."""
    with Producer(db) as p:
        task_id = p.post("snooze.three_times")
    with EngineThread(db.dsn, tasks):
        wait_until(lambda: result(conn, task_id)[0] == 3, timeout=30)
    status, errors, snoozes, attempts = result(conn, task_id)
    assert (status, errors, snoozes, attempts) == (JobStatus.PROCESSED, 0, 3, 4)


def test_a_snoozed_job_waits_the_time_it_asked_for(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        task_id = p.post("snooze.three_times")
    with EngineThread(db.dsn, tasks):
        wait_until(lambda: result(conn, task_id)[0] == 3, timeout=30)
    starts = runs[str(task_id)]
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= 0.3


def test_a_snooze_posts_none_of_the_jobs_its_attempt_posted(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        task_id = p.post("snooze.three_times")
    with EngineThread(db.dsn, tasks):
        wait_until(lambda: result(conn, task_id)[0] == 3, timeout=30)
    children = conn.execute(
        "SELECT task_payload::jsonb FROM sk_task_results_t WHERE sk_parent_task_id = %s",
        (task_id,),
    ).fetchall()
    assert [c[0] for c in children] == [{"attempt": 4}]


def test_a_sync_handler_can_snooze(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        task_id = p.post("snooze.sync_once")
    with EngineThread(db.dsn, tasks):
        wait_until(lambda: result(conn, task_id)[0] == 3, timeout=30)
    assert result(conn, task_id)[:3] == (3, 0, 1)
