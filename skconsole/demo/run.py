"""``skconsole demo``: a fresh demo queue on its own embedded server, an engine and the console."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from skconsole.db.connect import shown_dsn
from skconsole.db.schema import setup_schema
from skconsole.db.target import resolve_database
from skconsole.demo.handlers import tasks
from skconsole.demo.scenario import DemoScenario, demo_data_dir, fresh_demo_database
from skconsole.tui.launch import engine_database, run_app
from skconsole.worker.engine import WorkerConfig
from skconsole.worker.thread import EngineThread


def demo_reach(dsn: str, data_dir: Path | None, *, own_server: bool) -> str:
    """How to reach the demo's queue from another shell: its DSN (password masked),
    and on its own server the command that prints it."""
    text = f"the demo's queue: {shown_dsn(dsn)}"
    if own_server:
        where = f" --data-dir {shlex.quote(str(data_dir))}" if data_dir is not None else ""
        text += (
            f'\n  from another shell: skconsole --dsn "$(skconsole{where} db uri --demo)" status'
        )
    return text


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
    print(demo_reach(db.dsn, data_dir, own_server=dsn is None), file=sys.stderr)
    worker_db = engine_database(db)
    scenario = DemoScenario(worker_db, rate=rate, seed=seed)
    posted = scenario.post_initial()
    print(f"posted {posted:,} demo jobs; opening the console ...", file=sys.stderr)
    # the demo leaves hung jobs for the operator to find and reap (H), so no auto-reaping
    config = WorkerConfig(concurrency=workers, reap=False, grace_period=3.0)
    engine = EngineThread(worker_db, tasks, config, gate=scenario.ready)
    scenario.start()
    return run_app(
        db,
        refresh=refresh,
        engine=engine,
        cleanup=[scenario.stop],
        tasks="skconsole.demo.handlers",
    )
