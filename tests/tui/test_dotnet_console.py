"""The console on what a Stakhanovise.NET application wrote (its application emulated by
tests/interop/dotnet_app.py): a .NET error in the job detail as type, message and stack
trace, and the metrics of several .NET processes aggregated by kind on panel 5."""

from __future__ import annotations

from skconsole.db.connect import Database
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.jump_to_job import JumpToJobScreen
from tests.interop.conftest import skconsole_setup
from tests.interop.dotnet_app import DotNetApp
from tests.interop.tasks_interop import ASSEMBLY, CHARGE_CARD
from tests.interop.test_read_models import STACK_TRACE, failing_charge, run_all
from tests.tui.conftest import MakeApp, loaded_console, until
from tests.tui.test_hostile_text import drawn_lines
from tests.tui.test_schedules_and_lineage import shown_text


def _dotnet_queue(dsn: str) -> str:
    """The database a .NET application set up and failed a job in (skconsole's setup
    after it, as a deployment adds skconsole); the failed job's id."""
    DotNetApp(dsn).setup()
    skconsole_setup(dsn)
    app = DotNetApp(dsn, executors={CHARGE_CARD: failing_charge}, process_id="billing-a")
    task_id = app.post(CHARGE_CARD, ASSEMBLY, {"Kind": "argument", "N": 7, "Param": "amount"})
    run_all(app)
    other = DotNetApp(dsn, process_id="billing-b")
    app.metrics.set("queue-consumer@dequeue-count", 5)
    other.metrics.set("queue-consumer@dequeue-count", 6)
    app.flush_metrics()
    other.flush_metrics()
    return str(task_id)


async def test_the_job_detail_shows_a_dotnet_error_as_type_message_and_stack_trace(
    fresh_database: str, make_app: MakeApp
) -> None:
    task_id = _dotnet_queue(fresh_database)
    async with loaded_console(make_app(db=Database(fresh_database)), size=(160, 50)) as (
        app,
        pilot,
    ):
        await pilot.press("J")
        await until(pilot, lambda: isinstance(app.screen, JumpToJobScreen))
        await pilot.press(*task_id[:8], "enter")
        await until(
            pilot,
            lambda: isinstance(app.screen, JobDetailScreen) and app.screen.detail is not None,
        )
        text = shown_text(app, app.screen)
    assert "System.ArgumentException" in text
    assert "Value 7 is out of range. (Parameter 'amount')" in text
    assert "ChargeCardExecutor.cs:line 31" in text and STACK_TRACE.splitlines()[0].strip() in text


async def test_the_metrics_panel_sums_the_dotnet_processes_counters(
    fresh_database: str, make_app: MakeApp
) -> None:
    _dotnet_queue(fresh_database)
    async with loaded_console(make_app(db=Database(fresh_database)), size=(160, 50)) as (
        app,
        pilot,
    ):
        await pilot.press("5")
        await until(
            pilot,
            lambda: any(
                "queue-consumer@dequeue-count" in line and " 11" in line
                for line in drawn_lines(app)
            ),
        )
