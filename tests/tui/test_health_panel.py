"""The queue-health panel (9) on a real database: a forgotten transaction shows as the
xmin horizon's holder, V vacuums a queue table, K cancels the statement of a session
that blocks another, and neither key exists in read-only mode."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors
from textual.pilot import Pilot
from textual.widgets import Static

from skconsole.db.connect import Database
from skconsole.producer import Job, Producer
from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.widgets.health_panel import HealthPanel
from tests.tui.conftest import SIZE, Conn, MakeApp, notices, until
from tests.tui.test_hostile_text import assert_nothing_raw


def _audit(conn: Conn) -> list[tuple[str, str]]:
    rows = conn.execute("SELECT audit_action, audit_user FROM sk_audit_t ORDER BY audit_id")
    return [(str(r[0]), str(r[1])) for r in rows.fetchall()]


def _panel(app: ConsoleApp) -> HealthPanel:
    return app.main_screen.query_one(HealthPanel)


def _listed(app: ConsoleApp, pid: int) -> bool:
    """Whether the health read on screen lists the session ``pid``."""
    return app.health is not None and str(pid) in _panel(app).sessions.visible_keys


@contextmanager
def _session(dsn: str) -> Iterator[Conn]:
    """A session of its own (another client of the database), closed at the end."""
    conn = psycopg.connect(dsn, autocommit=True, application_name="health-test")
    try:
        yield conn
    finally:
        conn.close()


async def test_an_open_transaction_is_shown_as_the_horizon_holder(
    dsn: str, conn: Conn, make_app: MakeApp
) -> None:
    with _session(dsn) as holder:
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT count(*) FROM sk_tasks_queue_t")  # takes the snapshot
        for _ in range(3):  # later transactions: its snapshot is the oldest by far
            conn.execute("SELECT txid_current()")
        pid = holder.info.backend_pid
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("9")
            await until(pilot, lambda: _listed(app, pid))
            assert app.health is not None
            horizon = app.health.health.horizon
            assert horizon.holder is not None and horizon.holder.startswith(f"pid {pid}")
            panel = _panel(app)
            shown = str(panel.query_one("#health-horizon", Static).content)
            assert f"by pid {pid}, health-test" in shown
        holder.rollback()


async def test_v_vacuums_the_selected_table_after_a_yes(
    db: Database, conn: Conn, make_app: MakeApp
) -> None:
    with Producer(db) as p:
        p.post_many([Job("t.health", {"n": n}) for n in range(5)])
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("9")
        await until(pilot, lambda: _panel(app).table.total_rows > 0)
        assert _panel(app).table.select_key("sk_tasks_queue_t")
        await pilot.press("V")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert dialog.question.startswith("Vacuum sk_tasks_queue_t?")
        assert dialog.sample[0].startswith("table sk_tasks_queue_t: ")
        await pilot.press("y")
        await until(pilot, lambda: "Vacuumed sk_tasks_queue_t." in notices(app))
    assert _audit(conn) == [("vacuum", "tester")]


def _sleep_holding_the_row(dsn: str, ready: threading.Event, outcome: list[str]) -> None:
    """A session that locks a job's row and then runs a long statement in that transaction."""
    with _session(dsn) as blocker:
        try:
            with blocker.transaction():
                blocker.execute("UPDATE sk_tasks_queue_t SET task_priority = 1")
                outcome.append(str(blocker.info.backend_pid))
                ready.set()
                blocker.execute("SELECT pg_sleep(30)")
        except errors.QueryCanceled:
            outcome.append("cancelled")
        finally:
            ready.set()


def _wait_for_the_row(dsn: str) -> None:
    """A session that waits for the row lock the blocker holds (until it rolls back)."""
    with _session(dsn) as waiter:
        waiter.execute("UPDATE sk_tasks_queue_t SET task_priority = 2")


async def _select_the_session(pilot: Pilot[Any], app: ConsoleApp, pid: int) -> None:
    """Panel 9, once it shows a lock wait, with session ``pid``'s row selected and focused."""
    await pilot.press("9")
    await until(
        pilot,
        lambda: app.health is not None and bool(app.health.health.lock_waits),
        timeout=20,
    )
    await until(pilot, lambda: _listed(app, pid))
    sessions = _panel(app).sessions
    assert sessions.select_key(str(pid))
    sessions.focus()


async def test_k_cancels_the_statement_of_a_blocking_session(
    dsn: str, db: Database, conn: Conn, make_app: MakeApp
) -> None:
    with Producer(db) as p:
        p.post_many([Job("t.health", {"n": 1})])
    ready = threading.Event()
    outcome: list[str] = []
    blocker = threading.Thread(target=_sleep_holding_the_row, args=(dsn, ready, outcome))
    waiter = threading.Thread(target=_wait_for_the_row, args=(dsn,))
    blocker.start()
    try:
        assert ready.wait(10) and outcome, "the blocking session did not start"
        pid = int(outcome[0])
        waiter.start()
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await _select_the_session(pilot, app, pid)
            await pilot.press("K")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            dialog = app.screen
            assert isinstance(dialog, ConfirmScreen)
            assert dialog.question.startswith(f"Cancel session pid {pid} (health-test")
            assert any("pg_sleep(30)" in line for line in dialog.sample)
            await pilot.press("y")
            await until(
                pilot, lambda: any(m.startswith("Cancelled the statement of") for m in notices(app))
            )
        blocker.join(10)
        waiter.join(10)
        assert outcome[-1] == "cancelled"
        assert not waiter.is_alive()  # the row lock went with the cancelled transaction
        assert _audit(conn) == [("cancel-session", "tester")]
    finally:
        conn.execute(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'health-test' AND pid <> pg_backend_pid()"
            " AND datname = current_database()"
        )
        blocker.join(10)
        if waiter.is_alive() or waiter.ident is not None:
            waiter.join(10)


async def test_read_only_mode_has_no_vacuum_or_cancel_session_key(make_app: MakeApp) -> None:
    app = make_app(read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("9")
        await until(pilot, lambda: _panel(app).table.total_rows > 0)
        assert app.current_scope() == "health"
        assert app.check_action("vacuum", ()) is False
        assert app.check_action("cancel_session", ()) is False
        await pilot.press("V", "K")
        await pilot.pause()
        assert not app.operator.busy
        assert not isinstance(app.screen, ConfirmScreen)


async def test_a_hostile_query_is_drawn_with_visible_escapes(
    dsn: str, db: Database, conn: Conn, make_app: MakeApp
) -> None:
    with Producer(db) as p:
        p.post_many([Job("t.health", {"n": 1})])
    waiter = threading.Thread(target=_wait_for_the_row, args=(dsn,))
    with _session(dsn) as holder:
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        # a row another session waits for: it holds up the queue, so K may act on it
        holder.execute("UPDATE sk_tasks_queue_t SET task_priority = 1")
        holder.execute("SELECT '\x1b[31mevil\u202e' AS t, count(*) FROM sk_tasks_queue_t")
        waiter.start()
        conn.execute("SELECT txid_current()")
        pid = holder.info.backend_pid
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await _select_the_session(pilot, app, pid)
            await pilot.pause()
            seen = assert_nothing_raw(app, "panel 9", _panel(app))
            assert "\\x1b[31mevil\\u202e" in seen
            await pilot.press("K")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            seen = assert_nothing_raw(app, "cancel-session confirmation")
            assert "\\x1b[31mevil\\u202e" in seen
            await pilot.press("n")
        holder.rollback()
    waiter.join(30)
