"""``skconsole demo``: a fresh demo queue on its own embedded server, an engine and the console."""

from __future__ import annotations

import sys
from pathlib import Path

from skconsole.db.embedded import default_data_dir
from skconsole.db.schema import setup_schema
from skconsole.db.target import resolve_database
from skconsole.demo.handlers import tasks
from skconsole.demo.scenario import DemoScenario, fresh_demo_database
from skconsole.tui.launch import engine_database, run_app
from skconsole.worker.engine import WorkerConfig
from skconsole.worker.thread import EngineThread


def demo_data_dir() -> Path:
    """The demo's own embedded server, so its jobs never mix with real ones."""
    return default_data_dir().parent / "demo-pgdata"


def run_demo(
    dsn: str | None,
    data_dir: Path | None,
    *,
    rate: float = 3.0,
    workers: int = 8,
    refresh: float = 2.0,
    seed: int | None = None,
) -> int:
    """``skconsole demo``: schema, a realistic backlog, a crash, a trickle, the engine, the console."""
    where = data_dir or demo_data_dir()
    if dsn is None:
        print(f"starting the demo's embedded PostgreSQL in {where} ...", file=sys.stderr)
    db = resolve_database(dsn, where, application_name="skconsole-console")
    if dsn is None:  # the demo's own server: a fresh demo database every time
        db = fresh_demo_database(db)
    else:  # a server the operator named: only add the schema, never drop anything
        with db.connect() as conn:
            setup_schema(conn)
    worker_db = engine_database(db)
    scenario = DemoScenario(worker_db, rate=rate, seed=seed)
    posted = scenario.post_initial()
    print(f"posted {posted:,} demo jobs; opening the console ...", file=sys.stderr)
    # the demo leaves hung jobs for the operator to find and reap (H), so no auto-reaping
    config = WorkerConfig(concurrency=workers, reap=False, grace_period=3.0)
    engine = EngineThread(worker_db, tasks, config, gate=scenario.ready)
    scenario.start()
    return run_app(db, refresh=refresh, engine=engine, cleanup=[scenario.stop])
