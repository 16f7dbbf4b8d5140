"""``a`` on a job's detail: the job as a pytest module (``skconsole job ID --as-test``),
written to the current directory when the console knows the tasks module (--tasks),
never over a file already there; without it, the command that writes it, copied."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import FrozenClock
from skconsole.tui.showcase.scenes import settle
from skconsole.views.reproduce import job_as_test
from tests.tui.conftest import SIZE, record_notices

TASKS = "checkout.tasks"


def console(tasks: str | None) -> ConsoleApp:
    return ConsoleApp(
        FixedSource(), clock=FrozenClock(), auto_refresh=False, actor="t", tasks=tasks
    )


async def test_a_writes_the_jobs_test_to_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = console(TASKS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter", "enter")
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, JobDetailScreen) and detail.detail is not None
        said = record_notices(app)

        await pilot.press("a")

        written = tmp_path / f"test_job_{detail.detail.task_id.hex[:8]}.py"
        assert written.read_text(encoding="utf-8") == job_as_test(detail.detail, TASKS)
        ast.parse(written.read_text(encoding="utf-8"))
        assert said == [f"Wrote {written}: pytest runs the job's handler on its payload again."]


async def test_a_never_overwrites_a_test_file_already_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = console(TASKS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter", "enter")
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, JobDetailScreen) and detail.detail is not None
        mine = tmp_path / f"test_job_{detail.detail.task_id.hex[:8]}.py"
        mine.write_text("# the developer's edits\n", encoding="utf-8")
        said = record_notices(app)

        await pilot.press("a")

        assert mine.read_text(encoding="utf-8") == "# the developer's edits\n"
        assert said == [f"{mine} exists already: not overwritten (move it away and press a again)."]


async def test_a_without_tasks_gives_the_command_that_writes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = console(None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter", "enter")
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, JobDetailScreen) and detail.detail is not None
        said = record_notices(app)

        await pilot.press("a")

        task_id = detail.detail.task_id
        command = (
            f"skconsole job {task_id} --as-test --tasks MODULE > test_job_{task_id.hex[:8]}.py"
        )
        assert app.clipboard == command
        assert said == [
            "This console was not started with --tasks, so it does not know the handler's"
            f" module: run {command} (copied)."
        ]
        assert list(tmp_path.iterdir()) == []
