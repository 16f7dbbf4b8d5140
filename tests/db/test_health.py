"""Queue-table health on a real server: the xmin horizon and who holds it, lock waits and who
blocks them, what a role without pg_read_all_stats cannot see, and the two actions (vacuum a
queue table, cancel a blocking session's statement), audited and refused when read-only."""

from __future__ import annotations

import json
import subprocess
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from psycopg import conninfo, sql
from typer.testing import CliRunner

from skconsole.core.actor import Actor
from skconsole.core.errors import ConfigError, ReadOnlyError
from skconsole.db.connect import Database
from skconsole.db.mapping import DEFAULT_MAPPING
from skconsole.ops.cancel_session import CANCEL_SESSION, CancelSessionParams
from skconsole.ops.vacuum import VACUUM, VacuumParams
from skconsole.read import health
from skconsole.read.health import Health, Thresholds
from tests.support.waiting import wait_until

from ..conftest import select_only_role

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]
ACTOR = Actor("tester", "test-host")
#: every advice rule speaks at once
EAGER = Thresholds(horizon_s=0.0, dead_share=0.0, dead_rows=1, lock_wait_s=0.0)


@contextmanager
def session(dsn: str, app: str) -> Iterator[Conn]:
    with psycopg.connect(dsn, autocommit=True, application_name=app) as c:
        yield c


def add_jobs(conn: Conn, n: int) -> list[uuid.UUID]:
    rows = conn.execute(
        "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_priority,"
        " task_locked_until_ts) SELECT gen_random_uuid(), 't.a', 'tests', 5, now()"
        " FROM generate_series(1, %s) RETURNING task_id",
        (n,),
    ).fetchall()
    return [r[0] for r in rows]


def flushed(conn: Conn) -> None:
    """Make this session's table statistics visible to the others now (PG 15+)."""
    conn.execute("SELECT pg_stat_force_next_flush()")
    conn.execute("SELECT 1")


def table(h: Health, name: str) -> health.TableHealth:
    return next(t for t in h.tables if t.table == name)


def test_health_reads_every_hot_table(conn: Conn) -> None:
    h = health.health(conn)
    assert [t.table for t in h.tables] == list(health.HOT_TABLES)
    queue = table(h, "sk_tasks_queue_t")
    assert queue.table_bytes > 0 and queue.index_bytes > 0
    # the schema's own settings for the queue (020_skconsole_v1.sql)
    assert queue.autovacuum.vacuum_scale_factor == 0.01
    assert "autovacuum_vacuum_scale_factor" in queue.autovacuum.from_table
    assert h.settings["autovacuum_vacuum_threshold"].isdigit()
    assert h.hidden == []  # the test role is a superuser
    json.dumps(h.as_dict())


def test_an_open_transaction_holds_the_horizon_and_the_dead_rows_it_pins_show(
    dsn: str, conn: Conn
) -> None:
    with session(dsn, "sk-test-holder") as holder:
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT 1 FROM sk_task_results_t LIMIT 1")  # its snapshot
        ids = add_jobs(conn, 2_000)
        conn.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = ANY(%s)", (ids,))
        conn.execute("VACUUM sk_tasks_queue_t")  # removes nothing the holder may still see
        flushed(conn)

        def seen() -> bool:
            h = health.health(conn, limits=EAGER)
            return table(h, "sk_tasks_queue_t").dead_rows >= 2_000

        wait_until(seen, timeout=30)
        h = health.health(conn, limits=EAGER)
        pid = holder.info.backend_pid
        assert h.horizon.holder == f"pid {pid}, sk-test-holder"
        assert h.horizon.age is not None and h.horizon.age >= 1
        assert h.horizon.age_s is not None and h.horizon.age_s >= 0
        held = next(s for s in h.horizon.sessions if s.pid == pid)
        assert held.state == "idle in transaction"
        assert held.xmin_age is not None and held.visible
        assert held.query == "SELECT 1 FROM sk_task_results_t LIMIT 1"
        queue = table(h, "sk_tasks_queue_t")
        assert queue.dead_rows >= 2_000 and queue.dead_share > 0.5
        assert queue.last_vacuum is not None
        texts = [a.text for a in h.advice if a.rule == "horizon_session"]
        assert len(texts) == 1
        assert f"(pid {pid}, sk-test-holder)" in texts[0]
        assert f"{queue.dead_rows:,} dead rows in sk_tasks_queue_t cannot be vacuumed" in texts[0]
        holder.execute("ROLLBACK")
    h = health.health(conn, limits=EAGER)
    assert all(s.pid != pid for s in h.horizon.sessions)


