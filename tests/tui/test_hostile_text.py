"""Hostile text from upstream systems never reaches the terminal raw from the console.

The same data as ``tests/db/test_hostile_text.py`` (ESC sequences, an 8-bit
CSI, a bidi override in task types, errors, hosts, metric ids, the audit
log), shown by the real console on the test database. What the console draws
is exactly the text of the segments its compositor hands to the terminal;
these tests read those segments, screen by screen.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual._compositor import LayoutUpdate
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import TextArea

from skconsole.tui.app import ConsoleApp
from skconsole.tui.panels import PANEL_IDS
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.edit_confirm import EditConfirmScreen
from skconsole.tui.screens.edit_job import EditJobScreen
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.requeue_jobs import RequeueJobsScreen
from skconsole.tui.screens.search import SearchScreen
from skconsole.tui.widgets.failures_panel import FailuresPanel
from skconsole.tui.widgets.inflight_panel import InflightPanel
from skconsole.tui.widgets.job_view import JobView
from skconsole.tui.widgets.jobs_panel import JobsPanel
from skconsole.tui.widgets.schedules_panel import SchedulesPanel
from tests.db.test_hostile_text import RAW_CONTROL, TASK_TYPE, seed_hostile_text
from tests.tui.conftest import (
    Conn,
    MakeApp,
    loaded_console,
    search_for,
    shown_screen,
    toast_shown,
    until,
)


@pytest.fixture
def hostile(conn: Conn, make_app: MakeApp) -> MakeApp:
    """``make_app`` on the test database seeded with the hostile text."""
    seed_hostile_text(conn)
    return make_app


def drawn_lines(app: ConsoleApp) -> list[str]:
    """Line by line, the text of every segment the console would write to the
    terminal now (the screens below a dialog included), styles and cursor moves aside."""
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    assert isinstance(update, LayoutUpdate)
    return [
        "".join(segment.text for strip in line for segment in strip if not segment.control)
        for line in update.strips
    ]


def assert_nothing_raw(app: ConsoleApp, where: str, widget: Widget | None = None) -> str:
    """The drawn text (of ``widget``'s rows only, if given), checked for raw controls."""
    lines = drawn_lines(app)
    if widget is not None:
        lines = lines[widget.region.y : widget.region.bottom]
    text = "\n".join(lines)
    raw = RAW_CONTROL.search(text)
    assert raw is None, f"{where}: raw {raw.group()!r} drawn:\n{text}"
    return text


async def _show_panel(pilot: Pilot[Any], key: str) -> ConsoleApp:
    app = pilot.app
    assert isinstance(app, ConsoleApp)
    await pilot.press(key)
    await until(pilot, lambda: app.current_scope() == PANEL_IDS[int(key) - 1])
    return app


async def _panel_drawn(pilot: Pilot[Any], key: str, panel_type: type[Widget]) -> str:
    """Panel ``key`` shown, the text its rows draw, checked for raw controls."""
    app = await _show_panel(pilot, key)
    return assert_nothing_raw(app, f"panel {key}", app.main_screen.query_one(panel_type))


async def test_every_panel_draws_control_characters_as_visible_escapes(hostile: MakeApp) -> None:
    async with loaded_console(hostile()) as (app, pilot):
        seen = ""
        for key in "12345678":
            await _show_panel(pilot, key)
            seen += assert_nothing_raw(app, f"panel {key}")
    for shown in ("t.\\x1b[31mevil\\u202e", "host-\\x1b]0;pwned", "worker@\\x1b[31mcount"):
        assert shown in seen, shown


async def test_the_schedules_panel_draws_types_and_definitions_with_visible_escapes(
    hostile: MakeApp,
) -> None:
    async with loaded_console(hostile(), size=(160, 50)) as (_app, pilot):
        text = await _panel_drawn(pilot, "8", SchedulesPanel)
    assert "t.\\x1b[31mevil\\u202e" in text  # a task type
    assert "cron 0 3 * * *\\x1b]0;pwned\\x07 (Europe/\\u202eParis)" in text  # as stored


async def test_the_inflight_panel_draws_a_progress_message_with_visible_escapes(
    hostile: MakeApp,
) -> None:
    async with loaded_console(hostile(), size=(200, 50)) as (_app, pilot):
        text = await _panel_drawn(pilot, "2", InflightPanel)
    assert "50% rows\\x1b[31mcopied\\u202e" in text


async def _drawn_after(
    pilot: Pilot[Any], key: str, screen_type: type[Screen[Any]], where: str
) -> str:
    """``key`` pressed and the ``screen_type`` it opens shown: the drawn text, checked."""
    await pilot.press(key)
    await shown_screen(pilot, screen_type)
    app = pilot.app
    assert isinstance(app, ConsoleApp)
    return assert_nothing_raw(app, where)


async def _select_group(pilot: Pilot[Any], app: ConsoleApp) -> None:
    """Panel 3 shown, the failure group of two jobs selected."""
    panel = app.main_screen.query_one(FailuresPanel)
    assert app.snapshot is not None
    key = next(g.signature for g in app.snapshot.failures if g.count == 2)
    await pilot.press("3")
    panel.table.select_key(key)


async def _open_group(pilot: Pilot[Any], app: ConsoleApp) -> GroupJobsScreen:
    await _select_group(pilot, app)
    await pilot.press("enter")
    return await shown_screen(pilot, GroupJobsScreen, lambda s: s.jobs is not None)


async def _open_job(pilot: Pilot[Any], app: ConsoleApp) -> JobDetailScreen:
    await _open_group(pilot, app)
    await pilot.press("enter")
    return await shown_screen(pilot, JobDetailScreen, lambda s: s.detail is not None)


async def test_the_group_jobs_table_draws_control_characters_as_visible_escapes(
    hostile: MakeApp,
) -> None:
    async with loaded_console(hostile()) as (app, pilot):
        screen = await _open_group(pilot, app)
        text = assert_nothing_raw(app, "group jobs", screen.query_one(JobsPanel))
    assert "t.\\x1b[31mevil" in text


async def test_the_job_detail_shows_the_full_error_and_payload_with_visible_escapes(
    hostile: MakeApp,
) -> None:
    async with loaded_console(hostile(), size=(160, 60)) as (app, pilot):
        screen = await _open_job(pilot, app)
        text = assert_nothing_raw(app, "job detail", screen.query_one(JobView))
    assert "Traceback (most recent call last):" in text  # the error keeps its lines
    assert "RuntimeError: boom \\x1b[31mred\\x1b]0;pwned\\x07\\x9b31mc1\\u202eexe.txt" in text
    assert "src\\x1b[31m" in text  # a field
    assert '{"note": "\\x1b[31mred' in text  # the payload (not JSON: shown as it is)


async def test_the_job_detail_shows_its_lineage_with_visible_escapes(hostile: MakeApp) -> None:
    async with loaded_console(hostile(), size=(160, 60)) as (app, pilot):
        screen = await _open_job(pilot, app)
        text = assert_nothing_raw(app, "job detail", screen.query_one(JobView))
    assert "stage 2 of check\\x1b[31mout\\u202e, after job " in text


async def test_the_whole_group_jobs_screen_draws_nothing_raw(hostile: MakeApp) -> None:
    async with loaded_console(hostile()) as (app, pilot):
        await _open_group(pilot, app)
        assert_nothing_raw(app, "group jobs screen")


async def test_the_whole_job_detail_screen_draws_nothing_raw(hostile: MakeApp) -> None:
    async with loaded_console(hostile(), size=(160, 60)) as (app, pilot):
        await _open_job(pilot, app)
        assert_nothing_raw(app, "job detail screen")


async def test_a_confirmation_names_the_group_with_visible_escapes(hostile: MakeApp) -> None:
    async with loaded_console(hostile(), size=(160, 50)) as (app, pilot):
        await _select_group(pilot, app)
        await _drawn_after(pilot, "R", RequeueJobsScreen, "requeue dialog")
        text = await _drawn_after(pilot, "enter", ConfirmScreen, "confirmation")
        await pilot.press("n")
    assert "\\x1b[<n>mred" in text


async def test_the_notification_after_pausing_a_type_draws_nothing_raw(hostile: MakeApp) -> None:
    async with loaded_console(hostile(), size=(160, 50), notifications=True) as (app, pilot):
        await pilot.press("1")
        app.main_screen.panel("depth").table.select_key(TASK_TYPE)
        await _drawn_after(pilot, "P", ConfirmScreen, "pause confirmation")
        await pilot.press("y")
        await until(pilot, lambda: any(n.title == "Done" for n in app._notifications))
        await until(pilot, lambda: toast_shown(app))
        assert_nothing_raw(app, "pause notification")


async def test_the_payload_editor_and_its_diff_draw_nothing_raw(hostile: MakeApp) -> None:
    async with loaded_console(hostile(), size=(160, 60)) as (app, pilot):
        await _open_job(pilot, app)
        editor_text = await _drawn_after(pilot, "E", EditJobScreen, "payload editor")
        app.screen.query_one(TextArea).text = '{"note": "\\u001b[31mred\\u009b31m\\u202e"}'
        diff_text = await _drawn_after(pilot, "ctrl+s", EditConfirmScreen, "edit confirmation")
        await pilot.press("n")
    assert '{"note": "\\x1b[31mred' in editor_text  # not JSON: shown as it is, escaped
    assert '+  "note": "\\u001b[31mred\\u009b31m\\u202e"' in diff_text


async def test_the_search_screen_draws_hostile_types_payloads_and_errors_escaped(
    hostile: MakeApp,
) -> None:
    async with loaded_console(hostile()) as (app, pilot):
        await search_for(pilot, app, "status=5")
        await until(pilot, lambda: isinstance(app.screen, SearchScreen) and bool(app.screen.found))
        text = assert_nothing_raw(app, "search results")
        assert "evil" in text
