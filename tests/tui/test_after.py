"""The console's job detail says what a fan-in job (posted after= others) waits for.
On a real PostgreSQL."""

from __future__ import annotations

from skconsole.db.connect import Database
from skconsole.producer import Producer
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.jump_to_job import JumpToJobScreen
from tests.tui.conftest import Conn, MakeApp, loaded_console, until
from tests.tui.test_schedules_and_lineage import shown_text


async def test_the_job_detail_says_what_a_job_waits_for(
    db: Database, conn: Conn, make_app: MakeApp
) -> None:
    with Producer(db) as p:
        running = p.post("fanin.part", {"n": 1})
        queued = p.post("fanin.part", {"n": 2})
        done = p.post("fanin.part", {"n": 3})
        joined = p.post("fanin.\x1b[31mjoin", {}, after=[running, queued, done])
    conn.execute("UPDATE sk_task_results_t SET task_status = 2 WHERE task_id = %s", (running,))
    conn.execute("UPDATE sk_task_results_t SET task_status = 3 WHERE task_id = %s", (done,))
    async with loaded_console(make_app(), size=(180, 50)) as (app, pilot):
        await pilot.press("J")
        await until(pilot, lambda: isinstance(app.screen, JumpToJobScreen))
        await pilot.press(*str(joined), "enter")
        await until(
            pilot,
            lambda: isinstance(app.screen, JobDetailScreen) and app.screen.detail is not None,
        )
        assert isinstance(app.screen, JobDetailScreen)
        text = shown_text(app, app.screen)
    first, second = sorted([running, queued], key=str)
    states = {running: "Processing", queued: "Unprocessed"}
    expected = (
        f"waits for 2 of 3: {str(first)[:8]} {states[first]}, {str(second)[:8]} {states[second]}"
    )
    assert expected in text
    assert "\x1b" not in text
