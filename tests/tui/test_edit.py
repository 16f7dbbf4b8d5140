"""E in a job's detail: the payload editor, the diff confirmation, the edit, on a real database."""

from __future__ import annotations

import uuid
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Button, Input, TextArea

from skconsole.tui.screens.edit_confirm import EditConfirmScreen
from skconsole.tui.screens.edit_job import EditJobScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from tests.db.test_ops import add_job
from tests.tui.conftest import SIZE, Conn, MakeApp, loaded, notices, until

NEW = '{"order_id": 7, "amount": "12.50"}'


def payload_of(conn: Conn, job: uuid.UUID) -> tuple[Any, ...] | None:
    return conn.execute(
        "SELECT r.task_payload, r.task_status, q.task_payload FROM sk_task_results_t r "
        "LEFT JOIN sk_tasks_queue_t q ON q.task_id = r.task_id WHERE r.task_id = %s",
        (job,),
    ).fetchone()


async def open_job(pilot: Pilot[Any], job: uuid.UUID) -> JobDetailScreen:
    app = await loaded(pilot)
    await app.push_screen(JobDetailScreen(str(job), app))
    await until(
        pilot, lambda: isinstance(app.screen, JobDetailScreen) and app.screen.detail is not None
    )
    assert isinstance(app.screen, JobDetailScreen)
    return app.screen


async def open_editor(pilot: Pilot[Any], job: uuid.UUID) -> EditJobScreen:
    await open_job(pilot, job)
    await pilot.press("E")
    await until(pilot, lambda: isinstance(pilot.app.screen, EditJobScreen))
    editor = pilot.app.screen
    assert isinstance(editor, EditJobScreen)
    return editor


async def type_payload(pilot: Pilot[Any], editor: EditJobScreen, text: str) -> None:
    editor.query_one(TextArea).text = text
    await pilot.pause()


async def save_edit(pilot: Pilot[Any], job: uuid.UUID, text: str) -> EditConfirmScreen:
    """Open the job's editor, put ``text`` in it and save: the diff confirmation."""
    editor = await open_editor(pilot, job)
    await type_payload(pilot, editor, text)
    await pilot.press("ctrl+s")
    await until(pilot, lambda: isinstance(pilot.app.screen, EditConfirmScreen))
    dialog = pilot.app.screen
    assert isinstance(dialog, EditConfirmScreen)
    return dialog


async def test_e_edits_a_failed_job_and_runs_it_again_after_the_diff_is_confirmed(
    conn: Conn, make_app: MakeApp
) -> None:
    job = add_job(conn, 6)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await save_edit(pilot, job, NEW)
        assert '+  "order_id": 7,' in dialog.diff and "-{}" in dialog.diff
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Edited job") for m in notices(app)))
        detail = app.screen
        assert isinstance(detail, JobDetailScreen)
        await until(pilot, lambda: detail.detail is not None and detail.detail.payload == NEW)
    assert payload_of(conn, job) == (NEW, 1, NEW)


async def test_save_is_disabled_while_the_payload_is_not_json(
    conn: Conn, make_app: MakeApp
) -> None:
    job = add_job(conn, 5)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot, job)
        await type_payload(pilot, editor, '{"order_id": ')

        assert editor.query_one("#save", Button).disabled
        assert editor.problem.startswith("payload is not valid JSON")
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, EditJobScreen)


async def test_a_priority_that_is_not_a_whole_number_disables_save(
    conn: Conn, make_app: MakeApp
) -> None:
    job = add_job(conn, 5)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot, job)
        await type_payload(pilot, editor, NEW)
        editor.query_one("#edit-priority", Input).value = "-3"
        await pilot.pause()

        assert editor.query_one("#save", Button).disabled
        assert "priority must be between 0" in editor.problem


async def test_the_diff_confirmation_defaults_to_no_and_changes_nothing(
    conn: Conn, make_app: MakeApp
) -> None:
    job = add_job(conn, 5)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await save_edit(pilot, job, NEW)
        await pilot.press("enter")
        await until(pilot, lambda: "Nothing was changed." in notices(app))
    assert payload_of(conn, job) == ("{}", 5, None)


async def test_e_on_a_running_job_is_refused_with_one_line_and_opens_no_editor(
    conn: Conn, make_app: MakeApp
) -> None:
    job = add_job(conn, 2)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_job(pilot, job)
        await pilot.press("E")
        await until(pilot, lambda: any("edit refused" in m for m in notices(app)))
        assert isinstance(app.screen, JobDetailScreen)
        [refusal] = [m for m in notices(app) if "edit refused" in m]
    assert "\n" not in refusal and "running" in refusal


async def test_e_does_nothing_in_read_only_mode(conn: Conn, make_app: MakeApp) -> None:
    job = add_job(conn, 5)
    app = make_app(read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await open_job(pilot, job)
        await pilot.press("E")
        await pilot.pause()
        assert not app.operator.busy
        assert isinstance(app.screen, JobDetailScreen)
    assert payload_of(conn, job) == ("{}", 5, None)


async def test_a_job_claimed_while_the_confirmation_is_open_is_left_alone(
    conn: Conn, make_app: MakeApp
) -> None:
    job = add_job(conn, 1)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await save_edit(pilot, job, NEW)
        conn.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = %s", (job,))
        conn.execute("UPDATE sk_task_results_t SET task_status = 2 WHERE task_id = %s", (job,))
        await pilot.press("y")
        await until(pilot, lambda: any("left alone" in m for m in notices(app)))
    assert payload_of(conn, job) == ("{}", 2, None)
