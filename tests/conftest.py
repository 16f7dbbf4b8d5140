"""Fixtures: a real PostgreSQL for every test.

Tests run in parallel processes (pytest-xdist, ``-n`` in pyproject.toml), each
with a database of its own, so no two processes ever truncate each other's
tables. By default each process starts an embedded server in a temporary
directory (deleted at the end): a test that restarts or cuts off its server
disturbs no other process. With SKCONSOLE_TEST_DSN every process uses that
server, in a database of its own (``sk_test_<database>_<worker>``, made afresh:
two suites given two databases of one server do not meet); tests
that restart the server itself are marked ``restarts_server`` and must run
alone (``.ci/run`` runs them in a pass of their own). Each test gets clean
skconsole tables; schema tests get a database of their own (``fresh_database``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import conninfo, sql

from skconsole.db.connect import Database
from skconsole.db.embedded import EmbeddedServer
from skconsole.db.schema import setup_schema
from tests.support.cli import run_in_process
from tests.support.pgbouncer import PGBOUNCER, Bouncers

ROOT = Path(__file__).resolve().parent.parent
TABLES = (
    "sk_tasks_queue_t",
    "sk_task_results_t",
    "sk_metrics_t",
    "sk_task_execution_time_stats_t",
    "sk_workers_t",
    "sk_task_types_t",
    "sk_audit_t",
    "sk_schedules_t",
    "sk_retention_t",
    "sk_attempts_t",
    "sk_task_after_t",
    "sk_task_key_windows_t",
    "sk_record_t",
    "sk_record_fresh_t",
    "sk_record_gauges_t",
    "sk_breakers_t",
    "sk_breaker_held_t",
    "sk_waves_t",
    "sk_wave_plans_t",
)


@pytest.fixture(scope="session")
def server_dsn() -> Iterator[str]:
    """DSN of the server the whole session uses (its default database)."""
    given = os.environ.get("SKCONSOLE_TEST_DSN")
    if given:
        yield given
        return
    tmp = Path(tempfile.mkdtemp(prefix="skconsole-test-"))
    server = EmbeddedServer(tmp / "pgdata")
    dsn = server.start(cleanup="delete")
    try:
        yield dsn
    finally:
        server.release()
        shutil.rmtree(tmp, ignore_errors=True)


#: this test process's name among pytest-xdist's ("gw0", ...), or "main" without xdist
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")


@pytest.fixture(scope="session")
def _schema(server_dsn: str) -> Iterator[str]:
    """The database this process's tests share, with the schema set up: the server's own
    on a server this process started, a database of this process's on a shared one."""
    if not os.environ.get("SKCONSOLE_TEST_DSN"):
        with psycopg.connect(server_dsn, autocommit=True) as conn:
            setup_schema(conn)
        yield server_dsn
        return
    name = _process_database(server_dsn)
    yield _database_with_schema(server_dsn, name)
    _drop_database(server_dsn, name)


def _process_database(server_dsn: str) -> str:
    """This process's database on a shared server, named after the one the DSN gives."""
    given = conninfo.conninfo_to_dict(server_dsn).get("dbname") or "postgres"
    return f"sk_test_{given}_{WORKER}"


def with_dbname(dsn: str, name: str) -> str:
    """``dsn`` naming database ``name``, in the same form (a URL stays a URL: some tools,
    SQLAlchemy's among them, take only URLs)."""
    scheme, sep, _ = dsn.partition("://")
    if sep and scheme in ("postgresql", "postgres"):
        parts = urlsplit(dsn)
        return urlunsplit(parts._replace(path="/" + quote(name)))
    params = conninfo.conninfo_to_dict(dsn)
    params["dbname"] = name
    return conninfo.make_conninfo(**params)  # type: ignore[arg-type]


