"""The console's keys, help, filter, palette and read-only mode on fixed data (no database):
what is tested here is the console itself. What the database does when the console acts
is tested on a real one (test_console.py, test_actions.py)."""

from __future__ import annotations

from skconsole.tui import actions
from skconsole.tui.app import ConsoleApp
from skconsole.tui.commands import ActionCommands
from skconsole.tui.panels import PANEL_IDS
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.help import HelpScreen, help_text
from skconsole.tui.screens.main import MainScreen
from skconsole.tui.screens.requeue_jobs import RequeueJobsScreen
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import GROUPS, FrozenClock
from skconsole.tui.showcase.scenes import settle
from skconsole.tui.widgets.failures_panel import FailuresPanel
from tests.tui.conftest import SIZE, until

WRITE_KEYS = ("R", "A", "B", "X", "H", "P", "D")


def fixed_app(*, read_only: bool = False, interval: float = 0.5, auto: bool = False) -> ConsoleApp:
    return ConsoleApp(
        FixedSource(read_only=read_only),
        clock=FrozenClock(),
        refresh_interval=interval,
        auto_refresh=auto,
        actor="tester",
    )


async def test_read_only_hides_write_actions() -> None:
    app = fixed_app(read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for scope_keys in (("3",), ("1",), ("2",)):
            await pilot.press(*scope_keys)
            shown = {b.binding.key for b in app.screen.active_bindings.values()}
            assert not shown & set(WRITE_KEYS), shown
            for key in WRITE_KEYS:
                await pilot.press(key)
                await pilot.pause(0.05)
                assert not isinstance(app.screen, ConfirmScreen)
        assert app.status_state().read_only
        await pilot.press("3", "enter")  # drill-down still works
        await until(pilot, lambda: isinstance(app.screen, GroupJobsScreen))
        await pilot.press("R", "A", "X", "B")
        await pilot.pause(0.1)
        assert isinstance(app.screen, GroupJobsScreen)
        names = [name for name, _, _ in ActionCommands(app.screen)._entries()]
        assert "Requeue" not in names and "Purge" not in names and "Filter" in names
    assert app.source.executed == []  # type: ignore[attr-defined]


async def test_filter_narrows_the_focused_table_and_esc_clears() -> None:
    app = fixed_app(auto=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        panel = app.main_screen.query_one(FailuresPanel)
        await until(pilot, lambda: panel.table.total_rows == len(GROUPS))
        await pilot.press("3", "slash", *"declined")
        assert len(panel.table.visible_keys) == 1
        assert f"filter “declined”: 1 of {len(GROUPS)}" in str(panel.border_title)
        await pilot.press("enter")  # back to the table, filter kept
        assert app.focused is panel.table
        count = app.refresh_count
        await until(pilot, lambda: app.refresh_count >= count + 2)  # survives refreshes
        assert len(panel.table.visible_keys) == 1
        await pilot.press("escape")
        assert len(panel.table.visible_keys) == len(GROUPS)
        assert "filter" not in str(panel.border_title)


async def test_pause_and_interval_keys() -> None:
    app = fixed_app(interval=2.0, auto=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("minus")
        assert app.interval == 5.0
        await pilot.press("plus", "plus")
        assert app.interval == 1.0
        assert app.status_state().interval_s == 1.0
        await pilot.press("p")
        assert app.paused and app.status_state().paused
        await until(pilot, lambda: not app.refresh_loop.busy)  # one may have been under way
        count = app.refresh_count
        await pilot.pause(1.5)  # more than the 1 s interval: a refresh would have come
        assert app.refresh_count == count  # no refresh while paused
        await pilot.press("p")
        await until(pilot, lambda: app.refresh_count > count)


async def test_help_lists_every_action() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = help_text(read_only=False)
        for spec in actions.ACTIONS:
            if not spec.id.startswith("panel("):
                assert spec.description in text
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_number_keys_switch_panels() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for n, scope in enumerate(PANEL_IDS, 1):
            await pilot.press(str(n))
            assert app.current_scope() == scope


async def test_palette_runs_actions_in_their_panel() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")  # in flight: requeue does not apply here; its home is failures
        names = {name for name, _, _ in ActionCommands(app.screen)._entries()}
        drilldown_only = {"jobs", "job"}
        for spec in actions.ACTIONS:
            if spec.id in ("leave", "engine") or (spec.scopes and spec.scopes <= drilldown_only):
                continue
            label = (
                f"Panel: {spec.description}" if spec.id.startswith("panel(") else spec.description
            )
            assert label in names, label
        await app.run_from_palette(actions.BY_ID["requeue"])
        await until(pilot, lambda: isinstance(app.screen, RequeueJobsScreen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert app.current_scope() == "" and "in group" in app.screen.question  # type: ignore[attr-defined]
        await pilot.press("escape")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, GroupJobsScreen))
        names = {name for name, _, _ in ActionCommands(app.screen)._entries()}
        assert {"Requeue shown", "Requeue", "Open", "Filter"} <= names
