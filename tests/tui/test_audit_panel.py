"""Panel 7 says who acted through which face and what was done, with its options, in one
line (issue 40): an action taken in the console is recorded as the console's."""

from __future__ import annotations

from skconsole.db.connect import Database
from skconsole.producer import Job, Producer
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.widgets.audit_panel import AuditPanel
from tests.tui.conftest import MakeApp, console_on_type, until, write_idle


def audit_cells(panel: AuditPanel) -> list[str]:
    """The panel's rows, each one line of its cells."""
    table = panel.table
    return [
        " ".join(str(getattr(c, "plain", c)) for c in table.get_row_at(i))
        for i in range(table.row_count)
    ]


async def test_the_audit_panel_says_a_console_bump_to_run_now_and_its_origin(
    db: Database, make_app: MakeApp
) -> None:
    with Producer(db) as p:
        p.post_many([Job("tui.ok", {"i": 1}, delay=3600.0)])
    app = make_app()
    async with console_on_type(app) as (_, pilot):
        await until(pilot, lambda: write_idle(app))
        await pilot.press("N")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: write_idle(app))
        await pilot.press("7")
        panel = app.main_screen.panel("audit")
        assert isinstance(panel, AuditPanel)
        await until(pilot, lambda: panel.table.row_count == 1)
        (line,) = audit_cells(panel)

    assert "console (tester@" in line
    assert "bump 1 waiting job of type tui.ok to run now" in line
