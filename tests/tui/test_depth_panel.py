"""Panel 1 lists every known task type (issue 24, points 5 and 6): the types with nothing
ready, scheduled or in flight come last and dimmed, and each row says what share of
the type's jobs finished in the last 5 minutes failed."""

from __future__ import annotations

from skconsole.db.connect import Database
from skconsole.producer import Job, Producer
from skconsole.tui.widgets.depth_panel import DepthPanel
from tests.tui.conftest import MakeApp, loaded_console, until


async def test_types_with_nothing_waiting_are_listed_last_and_dimmed_with_their_failure_rate(
    seeded: Database, make_app: MakeApp
) -> None:
    """The seeded burst left tui.timeout (6 Faulted), tui.declined (3 Fatal) and tui.ok (4
    Processed) with nothing waiting; one job of another type waits."""
    with Producer(seeded) as p:
        p.post_many([Job("tui.waiting", {})])
    async with loaded_console(make_app()) as (app, pilot):
        table = app.main_screen.query_one(DepthPanel).table
        await until(pilot, lambda: table.total_rows == 4)

        assert table.visible_keys == ["tui.waiting", "tui.declined", "tui.ok", "tui.timeout"]
        keys = [c.key for c in DepthPanel.COLUMNS]
        cells = {k: dict(zip(keys, table._shown[k], strict=True)) for k in table.visible_keys}
        assert cells["tui.waiting"]["type"] == "tui.waiting"  # waiting: not dimmed
        assert cells["tui.ok"]["type"] == ("tui.ok", "muted")
        assert cells["tui.ok"]["failed"] == ("0%", "muted")
        # every one of its 6 jobs failed: the rate stays red in a dimmed row
        assert cells["tui.timeout"]["type"] == ("tui.timeout", "muted")
        assert cells["tui.timeout"]["failed"] == ("100%", "bad")
        # 3 jobs are too few to judge: shown, not coloured
        assert cells["tui.declined"]["failed"] == ("100%", "muted")
