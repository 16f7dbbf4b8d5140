"""``skconsole demo``'s engine side: the scenario, the trickle, the crash, the embedded engine."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from skconsole import read
from skconsole.core.states import WorkerState
from skconsole.db.connect import Database
from skconsole.db.schema import missing_objects
from skconsole.demo import tasks as demo_tasks
from skconsole.demo.scenario import (
    DEMO_DATABASE,
    DemoScenario,
    Trickle,
    fresh_demo_database,
)
from skconsole.producer import Producer
from skconsole.worker.engine import WorkerConfig
from skconsole.worker.thread import EngineThread
from tests.support.waiting import wait_until


def test_trickle_posts_until_stopped(db: Database, conn: psycopg.Connection[Any]) -> None:
    trickle = Trickle(db, rate=20.0, seed=3)
    trickle.start()
    wait_until(lambda: trickle.posted >= 20, timeout=30)
    trickle.stop()
    # stopped means its thread has ended: nothing is left to post
    assert not trickle._thread.is_alive()
    posted = conn.execute("SELECT count(*) FROM sk_task_results_t").fetchone()
    assert posted is not None and posted[0] == trickle.posted


def test_the_demo_database_starts_fresh_every_time(server_dsn: str) -> None:
    server = Database(server_dsn)
    try:
        first = fresh_demo_database(server)
        with Producer(first) as p:
            p.post("demo.noop")
        second = fresh_demo_database(server)
        with second.connect() as c:
            assert missing_objects(c) == []
            assert c.execute("SELECT count(*) FROM sk_task_results_t").fetchone() == (0,)
            assert c.execute("SELECT current_database()").fetchone() == (DEMO_DATABASE,)
    finally:
        with server.connect() as c:
            c.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    sql.Identifier(DEMO_DATABASE)
                )
            )


def test_the_demo_has_hung_jobs_failures_and_moving_work(db: Database) -> None:
    """Within seconds: failure groups, jobs done, and a crashed worker whose jobs are
    hung once its lease has lapsed (lease + margin after its last renewal)."""
    scenario = DemoScenario(db, rate=5.0, seed=11)
    assert scenario.post_initial() > 800
    config = WorkerConfig(concurrency=8, reap=False, grace_period=1.0)
    engine = EngineThread(db, demo_tasks, config, gate=scenario.ready)
    engine.start()
    scenario.start()
    try:
        assert engine.state == "starting"  # held until the crash happened
        assert scenario.ready.wait(60)
        assert scenario.crash.error is None
        wait_until(lambda: engine.state == "running", timeout=30)
        with db.connect() as conn:
            wait_until(lambda: len(read.failure_groups(conn)) >= 3, timeout=30)
            # the demo engine leaves them to the operator
            wait_until(lambda: read.inflight(conn).hung == 3, timeout=30)
            assert any(w.state is WorkerState.GONE for w in read.workers(conn))
            wait_until(lambda: engine.processed >= 20, timeout=30)
            wait_until(lambda: scenario.trickle.posted > 0, timeout=30)
    finally:
        scenario.stop()
        assert engine.close(30)
    assert engine.state == "stopped"
