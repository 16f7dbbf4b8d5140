"""Every key action of the console, through a real database: preview, confirm, execute, audit."""

from __future__ import annotations

from typing import Any

from textual.widgets import Button, Input

from skconsole.core.signature import final_exception_line
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.purge_age import PurgeAgeScreen
from skconsole.tui.screens.purge_confirm import PurgeConfirmScreen
from skconsole.tui.screens.requeue_jobs import RequeueJobsScreen
from skconsole.tui.screens.search import SearchScreen
from skconsole.tui.widgets.failures_panel import FailuresPanel
from tests.support.statuses import status_counts
from tests.tui.conftest import (
    TIMEOUT_SIGNATURE_PREFIX,
    Conn,
    MakeApp,
    console_on_type,
    loaded_console,
    notices,
    post_waiting,
    record_notices,
    until,
    write_idle,
)


def _select_group(app: ConsoleApp, prefix: str) -> None:
    panel = app.main_screen.query_one(FailuresPanel)
    assert app.snapshot is not None
    key = next(g.signature for g in app.snapshot.failures if g.signature.startswith(prefix))
    assert panel.table.select_key(key)
    panel.table.focus()


def _audit(conn: Conn) -> list[tuple[str, str, int]]:
    return [
        (r[0], r[1], int(r[2]))
        for r in conn.execute(
            "SELECT audit_action, audit_user, audit_count FROM sk_audit_t ORDER BY audit_id"
        ).fetchall()
    ]


async def _through_the_requeue_dialog(pilot: Any, app: ConsoleApp) -> None:
    """R's dialog, answered as it opens: error counts kept, all due at once."""
    await until(pilot, lambda: isinstance(app.screen, RequeueJobsScreen))
    await pilot.press("enter")


async def _timeout_group_jobs(pilot: Any, app: ConsoleApp) -> GroupJobsScreen:
    """Open the timeout group's jobs (once they are read)."""
    _select_group(app, TIMEOUT_SIGNATURE_PREFIX)
    await pilot.press("enter")
    await until(
        pilot, lambda: isinstance(app.screen, GroupJobsScreen) and app.screen.jobs is not None
    )
    assert isinstance(app.screen, GroupJobsScreen)
    return app.screen


async def _confirming(pilot: Any, app: ConsoleApp, key: str) -> ConfirmScreen:
    """Press a write key and wait for its confirmation (a requeue's dialog answered as it
    opens)."""
    await pilot.press(key)
    if key in ("R", "O", "A"):
        await _through_the_requeue_dialog(pilot, app)
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
    assert isinstance(app.screen, ConfirmScreen)
    return app.screen


async def test_requeue_group_confirms_scope_and_acts(
    seeded: Database, make_app: MakeApp, conn: Conn
) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        _select_group(app, TIMEOUT_SIGNATURE_PREFIX)
        dialog = await _confirming(pilot, app, "R")
        assert dialog.question.startswith(f"Requeue 6 jobs in group `{TIMEOUT_SIGNATURE_PREFIX}")
        assert dialog.question.endswith(", error counts kept?")
        assert len(dialog.sample) == 5
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Requeued 6") for m in notices(app)))
    assert status_counts(conn, "tui.timeout") == {JobStatus.UNPROCESSED: 6}
    assert conn.execute("SELECT count(*) FROM sk_tasks_queue_t").fetchone() == (6,)
    assert _audit(conn) == [("requeue", "tester", 6)]


async def test_requeue_in_waves_stores_the_plan_and_requeues_its_first_wave(
    seeded: Database, make_app: MakeApp, conn: Conn
) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        _select_group(app, TIMEOUT_SIGNATURE_PREFIX)
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, RequeueJobsScreen))
        app.screen.query_one("#requeue-waves", Input).value = "50%,100%"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.question.endswith(", in waves 50%,100% gated at 95%?")
        await pilot.press("y")
        await until(
            pilot,
            lambda: any(
                m.startswith("Requeued 3") and "wave 1 of 2 of waves requeue #1" in m
                for m in notices(app)
            ),
        )
    assert status_counts(conn, "tui.timeout") == {JobStatus.UNPROCESSED: 3, JobStatus.FAULTED: 3}
    assert conn.execute("SELECT state, wave FROM sk_wave_plans_t").fetchall() == [
        ("waiting-for-wave", 1)
    ]


