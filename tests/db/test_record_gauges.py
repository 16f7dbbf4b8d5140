"""The per-minute gauges (148_skconsole_record_gauges.sql): once a minute one worker's
upkeep writes the jobs waiting and running per type and the workers alive, the state no
event count rebuilds. On a real PostgreSQL, written by a real engine's upkeep."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg

from skconsole.db.connect import Database
from skconsole.producer import Producer
from skconsole.worker.gauges import write_gauges
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]


def gauge_rows(conn: Conn) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT minute, task_type, ready, scheduled, running, workers"
        " FROM sk_record_gauges_t ORDER BY minute, task_type"
    ).fetchall()


def test_a_worker_upkeep_writes_the_minute_s_waiting_jobs_and_workers_alive(
    db: Database, conn: Conn
) -> None:
    with Producer(db) as p:
        for _ in range(3):
            p.post("gauge.nobody_runs_it")
        p.post("gauge.nobody_runs_it", delay=3600)

    with EngineThread(db.dsn):  # its upkeep writes the gauges on its first round
        wait_until(lambda: gauge_rows(conn), timeout=30, describe="no gauge row written")

    rows = {r[1]: r for r in gauge_rows(conn)}
    assert rows["gauge.nobody_runs_it"][2:5] == (3, 1, 0)
    assert rows[""][2:4] == (3, 1)  # the totals
    assert rows[""][5] == 1  # the engine itself, alive
    assert rows["gauge.nobody_runs_it"][0].second == 0  # one row per minute


def test_gauges_are_written_once_a_minute_whoever_asks(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        p.post("gauge.once")

    async def twice() -> list[int]:
        async with await psycopg.AsyncConnection.connect(db.dsn, autocommit=True) as a:
            first = await write_gauges(a, keep_s=3600)
            second = await write_gauges(a, keep_s=3600)
        return [first.written, second.written]

    written = asyncio.run(twice())

    rows = gauge_rows(conn)
    minutes = {r[0] for r in rows}
    # each minute once: two rows (the type's and the totals'), whatever the calls wrote
    assert len(rows) == 2 * len(minutes) == sum(written)
    assert written[0] == 2


def test_gauges_older_than_the_record_keeps_are_trimmed(db: Database, conn: Conn) -> None:
    conn.execute(
        "INSERT INTO sk_record_gauges_t (minute, task_type, ready)"
        " VALUES (date_trunc('minute', now()) - interval '3 hours', 'gauge.old', 5)"
    )

    async def once() -> int:
        async with await psycopg.AsyncConnection.connect(db.dsn, autocommit=True) as a:
            return (await write_gauges(a, keep_s=3600)).trimmed

    assert asyncio.run(once()) == 1
    assert all(r[1] != "gauge.old" for r in gauge_rows(conn))
