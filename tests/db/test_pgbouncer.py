"""Behind PgBouncer: transaction pooling works (each transaction carries skconsole's
settings, nothing needs a session), statement pooling is refused with one clear line,
session pooling works with skconsole's session settings and the user's options.

Each test starts a real ``pgbouncer`` (the Debian package; .ci/run installs it) on a
free 127.0.0.1 port, in front of the test server (tests.support.pgbouncer). PgBouncer
refuses libpq's ``options`` startup parameter unless told to ignore it; skconsole then
applies its settings with ``set_config``: once after connecting (session mode), or at
the start of every transaction (transaction mode).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from skconsole.core.errors import PoolerError
from skconsole.db.connect import Database
from skconsole.db.pooled import through_transaction_pooler
from skconsole.db.session_probe import direct_tcp_session, probe_sessions
from skconsole.db.target import open_database
from skconsole.producer import Job, Producer
from tests.support.rows import one_row

from .test_cli_errors import assert_one_line_error

CLI = Callable[..., subprocess.CompletedProcess[str]]


def show(conn: psycopg.Connection[Any], name: str) -> str:
    row = one_row(conn, "SELECT current_setting(%s)", (name,))
    return str(row[0])


def count(conn: psycopg.Connection[Any], where: str = "true") -> int:
    row = one_row(conn, f"SELECT count(*) FROM sk_task_results_t WHERE {where}")
    return int(row[0])


# -- statement pooling: refused ----------------------------------------------------------
def test_status_through_statement_pooling_fails_with_one_line_naming_it(
    run_cli: CLI, pgbouncer: Callable[..., str]
) -> None:
    bouncer = pgbouncer("statement")

    proc = run_cli("--dsn", bouncer, "status", use_dsn=False)

    line = assert_one_line_error(proc, "connection pooler in statement mode", "transaction")
    assert "server process" in line
    assert proc.returncode == 3


def test_statement_pooling_is_refused_when_a_producer_first_connects(
    pgbouncer: Callable[..., str],
) -> None:
    with pytest.raises(PoolerError, match="statement mode"):
        Database(pgbouncer("statement")).connect()


# -- transaction pooling: found, even while the pooler is busy --------------------------------
def test_transaction_pooling_is_found_every_time_while_other_clients_keep_the_pooler_busy(
    pgbouncer: Callable[..., str],
) -> None:
    """One round of the probe missed the pooler 19 times in 200 under this load (a busy
    server session freed just in time to look like the client's own)."""
    bouncer = pgbouncer("transaction")
    busy = threading.Event()
    done = threading.Event()

    def load() -> None:
        with psycopg.connect(bouncer, autocommit=True, prepare_threshold=None) as c:
            while not done.is_set():
                c.execute("SELECT pg_sleep(0.002)")
                busy.set()

    def connect() -> psycopg.Connection[Any]:
        return psycopg.connect(bouncer, autocommit=True, prepare_threshold=None)

    threads = [threading.Thread(target=load) for _ in range(8)]
    for t in threads:
        t.start()
    try:
        assert busy.wait(10)
        verdicts = []
        for _ in range(60):
            with connect() as conn:
                verdicts.append(probe_sessions(conn, connect).pooled)
    finally:
        done.set()
        for t in threads:
            t.join()

    assert [v for v in verdicts if v is None] == []


def test_through_a_pooler_in_session_mode_sessions_are_not_proven_direct_but_probed_real(
    pgbouncer: Callable[..., str],
) -> None:
    bouncer = pgbouncer("session", ignore_startup_parameters="options")

    def connect() -> psycopg.Connection[Any]:
        return psycopg.connect(bouncer, autocommit=True, prepare_threshold=None)

    with connect() as conn:
        assert not direct_tcp_session(conn)
        assert probe_sessions(conn, connect).pooled is None


# -- transaction pooling: each transaction carries the settings -------------------------------
@pytest.mark.parametrize(
    "settings", [{}, {"ignore_startup_parameters": "options"}], ids=["refused", "ignored"]
)
def test_through_transaction_pooling_connections_are_pooled_ones(
    pgbouncer: Callable[..., str], settings: dict[str, str]
) -> None:
    db = Database(pgbouncer("transaction", **settings))

    with db.connect() as c:
        assert through_transaction_pooler(c)
        assert db.pooled


def test_through_transaction_pooling_every_statement_and_transaction_gets_skconsoles_settings(
    pgbouncer: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PGOPTIONS", raising=False)
    db = Database(pgbouncer("transaction"))

    with db.connect() as c:
        alone = (show(c, "statement_timeout"), show(c, "jit"))
        with c.transaction():
            within = (show(c, "statement_timeout"), show(c, "jit"))

    assert alone == within == ("30s", "off")


def test_through_transaction_pooling_the_users_options_reach_every_transaction(
    pgbouncer: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PGOPTIONS", raising=False)
    bouncer = pgbouncer("transaction") + "?options=-csearch_path%3Dqueue%2C%5C%20public"

    with open_database(bouncer, setup=False).connect() as c:
        assert show(c, "search_path") == "queue, public"
        assert show(c, "search_path") == "queue, public"


def test_through_transaction_pooling_a_read_only_database_refuses_writes_on_the_server(
    pgbouncer: Callable[..., str],
) -> None:
    db = Database(pgbouncer("transaction"), read_only=True)

    with db.connect() as c:
        assert show(c, "transaction_read_only") == "on"
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            c.execute("CREATE TEMP TABLE sk_read_only_probe (x int)")


def test_through_transaction_pooling_async_connections_get_a_links_own_settings(
    pgbouncer: Callable[..., str],
) -> None:
    db = Database(pgbouncer("transaction"))

    async def settings() -> tuple[Any, ...] | None:
        async with await db.aconnect(options="-c lock_timeout=5s") as c:
            assert through_transaction_pooler(c)
            cur = await c.execute(
                "SELECT current_setting('statement_timeout'), current_setting('lock_timeout')"
            )
            return await cur.fetchone()

    assert asyncio.run(settings()) == ("30s", "5s")


def test_through_transaction_pooling_no_setting_of_ours_stays_on_the_shared_server_session(
    pgbouncer: Callable[..., str],
) -> None:
    bouncer = pgbouncer("transaction", default_pool_size=1)
    with Database(bouncer).connect() as ours:
        ours.execute("SELECT 1")
        with ours.transaction():
            ours.execute("SELECT 1")

    with psycopg.connect(bouncer, autocommit=True, prepare_threshold=None) as other:
        assert show(other, "statement_timeout") == "0"
        assert show(other, "jit") == "on"


def test_through_transaction_pooling_a_setting_another_client_leaves_behind_does_not_reach_ours(
    pgbouncer: Callable[..., str],
) -> None:
    bouncer = pgbouncer("transaction", default_pool_size=1)
    with psycopg.connect(bouncer, autocommit=True, prepare_threshold=None) as other:
        other.execute("SET statement_timeout = '1s'")
        other.execute("SET jit = on")
        other.execute("SET default_transaction_read_only = on")

    with Database(bouncer).connect() as ours:
        assert (show(ours, "statement_timeout"), show(ours, "jit")) == ("30s", "off")
        with Producer(Database(bouncer)) as producer:
            producer.post("pooled.job")
        assert count(ours) == 1


def test_through_transaction_pooling_a_statement_asked_to_be_prepared_runs_unprepared(
    pgbouncer: Callable[..., str],
) -> None:
    bouncer = pgbouncer("transaction", default_pool_size=2)
    db = Database(bouncer)

    with db.connect() as a, db.connect() as b:
        for _ in range(10):  # clients interleaved on two server sessions
            for c in (a, b):
                assert c.execute("SELECT %s::int", (1,), prepare=True).fetchone() == (1,)


# -- transaction pooling: posts, commands, operator actions, a worker -------------------------
def test_through_transaction_pooling_a_producer_posts_one_many_and_in_the_callers_transaction(
    pgbouncer: Callable[..., str], conn: psycopg.Connection[Any]
) -> None:
    bouncer = pgbouncer("transaction")

    with Producer(Database(bouncer)) as producer:
        producer.post("pooled.one")
        producer.post_many([Job("pooled.many", i) for i in range(500)])
    with psycopg.connect(bouncer, prepare_threshold=None) as mine:
        with mine.transaction():
            mine.execute("SELECT 1")
            Producer(Database(bouncer)).post("pooled.mine", connection=mine)
        with pytest.raises(ZeroDivisionError), mine.transaction():
            Producer(Database(bouncer)).post("pooled.rolled-back", connection=mine)
            raise ZeroDivisionError

    assert count(conn, "task_type = 'pooled.one'") == 1
    assert count(conn, "task_type = 'pooled.many'") == 500
    assert count(conn, "task_type = 'pooled.mine'") == 1
    assert count(conn, "task_type = 'pooled.rolled-back'") == 0


def test_through_transaction_pooling_every_command_and_operator_action_works(
    run_cli: CLI, pgbouncer: Callable[..., str], conn: psycopg.Connection[Any]
) -> None:
    bouncer = pgbouncer("transaction")

    def ok(*args: str) -> subprocess.CompletedProcess[str]:
        proc = run_cli("--dsn", bouncer, *args, use_dsn=False)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc

    ok("setup")
    ids = ok("enqueue", "pooled.job", "--count", "4").stdout.split()
    ok("status", "--json")
    ok("job", ids[0])
    ok("find", "--type", "pooled.job")
    ok("why", ids[0])
    ok("bump", "--type", "pooled.job", "--by", "1", "--yes")
    ok("edit", "--id", ids[1], "--payload", '{"edited": true}', "--yes")
    ok("pause", "pooled.job", "--yes")
    ok("resume", "pooled.job", "--yes")
    ok("cancel", "--id", ids[2], "--yes")
    ok("limit", "pooled.job", "--concurrency", "2", "--yes")
    ok("vacuum", "--table", "sk_tasks_queue_t", "--yes")
    conn.execute(
        "UPDATE sk_task_results_t SET task_status = 5, task_last_error = 'boom' WHERE task_id = %s",
        (ids[3],),
    )
    ok("requeue", "--id", ids[3], "--yes")
    ok("reap", "--yes")
    ok("purge", "--id", ids[2], "--yes")
    ok("audit")
    check = run_cli("--dsn", bouncer, "check", use_dsn=False)

    assert check.returncode in (0, 1), check.stdout + check.stderr
    assert "SKCONSOLE" in check.stdout
    assert json.loads(ok("status", "--json").stdout)["statuses"]["Unprocessed"] == 3


def test_through_transaction_pooling_building_a_search_index_is_refused_with_one_line(
    run_cli: CLI, pgbouncer: Callable[..., str]
) -> None:
    bouncer = pgbouncer("transaction")
    proc = run_cli(
        "--dsn", bouncer, "find-index", "add", "payload.customer", "--yes", use_dsn=False
    )

    assert_one_line_error(proc, "needs a session of its own", "directly")
    assert proc.returncode == 3


def _twenty_jobs_run_by_a_burst_worker(
    run_cli: CLI, bouncer: str
) -> subprocess.CompletedProcess[str]:
    """20 retry.ok jobs posted through the pooler at ``bouncer``, then a burst worker that
    runs them through it: the worker's command."""
    run_cli("--dsn", bouncer, "enqueue", "retry.ok", "--count", "20", use_dsn=False)
    worker = ("worker", "--tasks", "tests.support.tasks_retry", "--types", "retry.ok", "--burst")
    return run_cli("--dsn", bouncer, *worker, use_dsn=False)


def test_a_worker_through_transaction_pooling_processes_jobs_and_shows_alive(
    run_cli: CLI, conn: psycopg.Connection[Any], pgbouncer: Callable[..., str]
) -> None:
    proc = _twenty_jobs_run_by_a_burst_worker(run_cli, pgbouncer("transaction"))

    assert proc.returncode == 0, proc.stderr
    assert count(conn, "task_status = 3") == 20
    row = conn.execute("SELECT worker_session_lock FROM sk_workers_t").fetchone()
    assert row == (False,)


# -- session pooling works -----------------------------------------------------------------
def test_status_through_session_pooling_works(
    run_cli: CLI, conn: psycopg.Connection[Any], pgbouncer: Callable[..., str]
) -> None:
    bouncer = pgbouncer("session")

    posted = run_cli("--dsn", bouncer, "enqueue", "pooled.job", use_dsn=False)
    proc = run_cli("--dsn", bouncer, "status", "--json", use_dsn=False)

    assert posted.returncode == 0, posted.stderr
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["statuses"]["Unprocessed"] == 1


def test_a_worker_through_session_pooling_processes_jobs(
    run_cli: CLI, conn: psycopg.Connection[Any], pgbouncer: Callable[..., str]
) -> None:
    proc = _twenty_jobs_run_by_a_burst_worker(run_cli, pgbouncer("session"))

    assert proc.returncode == 0, proc.stderr
    assert count(conn, "task_status = 3") == 20


def test_through_session_pooling_sessions_get_skconsoles_settings(
    pgbouncer: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PGOPTIONS", raising=False)
    db = open_database(pgbouncer("session"), setup=False)

    with db.connect() as c:
        assert show(c, "statement_timeout") == "30s"
        assert show(c, "jit") == "off"


def test_through_session_pooling_the_users_options_reach_the_server(
    pgbouncer: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PGOPTIONS", raising=False)
    bouncer = pgbouncer("session") + "?options=-csearch_path%3Dqueue%2C%5C%20public"

    with open_database(bouncer, setup=False).connect() as c:
        assert show(c, "search_path") == "queue, public"


@pytest.mark.parametrize(
    "settings", [{}, {"ignore_startup_parameters": "options"}], ids=["refused", "ignored"]
)
def test_through_session_pooling_read_only_sessions_stay_read_only_on_the_server(
    pgbouncer: Callable[..., str], settings: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGOPTIONS", "-c default_transaction_read_only=off")
    db = open_database(pgbouncer("session", **settings), read_only=True)

    with db.connect() as c:
        assert show(c, "default_transaction_read_only") == "on"
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            c.execute("CREATE TEMP TABLE sk_read_only_probe (x int)")


def test_through_session_pooling_async_sessions_get_skconsoles_settings(
    pgbouncer: Callable[..., str],
) -> None:
    import asyncio

    db = Database(pgbouncer("session"), read_only=True)

    async def settings() -> tuple[Any, ...] | None:
        async with await db.aconnect() as c:
            cur = await c.execute(
                "SELECT current_setting('statement_timeout'), "
                "current_setting('default_transaction_read_only')"
            )
            return await cur.fetchone()

    assert asyncio.run(settings()) == ("30s", "on")
