"""The server goes away under a running console, and comes back.

An embedded PostgreSQL of the test's own (not the shared session server) is
stopped with pg_ctl while the console refreshes, then started again. The
console must keep its last data on screen marked stale, say it is
reconnecting (with the attempt count), refuse writes meanwhile, and become
live again by itself, with actions working.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from skconsole.db.connect import Database
from skconsole.db.embedded import EmbeddedServer, _pgserver
from skconsole.db.schema import setup_schema
from skconsole.producer import Job, Producer
from skconsole.tui.app import ConsoleApp
from skconsole.tui.database_source import DatabaseSource
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.requeue_jobs import RequeueJobsScreen
from skconsole.tui.widgets.failures_panel import FailuresPanel
from tests.tui.conftest import SIZE, loaded, notices, run_burst, until


@pytest.fixture
def own_server() -> Iterator[EmbeddedServer]:
    """A server of this test's own, in a directory outside pytest's: the server runs as
    another user, and pytest makes its own temporary root private again whenever a
    session starts (another pytest run on the machine took the server's access away
    while it started)."""
    folder = Path(tempfile.mkdtemp(prefix="skconsole-test-"))
    server = EmbeddedServer(folder / "pgdata")
    server.start(cleanup="delete")
    try:
        yield server
    finally:
        server.release()
        shutil.rmtree(folder, ignore_errors=True)


def _restart(server: EmbeddedServer) -> None:
    """Start the stopped server again in the same data directory (same socket, same DSN)."""
    pg = _pgserver()
    with pg.PostgresServer._lock:
        server._handle.ensure_postgres_running()


async def test_lost_connection_keeps_data_marked_stale_and_recovers(
    own_server: EmbeddedServer,
) -> None:
    dsn = own_server.start()
    with psycopg.connect(dsn, autocommit=True) as c:
        setup_schema(c)
    db = Database(dsn)
    with Producer(db) as p:
        p.post_many([Job("tui.timeout", {"n": i}) for i in range(4)])
    await asyncio.to_thread(run_burst, db)

    app = ConsoleApp(DatabaseSource(db), refresh_interval=0.5, actor="tester")
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        panel = app.main_screen.query_one(FailuresPanel)
        await until(pilot, lambda: panel.table.total_rows == 1)
        await pilot.press("3")

        await asyncio.to_thread(own_server.stop)  # pg_ctl stop -m fast
        await until(pilot, lambda: app.connection == "reconnecting", 30)
        kept = app.snapshot
        await until(pilot, lambda: app.attempt >= 3, 30)
        state = app.status_state()
        assert state.connection == "reconnecting" and state.attempt >= 3
        assert app.snapshot is kept  # the last data stays on screen
        assert panel.table.total_rows == 1
        assert app.main_screen.has_class("-stale")
        assert app.check_action("requeue", ()) is None  # dimmed, not hidden
        assert any(m.startswith("Lost the connection") for m in notices(app))
        assert app.screen.active_bindings["R"].enabled is False  # shown dimmed in the footer
        await pilot.press("R")
        await pilot.pause()
        assert not app.operator.busy
        assert not isinstance(app.screen, ConfirmScreen)

        await asyncio.to_thread(_restart, own_server)
        await until(pilot, lambda: app.connection == "live", 30)
        assert app.snapshot is not kept
        assert not app.main_screen.has_class("-stale")
        assert app.check_action("requeue", ()) is True
        assert any(m.startswith("Connection restored") for m in notices(app))

        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, RequeueJobsScreen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Requeued 4") for m in notices(app)))
    app.source.close()
