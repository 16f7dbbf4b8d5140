"""The console on the test database: the schedules panel, and a failed pipeline
stage traced back to its parent from the job detail (key u)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from textual.pilot import Pilot

from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.widgets.job_view import JobView
from skconsole.tui.widgets.schedules_panel import SchedulesPanel
from tests.db.test_ops import add_job
from tests.tui.conftest import Conn, MakeApp, loaded_console, until
from tests.tui.test_hostile_text import drawn_lines


def add_stage(conn: Conn) -> tuple[UUID, UUID]:
    """A processed first stage and its failed stage 2; returns (parent, stage)."""
    parent = add_job(conn, 3, task_type="orders.validate")
    stage = add_job(conn, 5, task_type="orders.charge")
    conn.execute(
        "UPDATE sk_task_results_t SET sk_parent_task_id = %s, sk_pipeline = 'orders', "
        "sk_stage = 2, sk_snooze_count = 2 WHERE task_id = %s",
        (parent, stage),
    )
    return parent, stage


async def open_failed_job(pilot: Pilot[Any], app: ConsoleApp) -> JobDetailScreen:
    """Failures panel -> the one group -> its one job."""
    await pilot.press("3")
    await pilot.press("enter")
    await until(
        pilot, lambda: isinstance(app.screen, GroupJobsScreen) and app.screen.jobs is not None
    )
    await pilot.press("enter")
    await until(
        pilot, lambda: isinstance(app.screen, JobDetailScreen) and app.screen.detail is not None
    )
    assert isinstance(app.screen, JobDetailScreen)
    return app.screen


def shown_text(app: ConsoleApp, screen: JobDetailScreen) -> str:
    view = screen.query_one(JobView)
    return "\n".join(drawn_lines(app)[view.region.y : view.region.bottom])


async def test_the_schedules_panel_lists_each_periodic_type_with_its_next_run(
    conn: Conn, make_app: MakeApp
) -> None:
    conn.execute(
        "INSERT INTO sk_schedules_t (task_type, sch_every_seconds, sch_last_tick_ts) "
        "VALUES ('reports.hourly', 3600, now())"
    )
    conn.execute(  # a live worker that schedules it
        "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,"
        " worker_concurrency, worker_task_types, worker_lease_seconds,"
        " worker_lease_margin_seconds, worker_schedules) VALUES (gen_random_uuid(), 'p', 'h',"
        " 1, 1, ARRAY['reports.hourly'], 3600, 1, ARRAY['reports.hourly'])"
    )
    add_job(conn, 1, task_type="reports.hourly")
    async with loaded_console(make_app()) as (app, pilot):
        await pilot.press("8")
        panel = app.main_screen.query_one(SchedulesPanel)
        await until(pilot, lambda: panel.table.total_rows == 1)
        lines = drawn_lines(app)[panel.region.y : panel.region.bottom]
    [row] = [line for line in lines if "reports.hourly" in line]
    assert "every 1h" in row and " in " in row and "none yet" in row
    assert row.rstrip(" │").endswith("1")  # one job waiting


async def test_a_failed_stage_shows_its_pipeline_its_parent_and_its_snoozes(
    conn: Conn, make_app: MakeApp
) -> None:
    parent, _stage = add_stage(conn)
    async with loaded_console(make_app(), size=(160, 50)) as (app, pilot):
        screen = await open_failed_job(pilot, app)
        text = shown_text(app, screen)
    assert f"stage 2 of orders, after job {parent} (orders.validate)" in text
    assert "snoozed 2 times" in text


async def test_u_opens_the_parent_of_a_failed_stage_and_esc_comes_back(
    conn: Conn, make_app: MakeApp
) -> None:
    parent, stage = add_stage(conn)
    async with loaded_console(make_app(), size=(160, 50)) as (app, pilot):
        await open_failed_job(pilot, app)
        await pilot.press("u")
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, JobDetailScreen)
                and app.screen.detail is not None
                and app.screen.detail.task_id == parent
            ),
        )
        assert isinstance(app.screen, JobDetailScreen)
        assert "posted 1 job" in shown_text(app, app.screen)
        await pilot.press("escape")
        assert isinstance(app.screen, JobDetailScreen) and app.screen.task_id == str(stage)


async def test_the_parent_key_is_offered_only_for_a_job_with_a_parent(
    conn: Conn, make_app: MakeApp
) -> None:
    add_job(conn, 5, task_type="orders.charge")
    async with loaded_console(make_app(), size=(160, 50)) as (app, pilot):
        await open_failed_job(pilot, app)
        assert app.check_action("parent", ()) is False
        assert app.check_action("copy", ()) is True


async def test_the_parent_key_is_not_offered_when_the_parent_was_purged(
    conn: Conn, make_app: MakeApp
) -> None:
    parent, _stage = add_stage(conn)
    conn.execute("DELETE FROM sk_task_results_t WHERE task_id = %s", (parent,))
    async with loaded_console(make_app(), size=(160, 50)) as (app, pilot):
        screen = await open_failed_job(pilot, app)
        assert app.check_action("parent", ()) is False
        assert f"after job {parent} (purged)" in shown_text(app, screen)
