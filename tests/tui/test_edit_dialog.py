"""The job editor (E on a job's detail) on an on-call laptop's 80x24 terminal: every
control reachable, Tab leaving the editor, ctrl+s saving from anywhere, one dialog at a
time (issue 40). On the fixed source: the layout is what is tested, not the database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, TextArea

from skconsole.tui import asks
from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.edit_confirm import EditConfirmScreen
from skconsole.tui.screens.edit_job import EditJobScreen, PayloadEditor
from skconsole.tui.showcase.scenes import BY_NAME, settle
from tests.tui.conftest import shown_screen
from tests.tui.test_small_terminal import SMALL, drawn_lines


@asynccontextmanager
async def editor_at(
    size: tuple[int, int] = SMALL,
) -> AsyncIterator[tuple[ConsoleApp, Pilot[Any], EditJobScreen]]:
    """The fixed console at ``size`` with a Faulted job's editor open (scene edit-job)."""
    scene = BY_NAME["edit-job"]
    app = scene.build()
    async with app.run_test(size=size) as pilot:
        await scene.prepare(pilot)
        editor = await shown_screen(pilot, EditJobScreen)
        yield app, pilot, editor


def on_screen(app: ConsoleApp, widget: Widget) -> bool:
    """The whole of ``widget`` is drawn: inside the terminal and not scrolled out of its
    dialog."""
    region = widget.region
    return (
        region.height > 0
        and app.screen.region.contains_region(region)
        and widget.parent is not None
        and all(
            ancestor.region.contains_region(region)
            for ancestor in widget.ancestors
            if isinstance(ancestor, Widget) and ancestor is not app.screen
        )
    )


async def focus_by_tab(pilot: Pilot[Any], editor: EditJobScreen, target: Widget) -> None:
    for _ in range(8):
        if editor.focused is target:
            return
        await pilot.press("tab")
        await settle(pilot)
    raise AssertionError(f"tab never reached {target}")


async def test_at_80x24_the_dialog_fits_the_terminal_with_its_buttons_and_hint_shown() -> None:
    async with editor_at() as (app, _pilot, editor):
        dialog = editor.query_one("#edit-job")
        text = "\n".join(drawn_lines(app))

        assert dialog.region.bottom <= SMALL[1]
        assert on_screen(app, editor.query_one("#save", Button))
        assert on_screen(app, editor.query_one("#cancel", Button))
        assert "ctrl+s saves" in text
        assert editor.query_one(TextArea).region.height <= SMALL[1] // 2


@pytest.mark.parametrize("control", ["#edit-priority", "#edit-requeue", "#cancel", "#save"])
async def test_at_80x24_tab_reaches_every_control_and_shows_it(control: str) -> None:
    async with editor_at() as (app, pilot, editor):
        widget = editor.query_one(control)
        await focus_by_tab(pilot, editor, widget)

        assert on_screen(app, widget)


async def test_tab_in_the_payload_editor_moves_to_the_priority_and_types_no_spaces() -> None:
    async with editor_at() as (_app, pilot, editor):
        before = editor.query_one(TextArea).text
        await pilot.press("tab")
        await settle(pilot)

        assert editor.focused is editor.query_one("#edit-priority", Input)
        assert editor.query_one(TextArea).text == before


@pytest.mark.parametrize("control", ["#edit-payload", "#edit-priority", "#edit-requeue", "#cancel"])
async def test_ctrl_s_saves_from_anywhere_in_the_dialog(control: str) -> None:
    async with editor_at() as (_app, pilot, editor):
        editor.query_one("#edit-priority", Input).value = "0"
        await settle(pilot)
        await focus_by_tab(pilot, editor, editor.query_one(control))
        await pilot.press("ctrl+s")

        await shown_screen(pilot, EditConfirmScreen)


@pytest.mark.parametrize("control", ["#edit-requeue", "#cancel", "#save"])
async def test_a_second_e_while_the_editor_is_open_opens_no_second_editor(control: str) -> None:
    async with editor_at() as (app, pilot, editor):
        await focus_by_tab(pilot, editor, editor.query_one(control))
        app.operator._last_press.clear()  # not a quick repeat: a second E later on
        await pilot.press("E")
        await settle(pilot)

        assert [s for s in app.screen_stack if isinstance(s, EditJobScreen)] == [editor]
        assert app.screen is editor


async def test_e_pressed_twice_opens_one_editor_and_types_nothing_into_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the second press comes within the guard however slowly a loaded machine runs
    monkeypatch.setattr(asks, "REPEAT_GUARD_S", 60.0)
    scene = BY_NAME["job-detail"]
    app = scene.build()
    async with app.run_test(size=SMALL) as pilot:
        await scene.prepare(pilot)
        await pilot.press("E", "E")
        editor = await shown_screen(pilot, EditJobScreen)

        assert [s for s in app.screen_stack if isinstance(s, EditJobScreen)] == [editor]
        assert editor.query_one(TextArea).text == editor.original


async def test_other_keys_typed_as_the_editor_opens_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(asks, "REPEAT_GUARD_S", 60.0)  # every key below comes within it
    scene = BY_NAME["job-detail"]
    app = scene.build()
    async with app.run_test(size=SMALL) as pilot:
        await scene.prepare(pilot)
        await pilot.press("E")
        editor = await shown_screen(pilot, EditJobScreen)
        editor.query_one(TextArea).text = ""
        await pilot.press("E", "{", "}")
        await settle(pilot)

        assert editor.query_one(TextArea).text == "{}"


async def test_e_typed_in_the_payload_editor_later_is_text_not_a_second_editor() -> None:
    async with editor_at() as (app, pilot, editor):
        app.operator._last_press.clear()
        editor.query_one(PayloadEditor).open_until = 0.0  # the dialog opened a while ago
        await pilot.press("E")
        await settle(pilot)

        assert app.screen is editor
        assert editor.query_one(TextArea).text.startswith("E")
        assert not editor.query_one("#edit-requeue", Checkbox).has_focus
