"""The console's confirmation of an action that moves jobs says what follows from it at
the present flow (read with the preview, off the UI thread), through a real database."""

from __future__ import annotations

from textual.widgets import Static

from skconsole.db.connect import Database
from skconsole.tui.screens.confirm import ConfirmScreen
from tests.tui.conftest import (
    TIMEOUT_SIGNATURE_PREFIX,
    Conn,
    MakeApp,
    console_on_type,
    loaded_console,
    post_waiting,
    until,
)
from tests.tui.test_actions import _confirming, _select_group


def add_completions(conn: Conn, task_type: str, n: int) -> None:
    """``n`` jobs of ``task_type`` that succeeded 10 s ago, posted before the window."""
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_posted_at_ts, task_processing_finalized_at_ts)"
        " SELECT gen_random_uuid(), %(t)s, 'test', 'null', 3, 0,"
        " now() - interval '1 hour', now() - interval '10 seconds'"
        " FROM generate_series(1, %(n)s)",
        {"t": task_type, "n": n},
    )


def add_ready(conn: Conn, task_type: str, n: int) -> None:
    """``n`` jobs of ``task_type`` ready for a second (queue rows only: no arrivals)."""
    conn.execute(
        "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,"
        " task_priority, task_posted_at_ts, task_locked_until_ts)"
        " SELECT gen_random_uuid(), %(t)s, 'test', 'null', 0,"
        " now() - interval '1 second', now() - interval '1 second'"
        " FROM generate_series(1, %(n)s)",
        {"t": task_type, "n": n},
    )


def shown_forecast(dialog: ConfirmScreen) -> str:
    return str(dialog.query_one("#confirm-forecast", Static).render())


async def test_the_requeue_confirmation_shows_when_the_backlog_clears(
    seeded: Database, make_app: MakeApp, conn: Conn
) -> None:
    add_completions(conn, "tui.timeout", 300)  # 1/s over the 5-minute window
    add_ready(conn, "tui.timeout", 20)  # the workers are busy: a backlog stands
    async with loaded_console(make_app()) as (app, pilot):
        _select_group(app, TIMEOUT_SIGNATURE_PREFIX)
        dialog = await _confirming(pilot, app, "R")
        await until(pilot, lambda: bool(dialog.query("#confirm-forecast")))
        # 20 ready and 6 requeued at 300 done less the 6 posted, over 300 s: ~27 s, ±6 %
        assert dialog.forecast.startswith(
            "6 jobs: the backlog clears in ~25 s at the present rate (±5 % at this volume)"
        )
        assert shown_forecast(dialog) == f"Forecast: {dialog.forecast}"
        await pilot.press("n")


async def test_the_bump_confirmation_says_when_the_jobs_moved_ahead_are_done(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    add_completions(conn, "tui.ok", 150)  # 0.5/s
    post_waiting(db, 4)
    async with console_on_type(make_app()) as (app, pilot):
        await pilot.press("B")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.forecast == "4 jobs: if they run first, the 4 are done in ~8 s"
        await pilot.press("n")


async def test_a_type_with_no_completion_says_there_is_no_forecast(
    seeded: Database, make_app: MakeApp
) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        _select_group(app, TIMEOUT_SIGNATURE_PREFIX)
        dialog = await _confirming(pilot, app, "R")
        assert dialog.forecast == "6 jobs: no recent completions: no forecast"
        await pilot.press("n")
