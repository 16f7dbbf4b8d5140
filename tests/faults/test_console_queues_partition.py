"""The console of several queues through a silent partition: one queue's path goes
silent (the proxy in front of it freezes: no reset, no answer), and the overview must
say so within its bound while the other queue keeps being read and the screen keeps
answering keys."""

from __future__ import annotations

import time

import pytest

from skconsole.db.connect import Database
from skconsole.tui.app import ConsoleApp
from skconsole.tui.database_source import DatabaseSource
from skconsole.tui.reads import OverviewRead
from skconsole.tui.screens.main import MainScreen
from skconsole.tui.screens.overview import OverviewScreen
from skconsole.tui.source import Queue
from tests.support.netproxy import FreezableProxy
from tests.tui.conftest import SIZE, until

pytestmark = pytest.mark.server

#: the overview's bound in this test: shorter than the default 10 s, which behaves the same
TIMEOUT_S = 3.0


async def test_a_silent_queue_stalls_neither_the_other_queue_nor_the_screen(
    second: str, proxy: FreezableProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(OverviewRead, "bound_s", TIMEOUT_S)
    queues = [
        Queue("billing", DatabaseSource(Database(second))),
        Queue("frozen", DatabaseSource(Database(proxy.dsn))),
    ]
    app = ConsoleApp.of_queues(queues, refresh_interval=0.5, actor="tester")
    try:
        await _through_the_partition(app, proxy)
    finally:
        proxy.thaw()
        for q in queues:
            q.source.close()


async def _through_the_partition(app: ConsoleApp, proxy: FreezableProxy) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: all(r.connection == "live" for r in app.overview.rows()), 30)
        proxy.freeze()
        frozen_at = app.clock()

        def frozen_error() -> str:
            return app.overview.errors.get("frozen") or ""

        await until(pilot, lambda: "timed out" in frozen_error(), TIMEOUT_S + 30)
        await until(pilot, lambda: app.overview.overviews["billing"].taken_at > time.time() - 1, 30)
        assert app.overview.overviews["billing"].taken_at > frozen_at  # read again through it all
        assert app.overview.errors.get("billing") is None

        # the screen answers: over to the main screen and back while the path is silent
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        await pilot.press("o")
        assert isinstance(app.screen, OverviewScreen)
        assert app.screen.panel.table.row_count == 2
