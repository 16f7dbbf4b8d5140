"""What ``cancel-session`` may reach: only a session that holds up the queue.

A session holds up the queue when it blocks a lock on a queue table, or when it
has held this database's xmin horizon past the health threshold while dead rows
of the queue tables wait on it. Anything else (a short statement that blocks
nobody, a session of another database) is refused by the preview and left
alone by the cancel, which re-checks the rule in the statement that cancels.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import psycopg
from typer.testing import CliRunner, Result

from skconsole.core.actor import Actor
from skconsole.db.sqlfiles import query
from skconsole.ops import ActionResult, Preview
from skconsole.ops.cancel_session import CANCEL_SESSION, CancelSessionParams
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
ACTOR = Actor("tester", "test-host")
#: a statement that outlives every test here unless it is cancelled
SLEEP = "SELECT pg_sleep(60)"


@dataclass
class Running:
    """A statement running on a session of its own, on a thread: what it raised, if anything."""

    conn: Conn
    thread: threading.Thread | None = None
    errors: list[BaseException] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.conn.info.backend_pid

    def start(self, statement: str, params: dict[str, Any] | None = None) -> None:
        def run() -> None:
            try:
                self.conn.execute(statement, params)
            except psycopg.Error as exc:
                self.errors.append(exc)

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def sleep_until_seen(self, conn: Conn, seconds: float) -> None:
        """Start ``SLEEP``; return once ``conn`` sees it sleeping for ``seconds``."""
        self.start(SLEEP)
        wait_until(lambda: sleeping_for(conn, self.pid, seconds), timeout=30)

    @property
    def cancelled(self) -> bool:
        return any(isinstance(e, psycopg.errors.QueryCanceled) for e in self.errors)


@contextmanager
def running(dsn: str, app: str) -> Iterator[Running]:
    """A session of ``dsn``; at the end, whatever it still runs is ended from another session."""
    with psycopg.connect(dsn, autocommit=True, application_name=app) as c:
        r = Running(c)
        try:
            yield r
        finally:
            with psycopg.connect(dsn, autocommit=True) as admin:
                admin.execute("SELECT pg_cancel_backend(%s)", (r.pid,))
            if r.thread is not None:
                r.thread.join(30)


def preview_then_cancel(conn: Conn, params: CancelSessionParams) -> tuple[Preview, ActionResult]:
    """The preview of cancelling ``params``' session, then the cancel of the session that
    preview saw (its ``backend_start``), as an operator's confirmation runs them."""
    preview = CANCEL_SESSION.preview(conn, params=params)
    started = preview.details["backend_start"]
    assert isinstance(started, datetime), preview.details
    result = CANCEL_SESSION.execute(
        conn, params=replace(params, backend_start=started), actor=ACTOR
    )
    return preview, result


def activity(conn: Conn, pid: int) -> tuple[Any, ...] | None:
    """(state, query, transaction age in seconds) of ``pid`` as the server sees it now."""
    conn.execute("SELECT pg_stat_clear_snapshot()")
    return conn.execute(
        "SELECT state, query, extract(epoch FROM now() - xact_start)::float8"
        " FROM pg_stat_activity WHERE pid = %s",
        (pid,),
    ).fetchone()


def sleeping_for(conn: Conn, pid: int, seconds: float) -> bool:
    row = activity(conn, pid)
    return row is not None and row[0] == "active" and row[1] == SLEEP and row[2] >= seconds


def dead_queue_rows(conn: Conn, n: int = 200) -> None:
    """Leave ``n`` dead rows in the queue table, and make the statistics say so now."""
    conn.execute(
        "WITH gone AS (INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source,"
        " task_priority, task_locked_until_ts) SELECT gen_random_uuid(), 't.scope', 'tests', 5,"
        " now() FROM generate_series(1, %s) RETURNING task_id) SELECT count(*) FROM gone",
        (n,),
    )
    conn.execute("DELETE FROM sk_tasks_queue_t WHERE task_type = 't.scope'")
    conn.execute("SELECT pg_stat_force_next_flush()")
    conn.execute("SELECT 1")

    def counted() -> bool:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'sk_tasks_queue_t'::regclass"
        ).fetchone()
        return row is not None and row[0] >= n

    wait_until(counted, timeout=30)


def test_a_short_statement_that_blocks_nobody_is_refused_and_left_running(
    dsn: str, conn: Conn
) -> None:
    with running(dsn, "sk-test-harmless") as harmless:
        harmless.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        harmless.conn.execute("SELECT 1")  # its snapshot: the oldest in the database
        dead_queue_rows(conn)  # dead rows its snapshot keeps, but only for seconds yet
        harmless.sleep_until_seen(conn, 2.0)

        preview, result = preview_then_cancel(conn, CancelSessionParams(harmless.pid))

        assert (preview.count, preview.details["eligible"]) == (0, False)
        assert (result.changed, result.skipped_changed_state) == (0, 1)
        assert sleeping_for(conn, harmless.pid, 2.0), activity(conn, harmless.pid)
        assert harmless.errors == []