async def test_enter_on_an_audit_row_finds_the_jobs_the_action_was_on(
    seeded: Database, make_app: MakeApp, conn: Conn
) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        _select_group(app, TIMEOUT_SIGNATURE_PREFIX)
        await _confirming(pilot, app, "R")
        await pilot.press("y")
        await until(pilot, lambda: app.snapshot is not None and bool(app.snapshot.audit))
        await pilot.press("7", "enter")
        await until(pilot, lambda: isinstance(app.screen, SearchScreen) and bool(app.screen.found))
        assert isinstance(app.screen, SearchScreen)
        found = {str(j.task_id) for j in app.screen.found}
    requeued = conn.execute("SELECT task_id::text FROM sk_tasks_queue_t").fetchall()
    assert found == {r[0] for r in requeued} and len(found) == 6


async def test_requeue_acts_on_the_marked_jobs_only(
    seeded: Database, make_app: MakeApp, conn: Conn
) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        screen = await _timeout_group_jobs(pilot, app)
        await pilot.press("space", "space")
        marked = set(screen.body.table.marked_keys)
        await _confirming(pilot, app, "R")
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Requeued 2") for m in notices(app)))
    queued = {r[0] for r in conn.execute("SELECT task_id::text FROM sk_tasks_queue_t")}
    assert len(marked) == 2 and queued == marked
    assert status_counts(conn, "tui.timeout") == {JobStatus.UNPROCESSED: 2, JobStatus.FAULTED: 4}


async def test_confirmation_defaults_to_no(seeded: Database, make_app: MakeApp, conn: Conn) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        _select_group(app, TIMEOUT_SIGNATURE_PREFIX)
        said = record_notices(app)
        for answer in ("enter", "escape", "n"):
            await pilot.press("R")
            await _through_the_requeue_dialog(pilot, app)
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            assert app.screen.focused is not None and app.screen.focused.id == "no"
            await pilot.press(answer)
            await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
            await until(pilot, lambda: write_idle(app))  # outside the repeat guard
        assert said.count("Nothing was changed.") == 3
    assert status_counts(conn, "tui.timeout") == {JobStatus.FAULTED: 6}
    assert _audit(conn) == []


