"""run_at=: a job that may run only from a given time on, by the server's clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from skconsole.db.connect import Database
from skconsole.producer import Job, Producer
from tests.support.rows import one_row

Conn = psycopg.Connection[Any]


def runnable_from(conn: Conn, task_id: Any) -> datetime:
    row = one_row(
        conn, "SELECT task_locked_until_ts FROM sk_tasks_queue_t WHERE task_id = %s", (task_id,)
    )
    value: datetime = row[0]
    return value


@pytest.mark.parametrize("count", [1, 3, 250], ids=["one statement", "statement", "COPY"])
def test_a_job_posted_with_run_at_is_runnable_from_that_time(
    db: Database, conn: Conn, count: int
) -> None:
    when = datetime(2031, 1, 2, 3, 4, 5, tzinfo=UTC)
    with Producer(db) as p:
        ids = p.post_many([Job("later", {"n": n}, run_at=when) for n in range(count)]).ids
    assert {runnable_from(conn, i) for i in ids} == {when}


def test_run_at_and_delay_mix_in_one_post(db: Database, conn: Conn) -> None:
    when = datetime.now(UTC) + timedelta(days=3)
    with Producer(db) as p:
        a, b = p.post_many([Job("x", run_at=when), Job("x", delay=60)]).ids
    assert runnable_from(conn, a) == when
    assert (
        timedelta(seconds=50) < runnable_from(conn, b) - datetime.now(UTC) < timedelta(seconds=70)
    )


def test_a_keyed_job_takes_run_at_too(db: Database, conn: Conn) -> None:
    when = datetime(2030, 6, 1, tzinfo=UTC)
    with Producer(db) as p:
        task_id = p.post("x", key="monthly-report", run_at=when)
    assert runnable_from(conn, task_id) == when
