"""The console on a database with Stakhanovise.NET's objects alone, read by a role that
may not create anything: it reads degraded instead of refusing."""

from __future__ import annotations

from typing import Any

from skconsole.db.connect import Database
from skconsole.tui.launch import schema_state
from tests.db.test_stakhanovise_only import reader  # noqa: F401  (the fixture)
from tests.tui.conftest import MakeApp, loaded_console, notices, until


def test_the_console_starts_degraded_and_creates_nothing(
    reader: tuple[str, dict[str, Any]],  # noqa: F811
) -> None:
    dsn, _ = reader
    schema_state(Database(dsn, read_only=True), read_only=True, setup=True)  # no SchemaError


async def test_the_console_shows_the_queue_in_flight_and_failures(
    reader: tuple[str, dict[str, Any]],  # noqa: F811
    make_app: MakeApp,
) -> None:
    dsn, ids = reader
    async with loaded_console(make_app(db=Database(dsn, read_only=True), read_only=True)) as (
        app,
        pilot,
    ):
        await until(pilot, lambda: bool(app.snapshot and app.snapshot.failures))
        snap = app.snapshot
        assert snap is not None
        assert {d.task_type: d.ready for d in snap.depth}["emails.send"] == 3
        assert {j.task_id for j in snap.inflight if j.hung} == {ids["old_running"]}
        assert sum(g.count for g in snap.failures) == 6
        assert snap.workers == ()
        assert snap.degraded
        for key, scope in (("6", "workers"), ("7", "audit"), ("8", "schedules")):
            await pilot.press(key)
            panel = app.main_screen.panel(scope)
            await until(pilot, lambda p=panel: p.summary.startswith("none here: skconsole's"))
        count = app.refresh_count  # two refreshes more: nothing may fail on a missing object
        await until(pilot, lambda: app.refresh_count >= count + 2)
        assert [m for m in notices(app) if "rror" in m] == []
