"""The console's keys, help, filter, palette and read-only mode on fixed data (no database):
what is tested here is the console itself. What the database does when the console acts
is tested on a real one (test_console.py, test_actions.py)."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets.data_table import ColumnKey

from skconsole.tui import actions, opening
from skconsole.tui.app import ConsoleApp
from skconsole.tui.commands import ActionCommands
from skconsole.tui.panels import PANEL_IDS
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.help import HelpScreen, help_rows, help_text
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.main import MainScreen
from skconsole.tui.screens.requeue_jobs import RequeueJobsScreen
from skconsole.tui.screens.search import SearchScreen
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import (
    GROUPS,
    PARENT_JOB,
    STAGE_JOB,
    FrozenClock,
    fixed_snapshot,
)
from skconsole.tui.showcase.scenes import settle
from skconsole.tui.widgets.failures_panel import FailuresPanel
from tests.tui.conftest import SIZE, until
from tests.tui.test_hostile_text import drawn_lines

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
                await pilot.pause()
                assert not app.operator.busy
                assert not isinstance(app.screen, ConfirmScreen)
        assert app.status_state().read_only
        await pilot.press("3", "enter")  # drill-down still works
        await until(pilot, lambda: isinstance(app.screen, GroupJobsScreen))
        await pilot.press("R", "A", "X", "B")
        await pilot.pause()
        assert not app.operator.busy
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
        text = help_text(actions.ACTIONS, read_only=False)
        for spec in actions.ACTIONS:  # with one queue there is no overview (o) to list
            if not spec.id.startswith("panel(") and not spec.needs_queues:
                assert spec.description in text
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_help_at_120_columns_wraps_within_its_columns_never_into_the_key_column() -> None:
    app = fixed_app()
    keys = {row[0] for row in help_rows(actions.ACTIONS, read_only=False)} | {"key"}
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        body = app.screen.query_one("#help-body")
        lines = drawn_lines(app)[body.region.y : body.region.bottom]
        left = body.content_region.x
        firsts = [line[left : left + 10].split() for line in lines]
    assert len(firsts) > 10
    assert all(not words or words[0] in keys for words in firsts), firsts


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
        drilldown_only = {"jobs", "job", "charts"}
        for spec in actions.ACTIONS:
            if (
                spec.id in ("leave", "engine", "queues")
                or spec.needs_past
                or (spec.scopes and spec.scopes <= drilldown_only)
            ):
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


async def test_the_palette_shows_and_confirms_the_type_it_would_pause() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3")  # the failures panel: the depth panel's cursor is not in view
        await app.run_from_palette(actions.BY_ID["pause_type"])
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert app.main_screen.panel("depth").table.has_focus  # its selection is in view
        selected = app.main_screen.panel("depth").table.selected_key
        assert app.screen.question.startswith(f"Pause type `{selected}`?")  # type: ignore[attr-defined]
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
    assert app.source.executed == []  # type: ignore[attr-defined]


# -- Enter opens what the selected row stands for ------------------------------------------------
async def _enter_on(pilot: Pilot[int], app: ConsoleApp, panel: str, key: str | None = None) -> None:
    await pilot.press(str(PANEL_IDS.index(panel) + 1))
    if key is not None:
        assert app.main_screen.panel(panel).table.select_key(key)
    await pilot.press("enter")


@pytest.mark.parametrize(
    ("panel", "key", "line"),
    [
        ("depth", "payments.charge", "type=payments.charge status=1 status=4 status=5"),
        ("exec", "emails.send", "type=emails.send"),
        ("schedules", "invoices.import", "type=invoices.import"),
        ("audit", "11", "type=thumbnails.render"),
    ],
    ids=["a type: its waiting jobs", "a type's times: its jobs", "a schedule", "an audit row"],
)
async def test_enter_on_a_row_searches_the_jobs_it_stands_for(
    panel: str, key: str, line: str
) -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _enter_on(pilot, app, panel, key)
        await until(pilot, lambda: isinstance(app.screen, SearchScreen))
        assert app.screen.line == line  # type: ignore[attr-defined]


async def test_enter_on_a_running_job_opens_its_detail() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        selected = app.main_screen.panel("inflight").table.selected_key
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobDetailScreen))
        assert app.screen.task_id == selected  # type: ignore[attr-defined]


async def test_enter_on_a_worker_shows_the_jobs_it_runs() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        worker = next(w for w in fixed_snapshot().workers if w.host == "web-1")
        await _enter_on(pilot, app, "workers", str(worker.worker_id))
        await until(pilot, lambda: app.current_scope() == "inflight")
        table = app.main_screen.panel("inflight").table
        assert table.filter_text == "web-1 pid 2200"
        theirs = {str(j.task_id) for j in fixed_snapshot().inflight if j.worker_host == "web-1"}
        assert theirs and set(table.visible_keys) == theirs


async def test_d_on_a_job_opens_the_job_it_posted() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.navigator.open(opening.job(PARENT_JOB))
        await until(pilot, lambda: isinstance(app.screen, JobDetailScreen) and app.screen.detail)
        await pilot.press("d")
        await until(pilot, lambda: getattr(app.screen, "task_id", None) == STAGE_JOB)


# -- space marks jobs, the job keys act on the marked ones ------------------------------------
async def _group_jobs(pilot: Pilot[int], app: ConsoleApp) -> GroupJobsScreen:
    await pilot.press("3", "enter")
    await until(pilot, lambda: isinstance(app.screen, GroupJobsScreen) and app.screen.jobs)
    assert isinstance(app.screen, GroupJobsScreen)
    return app.screen


async def test_space_marks_jobs_and_requeue_confirms_exactly_the_marked_ones() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await _group_jobs(pilot, app)
        table = screen.body.table
        first = table.selected_key
        await pilot.press("space", "down", "space")  # space moves down: the 1st and 3rd rows
        marked = table.marked_keys
        assert len(marked) == 2 and marked[0] == first
        assert "2 marked" in str(screen.body.border_title)
        await pilot.pause()
        # the mark widens the id column: a marked job's short id stays whole
        assert table.columns[ColumnKey("job")].width >= len(table.MARK) + 8
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, RequeueJobsScreen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.question.startswith("Requeue the 2 marked jobs, error counts kept?")  # type: ignore[attr-defined]
        await pilot.press("y")
        await until(pilot, lambda: bool(app.source.executed))  # type: ignore[attr-defined]
        await until(pilot, lambda: not table.marked)
    (preview,) = app.source.executed  # type: ignore[attr-defined]
    assert preview.request.target.ids == tuple(marked)


async def test_esc_clears_the_marks_before_it_leaves_the_list() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await _group_jobs(pilot, app)
        await pilot.press("space")
        await pilot.press("escape")
        assert app.screen is screen and not screen.body.table.marked
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_home_end_j_k_g_and_shift_g_move_the_cursor_of_a_table() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("1")
        table = app.main_screen.panel("depth").table
        last = table.row_count - 1
        for key, row in (("end", last), ("home", 0), ("j", 1), ("j", 2), ("k", 1), ("G", last)):
            await pilot.press(key)
            assert table.cursor_row == row, key
        await pilot.press("g")
        assert table.cursor_row == 0
