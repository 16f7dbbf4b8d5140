"""The charts screen (key h) on fixed data: which type it opens on, what its keys choose,
and that a window's record is read (off the UI thread) before it is drawn. What the
record holds is tested on PostgreSQL (tests/db/test_record.py, test_status_history.py)."""

from __future__ import annotations

from skconsole.tui.app import ConsoleApp
from skconsole.tui.chart_data import BY_KEY, DEFAULT_WINDOW
from skconsole.tui.screens.charts import ChartsScreen
from skconsole.tui.screens.main import MainScreen
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import FrozenClock
from skconsole.tui.showcase.scenes import settle
from tests.tui.conftest import SIZE, shown_screen, until


def fixed_app() -> ConsoleApp:
    return ConsoleApp(FixedSource(), clock=FrozenClock(), auto_refresh=False, actor="tester")


def _drawn(screen: ChartsScreen) -> bool:
    return screen.data is not None and screen.body.shown is not None


async def test_h_from_the_failure_groups_opens_the_whole_queues_last_hour() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3", "h")

        screen = await shown_screen(pilot, ChartsScreen, _drawn)

        assert screen.task_type is None
        assert screen.window == DEFAULT_WINDOW
        shown = screen.body.shown
        assert shown is not None and shown.title.startswith("every type · last 1 h")


async def test_h_from_the_depth_panel_opens_the_selected_types_charts() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("1", "down", "down", "h")

        screen = await shown_screen(pilot, ChartsScreen, _drawn)

        assert screen.task_type == "payments.charge"
        shown = screen.body.shown
        assert shown is not None and shown.charts[2].threshold is not None  # its wait SLO


async def test_a_window_key_reads_and_draws_that_window() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("h")
        screen = await shown_screen(pilot, ChartsScreen, _drawn)

        await pilot.press("4")
        await until(pilot, lambda: screen.data is not None and screen.data.window.key == "7d")
        assert screen.body.shown is not None and screen.body.shown.steps == 168

        await pilot.press("left")
        await until(pilot, lambda: screen.data is not None and screen.data.window.key == "24h")
        await pilot.press("right", "right")
        await until(pilot, lambda: screen.data is not None and screen.data.window.key == "7d")
        assert screen.window == BY_KEY["7d"]  # the longest stays


async def test_t_goes_through_every_type_and_back_to_the_whole_queue() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("h")
        screen = await shown_screen(pilot, ChartsScreen, _drawn)
        seen = []

        for _ in range(len(screen.choices)):
            await pilot.press("t")
            seen.append(screen.task_type)

        assert seen[-1] is None
        assert sorted(t for t in seen if t is not None) == sorted(screen.choices[1:])


async def test_esc_goes_back_from_the_charts() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("h")
        await shown_screen(pilot, ChartsScreen, _drawn)

        await pilot.press("escape")

        await shown_screen(pilot, MainScreen)