async def test_repeat_presses_open_one_confirmation(
    seeded: Database, make_app: MakeApp, conn: Conn
) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        _select_group(app, TIMEOUT_SIGNATURE_PREFIX)
        await pilot.press("R", "R", "R")
        await _through_the_requeue_dialog(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")
        await until(pilot, lambda: write_idle(app))
        assert not isinstance(app.screen, ConfirmScreen)
    assert status_counts(conn, "tui.timeout") == {JobStatus.FAULTED: 6}


async def test_requeue_one_job_from_the_drilldown(
    seeded: Database, make_app: MakeApp, conn: Conn
) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        screen = await _timeout_group_jobs(pilot, app)
        chosen = screen.selected_job()
        dialog = await _confirming(pilot, app, "O")
        assert dialog.question.startswith(  # type: ignore[index]
            f"Requeue job {chosen[:8]} (tui.timeout, Faulted), error counts kept?"  # type: ignore[index]
        )
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Requeued 1") for m in notices(app)))
    row = conn.execute("SELECT task_status FROM sk_task_results_t WHERE task_id = %s", (chosen,))
    assert row.fetchone() == (1,)
    assert status_counts(conn, "tui.timeout") == {JobStatus.UNPROCESSED: 1, JobStatus.FAULTED: 5}


async def test_requeue_in_the_drilldown_requeues_the_whole_group_as_panel_3_does(
    seeded: Database, make_app: MakeApp, conn: Conn
) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        screen = await _timeout_group_jobs(pilot, app)
        await pilot.press("slash", *"orders/3", "1", "enter")  # the list shows one job
        assert len(screen.query_one("#panel-jobs").table.visible_keys) == 1  # type: ignore[attr-defined]
        dialog = await _confirming(pilot, app, "R")
        assert dialog.question.startswith("Requeue 6 jobs in group `")  # type: ignore[union-attr]
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Requeued 6") for m in notices(app)))
    assert status_counts(conn, "tui.timeout") == {JobStatus.UNPROCESSED: 6}


async def test_requeue_all_shown_acts_on_the_filter(
    seeded: Database, make_app: MakeApp, conn: Conn
) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        screen = await _timeout_group_jobs(pilot, app)
        await pilot.press("slash", *"orders/3", "1", "enter")  # "orders/31" matches one job
        shown = screen.query_one("#panel-jobs").table.visible_keys  # type: ignore[attr-defined]
        assert len(shown) == 1
        await pilot.press("A")
        await _through_the_requeue_dialog(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        assert "the 1 jobs shown (filter “orders/31”)" in app.screen.question
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Requeued 1") for m in notices(app)))
    assert status_counts(conn, "tui.timeout") == {JobStatus.UNPROCESSED: 1, JobStatus.FAULTED: 5}


async def test_bump_a_type(db: Database, make_app: MakeApp, conn: Conn) -> None:
    post_waiting(db, 4)
    async with console_on_type(make_app()) as (app, pilot):
        await pilot.press("B")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.question.startswith("Bump 4 waiting jobs of type `tui.ok` to priority 0")
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Bumped 4") for m in notices(app)))
    assert conn.execute("SELECT DISTINCT task_priority FROM sk_tasks_queue_t").fetchall() == [(0,)]


async def test_cancel_a_type(db: Database, make_app: MakeApp, conn: Conn) -> None:
    post_waiting(db, 3)
    async with console_on_type(make_app()) as (app, pilot):
        dialog = await _confirming(pilot, app, "X")
        assert dialog.question == (
            "Cancel 3 waiting jobs of type `tui.ok`? A cancelled job never runs again;"
            " a running one is stopped by its worker."
        )
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Cancelled 3") for m in notices(app)))
    assert status_counts(conn, "tui.ok") == {JobStatus.CANCELLED: 3}
    assert conn.execute("SELECT count(*) FROM sk_tasks_queue_t").fetchone() == (0,)


async def test_pause_and_resume_a_type(db: Database, make_app: MakeApp, conn: Conn) -> None:
    post_waiting(db, 2)

    def paused() -> bool | None:
        row = conn.execute(
            "SELECT tt_paused FROM sk_task_types_t WHERE task_type = 'tui.ok'"
        ).fetchone()
        return row[0] if row else None

    async with console_on_type(make_app()) as (app, pilot):
        dialog = await _confirming(pilot, app, "P")
        assert dialog.question.startswith("Pause type `tui.ok`?")
        assert dialog.sample == ("now not paused: 2 waiting, 0 running",)
        await pilot.press("y")
        await until(pilot, lambda: paused() is True)
        await until(pilot, lambda: app.snapshot is not None and app.snapshot.depth[0].paused)
        await until(pilot, lambda: write_idle(app))
        resume = await _confirming(pilot, app, "P")
        assert resume.question.startswith("Resume type `tui.ok`?")
        await pilot.press("y")
        await until(pilot, lambda: paused() is False)
    assert [a for a, _, _ in _audit(conn)] == ["pause", "resume"]


async def test_pause_answered_no_leaves_the_type_running(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    post_waiting(db, 1)
    async with console_on_type(make_app()) as (app, pilot):
        said = record_notices(app)
        await _confirming(pilot, app, "P")
        await pilot.press("n")
        await until(pilot, lambda: "Nothing was changed." in said)
    assert conn.execute("SELECT count(*) FROM sk_task_types_t WHERE tt_paused").fetchone() == (0,)
    assert _audit(conn) == []


async def test_purge_asks_to_type_the_count(
    seeded: Database, make_app: MakeApp, conn: Conn
) -> None:
    # 4 Processed and 3 Fatal results are final; purge them all ("older than 0s")
    async with loaded_console(make_app()) as (app, pilot):
        await pilot.press("D")
        await until(pilot, lambda: isinstance(app.screen, PurgeAgeScreen))
        await pilot.press("ctrl+u", "0", "s", "enter")  # replace the default 7d
        await until(pilot, lambda: isinstance(app.screen, PurgeConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, PurgeConfirmScreen)
        assert dialog.count == 7
        await pilot.press("6", "enter")  # the wrong number does nothing
        await pilot.pause()
        assert isinstance(app.screen, PurgeConfirmScreen)
        assert dialog.query_one("#yes", Button).disabled
        await pilot.press("backspace", "7", "enter")
        await until(pilot, lambda: any(m.startswith("Purged 7") for m in notices(app)))
    assert status_counts(conn, "tui.ok") == {}
    assert status_counts(conn, "tui.declined") == {}
    assert status_counts(conn, "tui.timeout") == {JobStatus.FAULTED: 6}  # Faulted is kept


async def test_reap_hung_jobs_of_a_crashed_worker(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    from skconsole.demo.scenario import CrashedWorker

    crash = CrashedWorker(db, jobs=2)
    assert crash.run(), crash.error
    async with loaded_console(make_app()) as (app, pilot):
        await until(pilot, lambda: app.snapshot is not None and app.snapshot.hung_count == 2)
        await pilot.press("2", "H")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.question.startswith("Reap 2 hung jobs?")
        assert all("worker gone" in line for line in app.screen.sample)
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Reaped 2") for m in notices(app)))
    assert status_counts(conn, "demo.hang") == {JobStatus.ERROR: 2}
    errors = conn.execute("SELECT task_last_error FROM sk_task_results_t").fetchall()
    assert all(
        final_exception_line(e[0]).startswith("skconsole.HungJob: worker gone") for e in errors
    )


async def test_cancel_a_running_job_from_the_inflight_panel(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    """X on the in-flight panel: its worker (a real engine) stops the job, and the
    outcome says it was cancelled while running."""
    from tests.db.test_cancel_running import post_and_start, tasks
    from tests.support.tasks_retry import EngineThread

    with EngineThread(db.dsn, tasks):
        task_id = post_and_start(db, conn, "cancel.async_sleeper")
        async with loaded_console(make_app()) as (app, pilot):
            await pilot.press("2")
            await until(pilot, lambda: bool(app.snapshot and app.snapshot.inflight))
            panel = app.main_screen.panel("inflight")
            assert panel.table.select_key(str(task_id))
            await pilot.press("X")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            assert isinstance(app.screen, ConfirmScreen)
            assert app.screen.question.startswith(
                f"Cancel job {str(task_id)[:8]} (cancel.async_sleeper, running on "
            )
            await pilot.press("y")
            await until(
                pilot,
                lambda: any(m.startswith("Cancelled 1: 1 while running") for m in notices(app)),
            )
    assert status_counts(conn, "cancel.async_sleeper") == {JobStatus.CANCELLED: 1}
    assert _audit(conn) == [("cancel", "tester", 1)]


async def test_requeue_dialog_states_the_attempts_and_requeues_reset_and_spread(
    seeded: Database, make_app: MakeApp, conn: Conn
) -> None:
    # as in the issue: timeouts at 3 errors of their type's 4 attempts
    conn.execute("UPDATE sk_task_types_t SET tt_max_attempts = 4 WHERE task_type = 'tui.timeout'")
    conn.execute(
        "UPDATE sk_task_results_t SET task_error_count = 3 WHERE task_type = 'tui.timeout'"
    )
    async with loaded_console(make_app()) as (app, pilot):
        _select_group(app, TIMEOUT_SIGNATURE_PREFIX)
        await pilot.press("R")
        await until(
            pilot,
            lambda: isinstance(app.screen, RequeueJobsScreen) and app.screen.attempts is not None,
        )
        said = str(app.screen.query_one("#requeue-attempts").render())
        assert "Error counts now: 3 errors each · retry limit of their type: 4 attempts." in said
        assert (
            "Kept, each job has 1 try left" in said and "reset to 0, each job has 4 tries" in said
        )
        await pilot.press("space", "tab", *"6m", "enter")  # reset; spread over 6 minutes
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert dialog.question.endswith(", error counts reset to 0, due over the next 6m?"), (
            dialog.question
        )
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Requeued 6") for m in notices(app)))
        assert any(
            "error counts reset to 0: each job has 4 tries; due over the next 6m" in m
            for m in notices(app)
        )
    rows = conn.execute(
        "SELECT r.task_error_count, q.task_locked_until_ts FROM sk_task_results_t r"
        " JOIN sk_tasks_queue_t q USING (task_id) WHERE r.task_type = 'tui.timeout'"
        " ORDER BY q.task_locked_until_ts"
    ).fetchall()
    assert [errors for errors, _ in rows] == [0] * 6
    start = rows[0][1]
    assert [(due - start).total_seconds() for _, due in rows] == [60.0 * n for n in range(6)]
