"""The job detail's why key (w) and the run-now key (N), on the test database; hostile
text in the causes is drawn safely."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from uuid import UUID

from textual.pilot import Pilot
from textual.widgets import Static

from skconsole.read import Cause, CauseCode, Fix
from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.why_job import WhyScreen
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import STAGE_JOB
from tests.db.test_hostile_text import TASK_TYPE
from tests.db.test_ops import add_job
from tests.tui.conftest import SIZE, Conn, MakeApp, due_now, loaded_console, until
from tests.tui.test_hostile_text import assert_nothing_raw
from tests.tui.test_schedules_and_lineage import open_failed_job


def why_shown(app: ConsoleApp) -> str:
    assert isinstance(app.screen, WhyScreen)
    return str(app.screen.query_one("#why-body", Static).render())


@asynccontextmanager
async def _a_retry_open(
    conn: Conn, make_app: MakeApp
) -> AsyncIterator[tuple[Pilot[Any], ConsoleApp, UUID]]:
    """A console showing the detail of a retry waiting out its back-off."""
    job = add_job(conn, 4, ready=False)
    async with loaded_console(make_app()) as (app, pilot):
        await open_failed_job(pilot, app)
        yield pilot, app, job


async def test_the_why_key_shows_the_causes_of_a_retry_waiting_out_its_back_off(
    conn: Conn, make_app: MakeApp
) -> None:
    async with _a_retry_open(conn, make_app) as (pilot, app, job):
        await pilot.press("w")
        await until(
            pilot, lambda: isinstance(app.screen, WhyScreen) and app.screen.found is not None
        )
        text = why_shown(app)
        await pilot.press("escape")
        assert isinstance(app.screen, JobDetailScreen)
    assert "2. not_due: not due for" in text  # after 1. no_worker: none runs here
    assert "a retry waiting out its back-off after 1 failed attempt(s)" in text
    assert f"fix: skconsole bump --now --id {job} / key N (depth panel)" in text


async def test_the_why_key_names_the_jobs_a_retry_will_be_behind_once_due(
    conn: Conn, make_app: MakeApp
) -> None:
    for _ in range(2):
        add_job(conn, 1, priority=0)
    async with _a_retry_open(conn, make_app) as (pilot, app, _job):
        await pilot.press("w")
        await until(
            pilot, lambda: isinstance(app.screen, WhyScreen) and app.screen.found is not None
        )
        text = why_shown(app)
    assert "2. not_due: not due for" in text
    assert "3. behind: once due: 2 due job(s) of its type are ahead of it" in text


async def test_the_run_now_key_makes_the_job_due_after_confirmation(
    conn: Conn, make_app: MakeApp
) -> None:
    async with _a_retry_open(conn, make_app) as (pilot, app, job):
        await pilot.press("N")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: due_now(conn, job))
    (action,) = conn.execute("SELECT audit_action FROM sk_audit_t").fetchone() or ()
    assert action == "bump"


async def test_hostile_text_in_the_causes_is_drawn_escaped() -> None:
    hostile = Cause(
        CauseCode.PAUSED, f"its type {TASK_TYPE} is paused", (Fix("resume", (TASK_TYPE,)),)
    )
    app = ConsoleApp(FixedSource(why_causes=(hostile,)), auto_refresh=False, actor="t")
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(JobDetailScreen(STAGE_JOB, app))
        await until(
            pilot, lambda: isinstance(app.screen, JobDetailScreen) and app.screen.detail is not None
        )
        await pilot.press("w")
        await until(
            pilot, lambda: isinstance(app.screen, WhyScreen) and app.screen.found is not None
        )
        text = assert_nothing_raw(app, "why dialog")
    assert "t.\\x1b[31mevil\\u202e is paused" in text
