"""With several queues open, an operator action's confirmation and every notice after it
(done, cancelled, nothing to do) say which queue it acts on: a task type may be in more
than one (issue 40). With one queue they read as before. On the fixed sources."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from textual.pilot import Pilot

from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.showcase.scenes import BY_NAME, settle
from tests.tui.conftest import SIZE, notices, record_notices, shown_screen, until

#: the queue the scene queues-shown opens (the first of FIXED_QUEUES)
SHOWN = "payments"


@asynccontextmanager
async def console(scene: str) -> AsyncIterator[tuple[ConsoleApp, Pilot[Any], list[str]]]:
    """The fixed console of ``scene`` running, with every notice it gives from then on."""
    app = BY_NAME[scene].build()
    async with app.run_test(size=SIZE) as pilot:
        await BY_NAME[scene].prepare(pilot)
        said = record_notices(app)
        yield app, pilot, said


async def pause_confirmation(pilot: Pilot[Any]) -> ConfirmScreen:
    """The first task type of panel 1 selected, P pressed: its confirmation."""
    await pilot.press("1")
    await settle(pilot)
    await pilot.press("P")
    return await shown_screen(pilot, ConfirmScreen)


async def test_with_several_queues_the_confirmation_names_the_queue_shown() -> None:
    async with console("queues-shown") as (_app, pilot, _said):
        dialog = await pause_confirmation(pilot)

    assert dialog.question.startswith(f"Queue `{SHOWN}`: Pause type `")


async def test_with_several_queues_the_outcome_names_the_queue() -> None:
    async with console("queues-shown") as (_app, pilot, said):
        await pause_confirmation(pilot)
        await pilot.press("y")
        await until(pilot, lambda: any("Paused type" in m for m in said))

    assert next(m for m in said if "Paused" in m).startswith(f"Queue `{SHOWN}`: Paused type")


async def test_with_several_queues_a_cancelled_action_names_the_queue() -> None:
    async with console("queues-shown") as (app, pilot, said):
        await pause_confirmation(pilot)
        await pilot.press("n")
        await until(pilot, lambda: bool(said))

    assert said == [f"Queue `{SHOWN}`: Nothing was changed."], notices(app)


async def test_with_one_queue_the_confirmation_and_the_outcome_name_no_queue() -> None:
    async with console("main") as (_app, pilot, said):
        dialog = await pause_confirmation(pilot)
        question = dialog.question
        await pilot.press("y")
        await until(pilot, lambda: any("Paused type" in m for m in said))

    assert question.startswith("Pause type `")
    assert not any("Queue `" in m for m in said)
