"""Key J opens a job by its id or a unique prefix (the lookup off the UI thread);
a prefix several jobs share is answered in the dialog; the job detail lists the
job's attempts. On a real PostgreSQL."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from textual.pilot import Pilot

from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.jump_to_job import JumpToJobScreen
from tests.db.test_job_command import add_attempts, add_job
from tests.tui.conftest import Conn, MakeApp, loaded, until
from tests.tui.test_hostile_text import drawn_lines
from tests.tui.test_schedules_and_lineage import shown_text

ONE = UUID("ab12cd34-0000-4000-8000-000000000001")


async def _jump(pilot: Pilot[Any], app: ConsoleApp, prefix: str) -> None:
    """Key J on the loaded console, then ``prefix`` and enter in its dialog."""
    await loaded(pilot)
    await pilot.press("J")
    await until(pilot, lambda: isinstance(app.screen, JumpToJobScreen))
    await pilot.press(*prefix, "enter")


async def _detail_of(pilot: Pilot[Any], app: ConsoleApp, prefix: str) -> str:
    """The text of the job detail ``prefix`` opens through J, once it has loaded."""
    await _jump(pilot, app, prefix)
    await until(
        pilot, lambda: isinstance(app.screen, JobDetailScreen) and app.screen.detail is not None
    )
    assert isinstance(app.screen, JobDetailScreen)
    return shown_text(app, app.screen)


async def test_j_opens_a_job_by_a_unique_prefix_with_its_attempts(
    conn: Conn, make_app: MakeApp
) -> None:
    add_job(conn, ONE)
    add_job(conn, UUID("ab99cd34-0000-4000-8000-000000000001"))
    add_attempts(conn, ONE)
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        text = await _detail_of(pilot, app, "ab12")
        assert isinstance(app.screen, JobDetailScreen) and app.screen.task_id == str(ONE)
    assert "#1" in text and "failed → Error" in text and "web-1 pid 2200 1.8.3" in text
    assert "\x1b" not in text


async def test_a_prefix_several_jobs_share_is_answered_in_the_dialog(
    conn: Conn, make_app: MakeApp
) -> None:
    add_job(conn, UUID("cafe0001-0000-4000-8000-000000000001"))
    add_job(conn, UUID("cafe0002-0000-4000-8000-000000000001"))
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await _jump(pilot, app, "cafe")
        await until(pilot, lambda: "Several jobs" in "\n".join(drawn_lines(app)))
        assert isinstance(app.screen, JumpToJobScreen)
        assert "cafe0002-0000-4000-8000-000000000001" in "\n".join(drawn_lines(app))


async def test_a_job_that_succeeded_opens_on_its_fields_with_the_earlier_error_last(
    conn: Conn, make_app: MakeApp
) -> None:
    add_job(conn, ONE, status=3)  # processed, its last error from the first attempt
    add_attempts(conn, ONE)
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        text = await _detail_of(pilot, app, "ab12")
    lines = [line.strip(" █▌") for line in text.splitlines()]
    shown = [line for line in lines if line]
    assert shown[0].startswith("job  ab12cd34")
    assert "last error" not in shown
    assert shown.index("attempts") < shown.index("error of an earlier attempt")
