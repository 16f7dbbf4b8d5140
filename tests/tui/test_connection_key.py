"""``C`` shows the console's connection string, its password masked, and copies it:
what the CLI takes as --dsn to reach the same queue."""

from __future__ import annotations

from pathlib import Path

from skconsole.tui.app import ConsoleApp
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import FrozenClock
from skconsole.tui.showcase.scenes import settle
from tests.tui.conftest import SIZE, notices


async def test_C_shows_and_copies_the_connection_string_with_its_password_masked() -> None:
    source = FixedSource(connection="host=db.example dbname=orders user=ops password=****")
    app = ConsoleApp(source, clock=FrozenClock(), auto_refresh=False, actor="t")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        await pilot.press("C")

        assert app.clipboard == "host=db.example dbname=orders user=ops password=****"
        [toast] = [m for m in notices(app) if "dbname=orders" in m]
        assert toast.startswith("host=db.example dbname=orders user=ops password=****\n")


def test_the_demo_tells_at_start_how_to_reach_its_queue() -> None:
    from skconsole.demo.run import demo_reach

    text = demo_reach(
        "user=postgres dbname=skconsole_demo host=/tmp/d", Path("/tmp/d"), own_server=True
    )

    assert text.splitlines()[0] == (
        "the demo's queue: user=postgres dbname=skconsole_demo host=/tmp/d"
    )
    assert 'skconsole --dsn "$(skconsole --data-dir /tmp/d db uri --demo)" status' in text
