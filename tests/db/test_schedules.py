"""Periodic jobs in the database: defining a schedule, taking a tick exactly once."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from skconsole.core.schedule import tick_id
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.worker.registry import TaskOptions, TaskRegistry
from tests.support.rows import one_row
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]


def registry(**schedule: Any) -> TaskRegistry:
    tasks = TaskRegistry(TaskOptions(timeout=10.0))
    tasks.task("sched.job", **schedule)(lambda payload: None)
    return tasks


def schedule_row(conn: Conn) -> dict[str, Any] | None:
    cur = conn.execute("SELECT * FROM sk_schedules_t WHERE task_type = 'sched.job'")
    row = cur.fetchone()
    assert cur.description is not None
    return None if row is None else dict(zip([c.name for c in cur.description], row, strict=True))


def jobs(conn: Conn) -> list[tuple[uuid.UUID, Any, int]]:
    return [
        (r[0], r[1], r[2])
        for r in conn.execute(
            "SELECT task_id, task_payload::jsonb, task_status FROM sk_task_results_t"
            " WHERE task_type = 'sched.job' ORDER BY task_posted_at_ts"
        )
    ]


def take(conn: Conn, tick: datetime, *, post: bool = True) -> tuple[int, int]:
    row = one_row(
        conn,
        query("schedule_tick"),
        {
            "type": "sched.job",
            "tick": tick,
            "post": post,
            "id": tick_id("sched.job", tick),
            "source": "test",
        },
    )
    return int(row[0]), int(row[1])


def define(conn: Conn, last_tick: datetime) -> None:
    conn.execute(
        "INSERT INTO sk_schedules_t (task_type, sch_every_seconds, sch_payload, sch_last_tick_ts)"
        " VALUES ('sched.job', 60, '{\"from\": \"schedule\"}', %s)",
        (last_tick,),
    )


def test_a_new_schedule_starts_at_its_next_tick_not_at_once(db: Database, conn: Conn) -> None:
    with EngineThread(db.dsn, registry(cron="0 0 1 1 *")):
        wait_until(lambda: schedule_row(conn) is not None, timeout=10)
        time.sleep(1.5)
    row = schedule_row(conn)
    assert row is not None
    assert row["sch_cron"] == "0 0 1 1 *"
    assert row["sch_last_tick_ts"] == datetime(datetime.now(UTC).year, 1, 1, tzinfo=UTC)
    assert row["sch_last_task_id"] is None
    assert jobs(conn) == []


def test_a_due_tick_is_posted_with_the_schedules_payload_and_run(db: Database, conn: Conn) -> None:
    with EngineThread(db.dsn, registry(every="1s", payload={"report": "daily"})):
        wait_until(lambda: any(s == 3 for _, _, s in jobs(conn)), timeout=10)
    assert jobs(conn)[0][1] == {"report": "daily"}
    row = schedule_row(conn)
    assert row is not None
    assert row["sch_last_task_id"] == tick_id("sched.job", row["sch_last_tick_ts"])
    assert row["sch_last_task_id"] in {task_id for task_id, _, _ in jobs(conn)}


def test_a_tick_is_taken_once_however_often_it_is_offered(conn: Conn) -> None:
    tick = datetime(2026, 11, 24, 6, 0, tzinfo=UTC)
    define(conn, tick - timedelta(minutes=1))
    assert take(conn, tick) == (1, 1)
    assert take(conn, tick) == (0, 0)
    assert take(conn, tick - timedelta(minutes=1)) == (0, 0)  # an older tick, from a slow worker
    assert [j[1] for j in jobs(conn)] == [{"from": "schedule"}]


def test_a_tick_whose_job_was_purged_is_not_posted_again(conn: Conn) -> None:
    tick = datetime(2026, 11, 24, 6, 0, tzinfo=UTC)
    define(conn, tick - timedelta(minutes=1))
    take(conn, tick)
    conn.execute("DELETE FROM sk_tasks_queue_t")
    conn.execute("DELETE FROM sk_task_results_t")
    assert take(conn, tick) == (0, 0)
    assert jobs(conn) == []


def test_a_tick_whose_row_exists_is_not_posted_twice_even_if_the_schedule_forgot_it(
    conn: Conn,
) -> None:
    """Insert-or-ignore on the tick's id: a schedule row moved back by hand (or
    restored from a backup) cannot make a tick that ran run again."""
    tick = datetime(2026, 11, 24, 6, 0, tzinfo=UTC)
    define(conn, tick - timedelta(minutes=1))
    take(conn, tick)
    conn.execute("UPDATE sk_task_results_t SET task_status = 3")
    conn.execute("DELETE FROM sk_tasks_queue_t")
    conn.execute("UPDATE sk_schedules_t SET sch_last_tick_ts = %s", (tick - timedelta(hours=1),))
    assert take(conn, tick) == (1, 0)
    assert [j[2] for j in jobs(conn)] == [3]
    assert conn.execute("SELECT count(*) FROM sk_tasks_queue_t").fetchone() == (0,)


def test_a_paused_types_ticks_are_not_taken(conn: Conn) -> None:
    tick = datetime(2026, 11, 24, 6, 0, tzinfo=UTC)
    define(conn, tick - timedelta(minutes=1))
    conn.execute("INSERT INTO sk_task_types_t (task_type, tt_paused) VALUES ('sched.job', true)")
    assert take(conn, tick) == (0, 0)
    row = schedule_row(conn)
    assert row is not None and row["sch_last_tick_ts"] == tick - timedelta(minutes=1)


def test_a_skipped_tick_is_taken_without_a_job(conn: Conn) -> None:
    tick = datetime(2026, 11, 24, 6, 0, tzinfo=UTC)
    define(conn, tick - timedelta(minutes=1))
    assert take(conn, tick, post=False) == (1, 0)
    assert jobs(conn) == []
    row = schedule_row(conn)
    assert row is not None and row["sch_last_tick_ts"] == tick and row["sch_last_task_id"] is None


def test_a_changed_definition_replaces_the_old_one_and_keeps_the_last_tick(
    db: Database, conn: Conn
) -> None:
    last = datetime(2026, 11, 24, 6, 0, tzinfo=UTC)
    define(conn, last)
    with EngineThread(db.dsn, registry(cron="0 0 1 1 *", timezone="Europe/Paris")):
        wait_until(lambda: (schedule_row(conn) or {}).get("sch_cron") is not None, timeout=10)
    row = schedule_row(conn)
    assert row is not None
    assert (row["sch_cron"], row["sch_every_seconds"], row["sch_timezone"]) == (
        "0 0 1 1 *",
        None,
        "Europe/Paris",
    )
    assert row["sch_last_tick_ts"] == last


def test_during_a_rolling_deploy_ticks_follow_the_newest_definition_only(
    db: Database, conn: Conn
) -> None:
    """An old worker (every 2 s) still runs when a new one (every 3 s) starts and
    publishes its definition: every worker then posts the ticks of the stored, newest
    definition only, never the union of both (a cron moved from 03:00 to 04:00 would
    otherwise run twice)."""
    from skconsole.core.schedule import Schedule

    def newer_than(known: set[uuid.UUID]) -> list[uuid.UUID]:
        return [j[0] for j in jobs(conn) if j[0] not in known]

    with EngineThread(db.dsn, registry(every="2s")):
        wait_until(lambda: schedule_row(conn) is not None, timeout=10)
        with EngineThread(db.dsn, registry(every="3s")):
            wait_until(lambda: (schedule_row(conn) or {}).get("sch_every_seconds") == 3.0, 10)
            before = {j[0] for j in jobs(conn)}
            start = datetime.now(UTC)
            # three ticks of the new definition: the old one's fall between them
            wait_until(lambda: len(newer_than(before)) >= 3, timeout=30)
            end = datetime.now(UTC)
    newest = Schedule(every=3.0)
    allowed = set()
    tick = newest.latest_tick(start - timedelta(seconds=3))
    while tick <= end + timedelta(seconds=3):
        allowed.add(tick_id("sched.job", tick))
        tick = newest.next_tick(tick)
    posted = newer_than(before)
    assert posted and set(posted) <= allowed, "a tick of the old definition ran"
