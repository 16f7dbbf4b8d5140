"""The console of several queues, on real databases: the test database ("billing"), a
second one ("emails") and a DSN nobody answers on ("search"). It opens on their
overview; Enter shows one queue's panels, named in the status line, and every key acts
on it; o comes back. With one queue there is no overview and no key for it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import psycopg
import pytest
from textual.pilot import Pilot
from textual.widgets import Label

from skconsole.check.verdict import Level
from skconsole.db.connect import Database
from skconsole.tui.actions import ACTIONS
from skconsole.tui.app import ConsoleApp
from skconsole.tui.database_source import DatabaseSource
from skconsole.tui.screens.help import help_text
from skconsole.tui.screens.main import MainScreen
from skconsole.tui.screens.overview import OverviewScreen
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.source import Queue
from skconsole.tui.widgets import queues_panel
from tests.db.test_ops import add_job
from tests.tui.conftest import SIZE, Conn, select_type, until

LATE = "t.late"


def breach_an_slo(dsn: str) -> None:
    """Two ready jobs that have waited 2 minutes past their type's 30 s SLO."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,"
            " task_priority, task_posted_at_ts, task_locked_until_ts)"
            " SELECT gen_random_uuid(), %s, 'test', 'null', 0, now() - interval '150 seconds',"
            " now() - interval '150 seconds' FROM generate_series(1, 2)",
            (LATE,),
        )
        conn.execute(
            "INSERT INTO sk_task_types_t (task_type, tt_slo_max_wait_seconds) VALUES (%s, 30)",
            (LATE,),
        )


@pytest.fixture
def three(dsn: str, second: str, nowhere: str) -> Callable[[], ConsoleApp]:
    """A console of billing (the test database), emails (with an SLO breached) and
    search (nobody answers)."""
    breach_an_slo(second)

    def make() -> ConsoleApp:
        return ConsoleApp.of_queues(
            [
                Queue(name, DatabaseSource(Database(d)))
                for name, d in (("billing", dsn), ("emails", second), ("search", nowhere))
            ],
            refresh_interval=0.5,
            actor="tester",
        )

    return make


def everyone_answered(app: ConsoleApp) -> bool:
    """Every queue's overview read has come back, with figures or with an error."""
    return all(r.overview is not None or r.error is not None for r in app.overview.rows())


@contextlib.asynccontextmanager
async def every_queue_read(app: ConsoleApp) -> AsyncIterator[tuple[ConsoleApp, Pilot[Any]]]:
    """``app`` running once every queue's overview read has come back: the app, its pilot."""
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: everyone_answered(app))
        yield app, pilot


def status_queue(app: ConsoleApp) -> str:
    return str(app.screen.query_one("#sb-queue", Label).render())


async def test_several_queues_open_on_an_overview_each_read_on_its_own(
    three: Callable[[], ConsoleApp],
) -> None:
    async with every_queue_read(three()) as (app, _pilot):
        assert isinstance(app.screen, OverviewScreen)
        rows = {r.name: r for r in app.overview.rows()}
        assert rows["billing"].connection == rows["emails"].connection == "live"
        assert rows["billing"].shown and not rows["emails"].shown
        emails = rows["emails"].overview
        assert emails is not None and emails.verdict.level is Level.CRITICAL
        assert emails.oldest_ready_s is not None and emails.oldest_ready_s >= 150
        search = rows["search"]
        assert search.overview is None and search.error is not None
        assert "refused" in search.error or "cannot connect" in search.error
        assert app.screen.panel.table.row_count == 3
        assert status_queue(app) == "3 queues"


async def test_the_overview_gives_a_queues_recent_failures_as_a_share_as_panel_1_does(
    three: Callable[[], ConsoleApp], conn: Conn
) -> None:
    for status in (3, 3, 6, 6, 6):  # finished within the window: three of five failed for good
        add_job(conn, status)
    async with every_queue_read(three()) as (app, _pilot):
        billing = next(r for r in app.overview.rows() if r.name == "billing")
        (column,) = [c for c in queues_panel.COLUMNS if c.key == "failed5m"]
        assert column.cell(billing, 0.0) == ("60%", "warn")


async def test_enter_shows_the_selected_queues_panels_and_o_comes_back(
    three: Callable[[], ConsoleApp],
) -> None:
    async with every_queue_read(three()) as (app, pilot):
        await pilot.press("down", "enter")  # emails

        assert isinstance(app.screen, MainScreen)
        assert app.overview.shown == "emails"
        await until(
            pilot,
            lambda: (
                app.snapshot is not None and [d.task_type for d in app.snapshot.depth] == [LATE]
            ),
        )
        assert status_queue(app) == "emails"

        await pilot.press("o")
        assert isinstance(app.screen, OverviewScreen)
        assert [r.name for r in app.overview.rows() if r.shown] == ["emails"]
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen) and app.overview.shown == "emails"


async def test_an_operator_action_acts_on_the_queue_shown(
    three: Callable[[], ConsoleApp], conn: Conn, second: str
) -> None:
    async with every_queue_read(three()) as (app, pilot):
        await pilot.press("down", "enter")  # emails
        await select_type(pilot, app, LATE)
        await pilot.press("P")
        await until(pilot, lambda: app.screen.has_class("dialog-screen"))
        await pilot.press("y")
        with psycopg.connect(second, autocommit=True) as other:

            def paused() -> bool:
                row = other.execute(
                    "SELECT tt_paused FROM sk_task_types_t WHERE task_type = %s", (LATE,)
                ).fetchone()
                return bool(row and row[0])

            await until(pilot, paused)
    assert conn.execute("SELECT count(*) FROM sk_task_types_t").fetchone() == (0,)


async def test_the_queue_that_does_not_answer_stalls_neither_the_others_nor_the_screen(
    three: Callable[[], ConsoleApp],
) -> None:
    async with every_queue_read(three()) as (app, pilot):
        before = {r.name: r.overview for r in app.overview.rows()}
        await until(  # read again: the working queues keep being read
            pilot,
            lambda: (
                all(
                    (r.overview is not None and r.overview is not before[r.name])
                    for r in app.overview.rows()
                    if r.name != "search"
                )
                and app.overview.loops["search"].failures >= 2
            ),
        )
        await pilot.press("down", "down", "enter")  # search: its panels say it is away
        assert app.overview.shown == "search"
        await until(pilot, lambda: app.connection in ("reconnecting", "error"))
        await pilot.press("o", "up", "up", "enter")  # billing still reads at once
        await until(pilot, lambda: app.overview.shown == "billing" and app.connected)


async def test_one_queue_has_no_overview_and_no_key_for_it() -> None:
    app = ConsoleApp(FixedSource(), auto_refresh=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("o")

        assert isinstance(app.screen, MainScreen)
        assert app.check_action("queues", ()) is False
        assert app.status_state().queue is None
    assert "Queues" not in help_text(ACTIONS, read_only=False)
    assert "queues overview" not in help_text(ACTIONS, read_only=False)
    several = help_text(ACTIONS, read_only=False, several=True).splitlines()
    assert any(line.startswith("o · Queues · ") for line in several)