def _recreate_database(server_dsn: str, name: str) -> None:
    """A new, empty database ``name`` (one an earlier, interrupted run left is dropped)."""
    with psycopg.connect(server_dsn, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def _database_with_schema(server_dsn: str, name: str) -> str:
    """A new database ``name`` with the schema set up; its DSN."""
    _recreate_database(server_dsn, name)
    dsn = with_dbname(server_dsn, name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        setup_schema(conn)
    return dsn


@pytest.fixture
def dsn(_schema: str) -> str:
    """The session server with the schema set up and every skconsole table emptied."""
    return _emptied(_schema)


def _emptied(dsn: str) -> str:
    """``dsn`` with every skconsole table emptied, once the sessions of an earlier test's
    workers (which may still hold connections) are ended."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name LIKE 'skconsole%%' AND pid <> pg_backend_pid() AND datname = current_database()"
        )
        conn.execute("TRUNCATE " + ", ".join(TABLES) + " RESTART IDENTITY")  # type: ignore[arg-type]
    return dsn


def _drop_database(server_dsn: str, name: str) -> None:
    with psycopg.connect(server_dsn, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def db(dsn: str) -> Database:
    return Database(dsn)


@pytest.fixture
def conn(dsn: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(dsn, autocommit=True) as c:
        yield c


@pytest.fixture
def fresh_database(server_dsn: str) -> Iterator[str]:
    """A new, empty database on the session server; dropped afterwards."""
    name = f"sk_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_dsn, autocommit=True) as c:
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield with_dbname(server_dsn, name)
    _drop_database(server_dsn, name)


@pytest.fixture(scope="module")
def _second_database(server_dsn: str) -> Iterator[str]:
    """A second queue's database (this process's, ``sk_test_<database>_<worker>_second``)
    with the schema, for the tests of several queues; dropped once the module's tests are
    done."""
    name = f"{_process_database(server_dsn)}_second"
    yield _database_with_schema(server_dsn, name)
    _drop_database(server_dsn, name)


@pytest.fixture
def second(_second_database: str) -> str:
    """A second queue beside ``dsn``'s, its tables emptied (sessions left over ended)."""
    return _emptied(_second_database)


@pytest.fixture
def nowhere() -> str:
    """A DSN on a local port nothing listens on: every connection is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"postgresql://postgres@127.0.0.1:{port}/nowhere"


@contextlib.contextmanager
def select_only_role(dsn: str, prefix: str = "sk_ro") -> Iterator[str]:
    """The DSN of a new login role that may only SELECT the tables of ``dsn``'s public
    schema (without pg_read_all_stats); dropped afterwards (roles are cluster-wide)."""
    role = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        c.execute(
            sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA public TO {}").format(
                sql.Identifier(role)
            )
        )
    params = conninfo.conninfo_to_dict(dsn)
    params["user"] = role
    try:
        yield conninfo.make_conninfo(**params)  # type: ignore[arg-type]
    finally:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
            )
            c.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            c.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def skconsole_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "skconsole", *args]


@pytest.fixture
def run_cli(dsn: str) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the CLI against the test database; returns the completed process. In this
    process (tests/support/cli.py) unless ``process=True``: a real ``skconsole``
    process, for what only a process shows (its interpreter's exit, signals, the
    embedded server started from the command line)."""

    def run(
        *args: str,
        input: str | None = None,
        timeout: float = 120,
        env: dict[str, str] | None = None,
        use_dsn: bool = True,
        process: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        full = ["--dsn", dsn, *args] if use_dsn else list(args)
        if not process:
            return run_in_process(full, input=input, env=env)
        return subprocess.run(
            skconsole_cmd(*full),
            capture_output=True,
            text=True,
            input=input,
            timeout=timeout,
            env={**os.environ, **(env or {})},
            cwd=ROOT,
        )

    return run


@pytest.fixture
def start_worker(dsn: str) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start `skconsole worker` processes on the test database, or on the one an ``--dsn``
    among ``args`` names (a proxy's: a worker works on one queue, and two --dsn name two);
    any still running at the end are killed."""
    procs: list[subprocess.Popen[str]] = []

    def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        target = () if "--dsn" in args else ("--dsn", dsn)
        p = subprocess.Popen(
            skconsole_cmd(*target, "worker", *args),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
            cwd=ROOT,
            start_new_session=True,
        )
        procs.append(p)
        return p

    yield start
    for p in procs:
        # the whole process group: a supervisor's children too
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait(10)


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """Where the fault-test handlers (tests.support.tasks_faults) log each completed job."""
    d = tmp_path / "completions"
    d.mkdir()
    return d


@pytest.fixture
def spawn(start_worker: Callable[..., Any], log_dir: Path) -> Callable[..., Any]:
    """Start `worker --tasks tests.support.tasks_faults ARGS`; its output is drained so it never blocks;
    every process group started is SIGKILLed at the end (start_worker's)."""
    from tests.support.tasks_faults import OutputDrain

    def spawn(*args: str) -> Any:
        p = start_worker(
            "--tasks", "tests.support.tasks_faults", *args, env={"SKTEST_LOG_DIR": str(log_dir)}
        )
        p.drain = OutputDrain(p)
        return p

    return spawn


@pytest.fixture
def bouncers(dsn: str) -> Iterator[Bouncers]:
    """Start real PgBouncers in front of the test database (tests.support.pgbouncer):
    ``bouncers.start(pool_mode, **settings)`` returns one; all are stopped at the end."""
    if PGBOUNCER is None:
        pytest.skip("pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it)")
    started = Bouncers(dsn)
    yield started
    started.close()


@pytest.fixture
def pgbouncer(bouncers: Bouncers) -> Callable[..., str]:
    """``pgbouncer(pool_mode, **settings)``: the DSN of a new PgBouncer in front of the test
    database."""

    def start(pool_mode: str, **settings: str | int) -> str:
        return bouncers.start(pool_mode, **settings).dsn

    return start
