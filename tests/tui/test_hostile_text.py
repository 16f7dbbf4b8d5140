"""Hostile text from upstream systems never reaches the terminal raw from the console.

The same data as ``tests/db/test_hostile_text.py`` (ESC sequences, an 8-bit
CSI, a bidi override in task types, errors, hosts, metric ids, the audit
log), shown by the real console on the test database. What the console draws
is exactly the text of the segments its compositor hands to the terminal;
these tests read those segments, screen by screen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from textual._compositor import LayoutUpdate
from textual.pilot import Pilot
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
from tests.tui.conftest import SIZE, loaded, toast_shown, until

MakeApp = Callable[..., ConsoleApp]
Conn = psycopg.Connection[Any]


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


async def _show_panel(pilot: Pilot[Any], key: str) -> None:
    app = pilot.app
    assert isinstance(app, ConsoleApp)
    await pilot.press(key)
    await until(pilot, lambda: app.current_scope() == PANEL_IDS[int(key) - 1])


async def test_every_panel_draws_control_characters_as_visible_escapes(
    conn: Conn, make_app: MakeApp
) -> None:
    seed_hostile_text(conn)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        seen = ""
        for key in "12345678":
            await _show_panel(pilot, key)
            seen += assert_nothing_raw(app, f"panel {key}")
    for shown in ("t.\\x1b[31mevil\\u202e", "host-\\x1b]0;pwned", "worker@\\x1b[31mcount"):
        assert shown in seen, shown


async def test_the_schedules_panel_draws_types_and_definitions_with_visible_escapes(
    conn: Conn, make_app: MakeApp
) -> None:
    seed_hostile_text(conn)
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot)
        await _show_panel(pilot, "8")
        panel = app.main_screen.query_one(SchedulesPanel)
        text = assert_nothing_raw(app, "schedules panel", panel)
    assert "t.\\x1b[31mevil\\u202e" in text  # a task type
    assert "cron 0 3 * * *\\x1b]0;pwned\\x07 (Europe/\\u202eParis)" in text  # as stored


async def test_the_inflight_panel_draws_a_progress_message_with_visible_escapes(
    conn: Conn, make_app: MakeApp
) -> None:
    seed_hostile_text(conn)
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await loaded(pilot)
        await _show_panel(pilot, "2")
        panel = app.main_screen.query_one(InflightPanel)
        text = assert_nothing_raw(app, "in-flight panel", panel)
    assert "50% rows\\x1b[31mcopied\\u202e" in text


async def _open_group(pilot: Pilot[Any], app: ConsoleApp) -> GroupJobsScreen:
    panel = app.main_screen.query_one(FailuresPanel)
    assert app.snapshot is not None
    key = next(g.signature for g in app.snapshot.failures if g.count == 2)
    await pilot.press("3")
    panel.table.select_key(key)
    await pilot.press("enter")
    await until(
        pilot, lambda: isinstance(app.screen, GroupJobsScreen) and app.screen.jobs is not None
    )
    assert isinstance(app.screen, GroupJobsScreen)
    return app.screen


async def _open_job(pilot: Pilot[Any], app: ConsoleApp) -> JobDetailScreen:
    await _open_group(pilot, app)
    await pilot.press("enter")
    await until(
        pilot, lambda: isinstance(app.screen, JobDetailScreen) and app.screen.detail is not None
    )
    assert isinstance(app.screen, JobDetailScreen)
    return app.screen


async def test_the_group_jobs_table_draws_control_characters_as_visible_escapes(
    conn: Conn, make_app: MakeApp
) -> None:
    seed_hostile_text(conn)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        screen = await _open_group(pilot, app)
        text = assert_nothing_raw(app, "group jobs", screen.query_one(JobsPanel))
    assert "t.\\x1b[31mevil" in text


async def test_the_job_detail_shows_the_full_error_and_payload_with_visible_escapes(
    conn: Conn, make_app: MakeApp
) -> None:
    seed_hostile_text(conn)
    app = make_app()
    async with app.run_test(size=(160, 60)) as pilot:
        await loaded(pilot)
        screen = await _open_job(pilot, app)
        text = assert_nothing_raw(app, "job detail", screen.query_one(JobView))
    assert "Traceback (most recent call last):" in text  # the error keeps its lines
    assert "RuntimeError: boom \\x1b[31mred\\x1b]0;pwned\\x07\\x9b31mc1\\u202eexe.txt" in text
    assert "src\\x1b[31m" in text  # a field
    assert '{"note": "\\x1b[31mred' in text  # the payload (not JSON: shown as it is)


async def test_the_job_detail_shows_its_lineage_with_visible_escapes(
    conn: Conn, make_app: MakeApp
) -> None:
    seed_hostile_text(conn)
    app = make_app()
    async with app.run_test(size=(160, 60)) as pilot:
        await loaded(pilot)
        screen = await _open_job(pilot, app)
        text = assert_nothing_raw(app, "job detail", screen.query_one(JobView))
    assert "stage 2 of check\\x1b[31mout\\u202e, after job " in text


async def test_the_whole_group_jobs_screen_draws_nothing_raw(conn: Conn, make_app: MakeApp) -> None:
    seed_hostile_text(conn)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await _open_group(pilot, app)
        assert_nothing_raw(app, "group jobs screen")


async def test_the_whole_job_detail_screen_draws_nothing_raw(conn: Conn, make_app: MakeApp) -> None:
    seed_hostile_text(conn)
    app = make_app()
    async with app.run_test(size=(160, 60)) as pilot:
        await loaded(pilot)
        await _open_job(pilot, app)
        assert_nothing_raw(app, "job detail screen")


async def test_a_confirmation_names_the_group_with_visible_escapes(
    conn: Conn, make_app: MakeApp
) -> None:
    seed_hostile_text(conn)
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot)
        panel = app.main_screen.query_one(FailuresPanel)
        assert app.snapshot is not None
        key = next(g.signature for g in app.snapshot.failures if g.count == 2)
        await pilot.press("3")
        panel.table.select_key(key)
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, RequeueJobsScreen))
        assert_nothing_raw(app, "requeue dialog")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        text = assert_nothing_raw(app, "confirmation")
        await pilot.press("n")
    assert "\\x1b[<n>mred" in text


async def test_the_notification_after_pausing_a_type_draws_nothing_raw(
    conn: Conn, make_app: MakeApp
) -> None:
    seed_hostile_text(conn)
    app = make_app()
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await loaded(pilot)
        await pilot.press("1")
        app.main_screen.panel("depth").table.select_key(TASK_TYPE)
        await pilot.press("P")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert_nothing_raw(app, "pause confirmation")
        await pilot.press("y")
        await until(pilot, lambda: any(n.title == "Done" for n in app._notifications))
        await until(pilot, lambda: toast_shown(app))
        assert_nothing_raw(app, "pause notification")


async def test_the_payload_editor_and_its_diff_draw_nothing_raw(
    conn: Conn, make_app: MakeApp
) -> None:
    seed_hostile_text(conn)
    app = make_app()
    async with app.run_test(size=(160, 60)) as pilot:
        await loaded(pilot)
        await _open_job(pilot, app)
        await pilot.press("E")
        await until(pilot, lambda: isinstance(app.screen, EditJobScreen))
        editor_text = assert_nothing_raw(app, "payload editor")
        app.screen.query_one(TextArea).text = '{"note": "\\u001b[31mred\\u009b31m\\u202e"}'
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, EditConfirmScreen))
        diff_text = assert_nothing_raw(app, "edit confirmation")
        await pilot.press("n")
    assert '{"note": "\\x1b[31mred' in editor_text  # not JSON: shown as it is, escaped
    assert '+  "note": "\\u001b[31mred\\u009b31m\\u202e"' in diff_text


async def test_the_search_screen_draws_hostile_types_payloads_and_errors_escaped(
    conn: Conn, make_app: MakeApp
) -> None:
    seed_hostile_text(conn)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, SearchScreen))
        await pilot.press(*"status=5", "enter")
        await until(pilot, lambda: isinstance(app.screen, SearchScreen) and bool(app.screen.found))
        text = assert_nothing_raw(app, "search results")
        assert "evil" in text