@contextmanager
def row_lock_wait(
    dsn: str, conn: Conn, *, blocker_sleeps: bool = False
) -> Iterator[tuple[Conn, int, list[BaseException]]]:
    """A blocker holding a queue row FOR UPDATE (optionally running pg_sleep in that
    transaction) and a waiter updating the row; yields (blocker, waiter pid, the errors
    each thread saw)."""
    (task_id,) = add_jobs(conn, 1)
    errors: list[BaseException] = []
    with session(dsn, "sk-test-blocker") as blocker, session(dsn, "sk-test-waiter") as waiter:
        blocker.execute("BEGIN")
        blocker.execute("SELECT 1 FROM sk_tasks_queue_t WHERE task_id = %s FOR UPDATE", (task_id,))

        def run(c: Conn, statement: str, params: tuple[Any, ...] = ()) -> None:
            try:
                c.execute(statement, params)
            except psycopg.Error as exc:
                errors.append(exc)

        threads = [
            threading.Thread(
                target=run,
                args=(waiter, "UPDATE sk_tasks_queue_t SET task_priority = 1 WHERE task_id = %s",
                      (task_id,)),
            )
        ]  # fmt: skip
        if blocker_sleeps:
            threads.append(threading.Thread(target=run, args=(blocker, "SELECT pg_sleep(60)")))
        for t in threads:
            t.start()
        try:
            yield blocker, waiter.info.backend_pid, errors
        finally:
            if not blocker_sleeps or all(not t.is_alive() for t in threads[1:]):
                blocker.execute("ROLLBACK")
            for t in threads:
                t.join(90)


def test_a_lock_wait_on_a_queue_row_shows_who_blocks_whom(dsn: str, conn: Conn) -> None:
    with row_lock_wait(dsn, conn) as (blocker, waiter_pid, _):
        blocker_pid = blocker.info.backend_pid

        def waiting() -> bool:
            return any(w.pid == waiter_pid for w in health.health(conn).lock_waits)

        wait_until(waiting, timeout=30)
        h = health.health(conn, limits=EAGER)
        wait = next(w for w in h.lock_waits if w.pid == waiter_pid)
        assert wait.blocked_by == (blocker_pid,)
        assert wait.table == "sk_tasks_queue_t"
        assert wait.application == "sk-test-waiter"
        assert wait.query is not None and wait.query.startswith("UPDATE sk_tasks_queue_t")
        assert wait.waited_s is not None and wait.waited_s >= 0
        (blocking,) = h.blockers
        assert (blocking.pid, blocking.application) == (blocker_pid, "sk-test-blocker")
        assert blocking.state == "idle in transaction"
        lock_advice = [a.text for a in h.advice if a.rule == "lock_wait"]
        assert lock_advice and f"blocked by pid {blocker_pid}, sk-test-blocker" in lock_advice[0]


def test_cancel_session_cancels_the_blockers_statement_and_is_audited(dsn: str, conn: Conn) -> None:
    with row_lock_wait(dsn, conn, blocker_sleeps=True) as (blocker, waiter_pid, errors):
        pid = blocker.info.backend_pid
        params = CancelSessionParams(pid)

        def blocks() -> bool:
            return waiter_pid in (CANCEL_SESSION.preview(conn, params=params).details["blocks"])

        wait_until(blocks, timeout=30)
        preview = CANCEL_SESSION.preview(conn, params=params)
        d = preview.details
        assert preview.count == 1
        assert (d["user"], d["application"], d["state"]) == (
            "postgres",
            "sk-test-blocker",
            "active",
        )
        assert d["query"] == "SELECT pg_sleep(60)"
        assert d["xact_age_s"] >= 0

        result = CANCEL_SESSION.execute(
            conn, params=CancelSessionParams(pid, d["backend_start"]), actor=ACTOR
        )
        assert (result.changed, result.skipped_changed_state) == (1, 0)
        wait_until(lambda: bool(errors), timeout=30)
        assert isinstance(errors[0], psycopg.errors.QueryCanceled)
        assert blocker.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
    audit = conn.execute(
        "SELECT audit_action, audit_count, audit_details FROM sk_audit_t"
    ).fetchall()
    assert [(a, n) for a, n, _ in audit] == [("cancel-session", 1)]
    assert audit[0][2]["pid"] == pid and audit[0][2]["cancelled"] is True


