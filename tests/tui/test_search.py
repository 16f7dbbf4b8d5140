"""The search screen (key s) and the failure group's factors screen (F), on the real database."""

from __future__ import annotations

import json
from typing import Any

from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.producer import Producer
from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.factors import FactorsScreen
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.requeue_jobs import RequeueJobsScreen
from skconsole.tui.screens.search import SearchScreen
from skconsole.tui.widgets.failures_panel import FailuresPanel
from tests.support.statuses import status_counts
from tests.tui.conftest import (
    Conn,
    MakeApp,
    loaded_console,
    notices,
    search_for,
    shown_screen,
    until,
)


def _found(app: ConsoleApp) -> bool:
    screen = app.screen
    return isinstance(screen, SearchScreen) and bool(screen.found)


async def test_search_finds_a_job_by_payload_and_enter_opens_it(
    seeded: Database, make_app: MakeApp
) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        await search_for(pilot, app, "payload.n=32 type=tui.timeout")
        await until(pilot, lambda: _found(app))
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        assert len(screen.found) == 1 and json.loads(screen.found[0].payload or "") == {"n": 32}
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobDetailScreen))
        assert isinstance(app.screen, JobDetailScreen)
        assert app.screen.task_id == str(screen.found[0].task_id)


async def test_a_bad_search_line_is_said_not_run(seeded: Database, make_app: MakeApp) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        await search_for(pilot, app, "customer=4")
        await until(pilot, lambda: any("unknown search term" in m for m in notices(app)))


async def test_requeue_shown_acts_on_the_search_s_results(
    seeded: Database, make_app: MakeApp, conn: Conn
) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        await search_for(pilot, app, "payload.n=31")
        await until(pilot, lambda: _found(app))
        await pilot.press("A")
        await shown_screen(pilot, RequeueJobsScreen)
        await pilot.press("enter")  # the requeue's dialog: counts kept, all due at once
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Requeued 1") for m in notices(app)))
    assert status_counts(conn, "tui.timeout") == {JobStatus.UNPROCESSED: 1, JobStatus.FAULTED: 5}


async def test_the_factor_key_lists_the_factors_and_enter_opens_the_strongest_s_search(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    from tests.db.test_common_factors import dataset

    signature = dataset(conn)
    async with loaded_console(make_app()) as (app, pilot):
        assert app.snapshot is not None and app.snapshot.failures
        panel = app.main_screen.query_one(FailuresPanel)
        assert panel.table.select_key(signature)
        panel.table.focus()
        await pilot.press("enter")
        await until(
            pilot, lambda: isinstance(app.screen, GroupJobsScreen) and app.screen.jobs is not None
        )
        assert isinstance(app.screen, GroupJobsScreen) and app.screen.group.signature == signature
        await pilot.press("F")
        factors = await shown_screen(pilot, FactorsScreen, lambda s: s.found is not None)
        assert factors.rows and factors.rows[0].key == "payload.region=eu"
        await pilot.press("enter")
        await until(pilot, lambda: _found(app))
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        assert screen.line == "payload.region=eu type=invoices.send"
        assert len(screen.found) == 9 + 2


def _delayed_invoice(dsn: str) -> None:
    with Producer(Database(dsn)) as p:
        p.post("invoice.send", {"customer": {"id": 42}}, delay=7200)


async def _found_row(app: ConsoleApp, pilot: Any) -> dict[str, str]:
    """The search's first row, by column label."""
    await search_for(pilot, app, "payload.customer.id=42")
    await until(pilot, lambda: _found(app))
    assert isinstance(app.screen, SearchScreen)
    table = app.screen.body.table
    labels = [str(c.label) for c in table.columns.values()]
    return dict(zip(labels, (str(c) for c in table.get_row_at(0)), strict=True))


async def test_a_found_job_that_waits_says_when_it_is_due_with_its_payload_apart(
    dsn: str, make_app: MakeApp
) -> None:
    _delayed_invoice(dsn)
    async with loaded_console(make_app()) as (app, pilot):
        row = await _found_row(app, pilot)
    assert row["when"].startswith("due in 1h")
    assert row["payload"] == '{"customer":{"id":42}}'
    assert row["error"] == ""


async def test_found_jobs_keep_their_type_at_80_columns(dsn: str, make_app: MakeApp) -> None:
    _delayed_invoice(dsn)
    async with loaded_console(make_app(), size=(80, 24)) as (app, pilot):
        row = await _found_row(app, pilot)
    assert row["type"] == "invoice.send"
