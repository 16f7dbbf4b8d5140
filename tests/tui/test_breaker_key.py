"""Key Z on a failure group: open a circuit breaker on its signature through a real
database, with its audit row; the group and its type are marked once it holds jobs."""

from __future__ import annotations

from skconsole import read
from skconsole.core.states import BreakerState
from skconsole.db.connect import Database
from skconsole.tui.screens.breaker_dialog import BreakerScreen
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.widgets.failures_panel import FailuresPanel
from tests.db.test_ops import add_job
from tests.tui.conftest import Conn, MakeApp, loaded_console, notices, until


async def test_z_opens_a_breaker_on_the_selected_group_with_its_audit_row(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    for _ in range(3):
        add_job(conn, 4, task_type="tui.partner", queued=True)
    async with loaded_console(make_app()) as (app, pilot):
        await pilot.press("3")
        panel = app.screen.query_one(FailuresPanel)
        await until(pilot, lambda: panel.table.total_rows == 1)
        await pilot.press("Z")
        await until(pilot, lambda: isinstance(app.screen, BreakerScreen))
        await pilot.press("tab", *"payload.partner=acme", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert "payload.partner=acme" in dialog.question
        await pilot.press("y")
        await until(pilot, lambda: any("breaker" in m.lower() for m in notices(app)))

    (b,) = read.breakers(conn)
    assert (b.task_type, b.state, str(b.term)) == (
        "tui.partner",
        BreakerState.OPEN,
        "payload.partner=acme",
    )
    assert b.held == 3  # no payload shares the term, but their last failure is the signature
    assert conn.execute("SELECT audit_action FROM sk_audit_t").fetchall() == [("breaker",)]