def cancel_session_command(dsn: str, pid: int) -> Result:
    """``skconsole --dsn DSN cancel-session --pid PID --yes``, run by its Typer app."""
    import skconsole.cli.health  # noqa: F401  (registers the command)
    from skconsole.cli.app import app

    return CliRunner().invoke(app, ["--dsn", dsn, "cancel-session", "--pid", str(pid), "--yes"])


def test_the_command_says_a_harmless_session_does_not_hold_up_the_queue(
    dsn: str, conn: Conn
) -> None:
    with running(dsn, "sk-test-harmless") as harmless:
        harmless.sleep_until_seen(conn, 2.0)

        done = cancel_session_command(dsn, harmless.pid)

        assert done.exit_code == 1, done.output
        assert "does not hold up the queue" in done.output
        assert sleeping_for(conn, harmless.pid, 2.0) and harmless.errors == []


def test_a_session_holding_a_lock_a_claim_waits_on_is_cancelled(dsn: str, conn: Conn) -> None:
    with running(dsn, "sk-test-blocker") as blocker, running(dsn, "sk-test-claim") as claim:
        blocker.conn.execute("BEGIN")
        blocker.conn.execute("LOCK TABLE sk_tasks_queue_t IN ACCESS EXCLUSIVE MODE")
        blocker.start(SLEEP)
        claim.start(
            query("claim"),
            {"types": ["t.scope"], "limit": 10, "worker_id": uuid.uuid4(), "hold_s": 12.0},
        )
        params = CancelSessionParams(blocker.pid)
        wait_until(
            lambda: claim.pid in (CANCEL_SESSION.preview(conn, params=params).details["blocks"]),
            timeout=30,
        )

        preview, result = preview_then_cancel(conn, params)

        assert preview.count == 1
        assert result.changed == 1
        wait_until(lambda: blocker.cancelled, timeout=30)
        blocker.conn.execute("ROLLBACK")
        assert claim.thread is not None
        claim.thread.join(30)
        assert claim.errors == []  # the claim went ahead once the lock was gone


def test_a_session_holding_the_horizon_past_the_threshold_over_dead_queue_rows_is_cancelled(
    dsn: str, conn: Conn
) -> None:
    with running(dsn, "sk-test-holder") as holder:
        holder.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.conn.execute("SELECT 1")  # its snapshot, older than the dead rows below
        dead_queue_rows(conn)
        holder.sleep_until_seen(conn, 1.0)

        preview, result = preview_then_cancel(conn, CancelSessionParams(holder.pid, horizon_s=1.0))

        assert (preview.count, preview.details["holds_horizon"]) == (1, True)
        assert preview.details["blocks"] == []
        assert result.changed == 1
        wait_until(lambda: holder.cancelled, timeout=30)


def test_a_session_of_another_database_is_refused_even_when_it_blocks_a_queue_named_table(
    dsn: str, conn: Conn, fresh_database: str
) -> None:
    """The other database has a table of the queue's name, locked by one of its sessions
    while another of its sessions waits: everything but the database qualifies."""
    with psycopg.connect(fresh_database, autocommit=True) as setup:
        setup.execute("CREATE TABLE sk_tasks_queue_t (task_id uuid)")
    with (
        running(fresh_database, "sk-test-elsewhere") as elsewhere,
        running(fresh_database, "sk-test-elsewhere-waiter") as waiter,
    ):
        elsewhere.conn.execute("BEGIN")
        elsewhere.conn.execute("LOCK TABLE sk_tasks_queue_t IN ACCESS EXCLUSIVE MODE")
        elsewhere.start(SLEEP)
        waiter.start("SELECT count(*) FROM sk_tasks_queue_t")
        wait_until(
            lambda: (
                (activity(conn, waiter.pid) or ("",))[0] == "active"
                and sleeping_for(conn, elsewhere.pid, 0.0)
            ),
            timeout=30,
        )
        conn.execute("SELECT pg_stat_clear_snapshot()")
        wait_until(
            lambda: (
                conn.execute(
                    "SELECT %s = ANY(pg_blocking_pids(%s))", (elsewhere.pid, waiter.pid)
                ).fetchone()
                == (True,)
            ),
            timeout=30,
        )

        preview, result = preview_then_cancel(conn, CancelSessionParams(elsewhere.pid))

        assert (preview.count, preview.details["eligible"]) == (0, False)
        assert (result.changed, result.skipped_changed_state) == (0, 1)
        assert sleeping_for(conn, elsewhere.pid, 0.0) and elsewhere.errors == []


def test_the_command_refuses_a_session_of_another_database_in_one_line(
    dsn: str, conn: Conn, fresh_database: str
) -> None:
    with running(fresh_database, "sk-test-elsewhere") as elsewhere:
        elsewhere.sleep_until_seen(conn, 0.0)

        done = cancel_session_command(dsn, elsewhere.pid)

        assert done.exit_code == 1, done.output
        refusals = [line for line in done.output.splitlines() if line.startswith("refused:")]
        assert len(refusals) == 1 and "another database" in refusals[0], done.output
        assert sleeping_for(conn, elsewhere.pid, 0.0) and elsewhere.errors == []
