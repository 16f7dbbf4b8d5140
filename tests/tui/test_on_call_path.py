"""The on-call path docs/howto/on-call.md counts, key for key: "customer 42's invoice
never arrived" to the job due now, on a real database. If a key changes, the count in
the how-to must change with it."""

from __future__ import annotations

from typing import Any

from skconsole.db.connect import Database
from skconsole.producer import Job, Producer
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.search import SearchScreen
from skconsole.tui.screens.why_job import WhyScreen
from tests.tui.conftest import Conn, MakeApp, due_now, loaded_console, until

#: the keys of the how-to's path, as an operator types them (28 in all): w and N act on
#: the search's selected job, no need to open it
SEARCH = "payload.customer.id=42"
KEYS: tuple[str, ...] = ("s", *SEARCH, "enter", "w", "escape", "N", "y")


def _invoices(db: Database) -> Any:
    """Invoices of several customers, due now; customer 42's was posted with a 2 h delay."""
    with Producer(db) as p:
        p.post_many([Job("invoice.send", {"customer": {"id": c}}) for c in (7, 41, 43, 420)])
        return p.post("invoice.send", {"customer": {"id": 42}}, delay=7200)


async def test_the_how_to_s_keys_find_customer_42_s_invoice_say_why_and_run_it_now(
    dsn: str, make_app: MakeApp, conn: Conn
) -> None:
    job = _invoices(Database(dsn))
    assert len(KEYS) == 28
    async with loaded_console(make_app()) as (app, pilot):
        await pilot.press(*KEYS[: 2 + len(SEARCH)])  # s, the search, enter
        await until(
            pilot, lambda: isinstance(app.screen, SearchScreen) and len(app.screen.found) == 1
        )
        assert isinstance(app.screen, SearchScreen)
        assert app.screen.found[0].task_id == job
        await pilot.press("w")
        await until(
            pilot, lambda: isinstance(app.screen, WhyScreen) and app.screen.found is not None
        )
        assert isinstance(app.screen, WhyScreen) and app.screen.found is not None
        assert "not_due" in app.screen.found.codes
        await pilot.press("escape", "N")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: due_now(conn, job))
