"""Toggling the embedded engine with e: each start registers a new worker (an engine
never takes over another's identity), and panel 6 lists the console's process once."""

from __future__ import annotations

from skconsole.db.connect import Database
from skconsole.tui.widgets.workers_panel import WorkersPanel
from skconsole.worker.engine import WorkerConfig
from skconsole.worker.thread import EngineThread
from tests.support.tasks_console import tasks
from tests.tui.conftest import SIZE, Conn, MakeApp, loaded, until


def registrations(conn: Conn) -> int:
    return int(conn.execute("SELECT count(*) FROM sk_workers_t").fetchone()[0])  # type: ignore[index]


async def test_restarting_the_embedded_engine_keeps_one_worker_row(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    engine = EngineThread(db, tasks, WorkerConfig(concurrency=2, poll_interval=0.1, grace_period=1))
    app = make_app(engine=engine, start_engine=True, interval=0.2)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await loaded(pilot)
            await pilot.press("6")
            panel = app.screen.query_one(WorkersPanel)
            for started in range(1, 4):
                await until(pilot, lambda: engine.state == "running")
                await until(pilot, lambda n=started: registrations(conn) == n)
                await pilot.press("e")
                await until(pilot, lambda: engine.state == "stopped")
                await pilot.press("e")
            await until(pilot, lambda: registrations(conn) == 4)
            await until(
                pilot,
                lambda: (
                    app.snapshot is not None
                    and len(app.snapshot.workers) == 4
                    and any(w.alive for w in app.snapshot.workers)
                ),
            )

            assert panel.table.row_count == 1
            assert "3 replaced by a restart" in panel.summary
    finally:
        engine.close(10)