def test_cancel_session_refuses_a_session_that_no_longer_blocks(dsn: str, conn: Conn) -> None:
    with row_lock_wait(dsn, conn) as (blocker, _, _):
        pid = blocker.info.backend_pid
        wait_until(
            lambda: CANCEL_SESSION.preview(conn, params=CancelSessionParams(pid)).count == 1,
            timeout=30,
        )
        started = CANCEL_SESSION.preview(conn, params=CancelSessionParams(pid)).details[
            "backend_start"
        ]
        # a later session with the same pid is not the one previewed
        other = CANCEL_SESSION.execute(
            conn, params=CancelSessionParams(pid, started.replace(year=2000)), actor=ACTOR
        )
        assert (other.changed, other.skipped_changed_state) == (0, 1)
        blocker.execute("ROLLBACK")  # now it blocks nobody and holds no snapshot
        wait_until(lambda: not health.health(conn).lock_waits, timeout=30)
        preview = CANCEL_SESSION.preview(conn, params=CancelSessionParams(pid))
        assert preview.count == 0
        assert preview.details["blocks"] == [] and preview.details["eligible"] is False
        result = CANCEL_SESSION.execute(conn, params=CancelSessionParams(pid, started), actor=ACTOR)
        assert (result.changed, result.skipped_changed_state) == (0, 1)
    with pytest.raises(ConfigError):
        CancelSessionParams(0)


def test_vacuum_runs_outside_a_transaction_and_is_audited(conn: Conn) -> None:
    ids = add_jobs(conn, 500)
    conn.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = ANY(%s)", (ids,))
    preview = VACUUM.preview(conn, params=VacuumParams("sk_tasks_queue_t"))
    assert preview.count == 1 and preview.details["may_vacuum"] is True

    result = VACUUM.execute(conn, params=VacuumParams("sk_tasks_queue_t"), actor=ACTOR)

    assert result.changed == 1 and result.audit_id is not None
    ((action, count, details),) = conn.execute(
        "SELECT audit_action, audit_count, audit_details FROM sk_audit_t"
    ).fetchall()
    assert (action, count) == ("vacuum", 1)
    assert details["table"] == "sk_tasks_queue_t" and details["vacuumed"] is True
    flushed(conn)
    wait_until(
        lambda: table(health.health(conn), "sk_tasks_queue_t").last_vacuum is not None,
        timeout=30,
    )


def test_vacuum_takes_only_the_queue_tables() -> None:
    for name in ("sk_audit_t", "pg_class", 'sk_tasks_queue_t"; DROP TABLE x; --'):
        with pytest.raises(ConfigError, match="queue's tables"):
            VacuumParams(name).default_name(DEFAULT_MAPPING)


def test_vacuum_is_refused_on_a_read_only_session(dsn: str, conn: Conn) -> None:
    with (
        Database(dsn, read_only=True).connect() as ro,
        pytest.raises(ReadOnlyError, match="read-only"),
    ):
        VACUUM.execute(ro, params=VacuumParams("sk_tasks_queue_t"), actor=ACTOR)
    assert conn.execute("SELECT count(*) FROM sk_audit_t").fetchone() == (0,)


def test_cancel_session_is_refused_on_a_read_only_session(dsn: str) -> None:
    with (
        Database(dsn, read_only=True).connect() as ro,
        pytest.raises(ReadOnlyError, match="read-only"),
    ):
        CANCEL_SESSION.execute(ro, params=CancelSessionParams(12345), actor=ACTOR)


# -- a role without pg_read_all_stats ------------------------------------------------------
@pytest.fixture
def plain_role_dsn(dsn: str) -> Iterator[str]:
    """A login role that may read the queue's tables, without pg_read_all_stats."""
    with select_only_role(dsn, "sk_plain") as role_dsn:
        yield role_dsn


def test_without_pg_read_all_stats_other_sessions_are_hidden_and_said_so(
    dsn: str, plain_role_dsn: str
) -> None:
    with (
        session(dsn, "sk-test-holder") as holder,
        psycopg.connect(plain_role_dsn, autocommit=True) as plain,
    ):
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT 1 FROM sk_task_results_t LIMIT 1")
        holder_pid = holder.info.backend_pid
        h = health.health(plain)
        holder.execute("ROLLBACK")
    assert any("pg_read_all_stats" in note for note in h.hidden)
    held = next(s for s in h.horizon.sessions if s.pid == holder_pid)
    # still there, with its pid, application and snapshot age; the rest is hidden
    assert held.visible is False and held.query is None and held.state is None
    assert held.application == "sk-test-holder" and held.xmin_age is not None
    assert h.horizon.holder == f"pid {held.pid}, sk-test-holder"
    assert [t.table for t in h.tables] == list(health.HOT_TABLES)


