"""The console on a database whose Stakhanovise.NET tables were renamed (and live in
a schema of their own): it reads them through the mapping like everything else."""

from __future__ import annotations

from skconsole.db.connect import Database
from skconsole.producer import Producer
from tests.db.test_mapping import LAYOUT, mapped  # noqa: F401  (the fixture)
from tests.tui.conftest import MakeApp, loaded_console, until


async def test_the_console_shows_the_queue_of_renamed_tables(
    mapped: str,  # noqa: F811
    make_app: MakeApp,
) -> None:
    db = Database(mapped, mapping=LAYOUT)
    with Producer(db) as p:
        for i in range(3):
            p.post("mapped.console", {"i": i})
    async with loaded_console(make_app(db=db)) as (app, pilot):
        await until(pilot, lambda: bool(app.snapshot and app.snapshot.depth))
        assert app.snapshot is not None
        [row] = [d for d in app.snapshot.depth if d.task_type == "mapped.console"]
        assert row.ready == 3