def test_a_role_that_may_not_vacuum_is_refused(plain_role_dsn: str, conn: Conn) -> None:
    with psycopg.connect(plain_role_dsn, autocommit=True) as plain:
        assert (
            VACUUM.preview(plain, params=VacuumParams("sk_metrics_t")).details["may_vacuum"]
            is False
        )
        with pytest.raises(ReadOnlyError):
            VACUUM.execute(plain, params=VacuumParams("sk_metrics_t"), actor=ACTOR)


def test_a_role_granted_maintain_on_the_table_may_vacuum_it(
    plain_role_dsn: str, conn: Conn
) -> None:
    if conn.info.server_version < 170000:
        pytest.skip("the MAINTAIN privilege came with PostgreSQL 17")
    role = sql.Identifier(str(conninfo.conninfo_to_dict(plain_role_dsn)["user"]))
    conn.execute(sql.SQL("GRANT MAINTAIN ON sk_metrics_t TO {}").format(role))
    # an operator's role also writes the audit row
    conn.execute(sql.SQL("GRANT INSERT, UPDATE ON sk_audit_t TO {}").format(role))
    conn.execute(sql.SQL("GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {}").format(role))
    with psycopg.connect(plain_role_dsn, autocommit=True) as plain:
        preview = VACUUM.preview(plain, params=VacuumParams("sk_metrics_t"))
        assert preview.details["may_vacuum"] is True

        VACUUM.execute(plain, params=VacuumParams("sk_metrics_t"), actor=ACTOR)


# -- the CLI -------------------------------------------------------------------------------
HOSTILE = "\x1b]0;pwned\x07\x1b[31mred\u202e"


def test_status_health_json_parses(run_cli: CLI) -> None:
    proc = run_cli("status", "health", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [t["table"] for t in doc["tables"]] == list(health.HOT_TABLES)
    assert set(doc["horizon"]) >= {"age", "holder", "sessions", "slots", "prepared"}


def test_status_health_shows_hostile_text_escaped(dsn: str, run_cli: CLI) -> None:
    with session(dsn, f"sk-test{HOSTILE}") as holder:
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute(f'SELECT 1 AS "{HOSTILE.replace(chr(7), "")}"')
        holder_pid = holder.info.backend_pid
        proc = run_cli("status", "health", "--wide", env={"COLUMNS": "250"})
        holder.execute("ROLLBACK")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout and "\x07" not in proc.stdout
    assert "\\x1b[31mred\\u202e" in proc.stdout  # the query, escaped
    assert f"held by pid {holder_pid}, sk-test" in proc.stdout


def test_the_vacuum_and_cancel_session_commands(dsn: str, conn: Conn) -> None:
    """In process: ``skconsole.cli.health`` registers the commands when imported."""
    import skconsole.cli.health  # noqa: F401
    from skconsole.cli.app import app

    runner = CliRunner()
    done = runner.invoke(app, ["--dsn", dsn, "vacuum", "--table", "sk_metrics_t", "--yes"])
    assert done.exit_code == 0, done.output
    assert "vacuumed sk_metrics_t (audit #" in done.output
    bad = runner.invoke(app, ["--dsn", dsn, "vacuum", "--table", "sk_audit_t", "--yes"])
    assert isinstance(bad.exception, ConfigError)  # main() turns it into exit code 2
    ro = runner.invoke(
        app, ["--dsn", dsn, "--read-only", "vacuum", "--table", "sk_metrics_t", "--yes"]
    )
    assert isinstance(ro.exception, ReadOnlyError)  # main() turns it into exit code 5
    idle = runner.invoke(
        app, ["--dsn", dsn, "cancel-session", "--pid", str(conn.info.backend_pid), "--yes"]
    )
    assert idle.exit_code == 1 and "refused: pid" in idle.output
    with row_lock_wait(dsn, conn) as (blocker, _, _):
        pid = blocker.info.backend_pid
        wait_until(
            lambda: CANCEL_SESSION.preview(conn, params=CancelSessionParams(pid)).count == 1,
            timeout=30,
        )
        dry = runner.invoke(app, ["--dsn", dsn, "cancel-session", "--pid", str(pid), "--dry-run"])
        assert dry.exit_code == 0, dry.output
        assert "application sk-test-blocker" in dry.output and "idle in transaction" in dry.output
        assert "ignores a cancel" in dry.output
