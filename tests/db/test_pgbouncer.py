"""Behind PgBouncer: transaction (and statement) pooling is refused with one clear line,
session pooling works, with skconsole's session settings and the user's options.

Each test starts a real ``pgbouncer`` (the Debian package; .ci/run installs it) on a
free 127.0.0.1 port, in front of the test server (the embedded server's unix
socket, or the SKCONSOLE_TEST_DSN server). PgBouncer refuses libpq's ``options``
startup parameter unless told to ignore it; skconsole then applies its settings
with ``set_config`` after connecting.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import conninfo

from skconsole.core.errors import PoolerError
from skconsole.db.connect import Database
from skconsole.db.target import open_database

from .test_cli_errors import assert_one_line_error

CLI = Callable[..., subprocess.CompletedProcess[str]]
PGBOUNCER = shutil.which("pgbouncer") or next(
    (p for p in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if os.access(p, os.X_OK)), None
)
pytestmark = pytest.mark.skipif(
    PGBOUNCER is None,
    reason="pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it)",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"pgbouncer exited ({proc.returncode}): {log.read_text()}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise AssertionError(f"pgbouncer did not listen on {port}: {log.read_text()}")


@pytest.fixture
def pgbouncer(dsn: str) -> Iterator[Callable[..., str]]:
    """Start a pgbouncer in front of the test database; returns the DSN to reach it through.

    ``pgbouncer(pool_mode, **settings)``: extra ``[pgbouncer]`` settings as keywords.
    Every one started is stopped at the end.
    """
    server = conninfo.conninfo_to_dict(dsn)
    user = str(server.get("user") or getpass.getuser())
    target = {
        "host": str(server.get("host") or "localhost"),
        "port": str(server.get("port") or 5432),
        "dbname": str(server.get("dbname") or user),
        "user": user,
    }
    if server.get("password"):
        target["password"] = str(server["password"])
    # as root: the unprivileged user that can reach the server, i.e. the owner of the
    # embedded server's socket directory (its data directory, mode 0700), else nobody
    socket_dir = Path(target["host"])
    owner = socket_dir.stat().st_uid if socket_dir.is_dir() else 0
    run_as = pwd.getpwuid(owner).pw_name if owner else "nobody"
    procs: list[subprocess.Popen[bytes]] = []
    tmp = Path(tempfile.mkdtemp(prefix="skconsole-pgbouncer-"))
    tmp.chmod(0o755)  # pgbouncer runs as an unprivileged user

    def start(pool_mode: str, **settings: str) -> str:
        port = free_port()
        # a DSN of its own, so nothing this process learnt about another pgbouncer applies
        alias = f"skq_{uuid.uuid4().hex[:8]}"
        ini = tmp / f"pgbouncer-{port}.ini"
        users = tmp / f"users-{port}.txt"
        users.write_text(f'"{user}" ""\n')
        lines = [
            "[databases]",
            f"{alias} = " + " ".join(f"{k}={v}" for k, v in target.items()),
            "[pgbouncer]",
            "listen_addr = 127.0.0.1",
            f"listen_port = {port}",
            "unix_socket_dir =",
            "auth_type = trust",
            f"auth_file = {users}",
            f"pool_mode = {pool_mode}",
            *(f"{k} = {v}" for k, v in settings.items()),
        ]
        ini.write_text("\n".join(lines) + "\n")
        for f in (ini, users):
            f.chmod(0o644)
        log = tmp / f"pgbouncer-{port}.log"
        as_user = ["-u", run_as] if os.geteuid() == 0 else []  # it refuses to run as root
        assert PGBOUNCER is not None
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [PGBOUNCER, *as_user, str(ini)], stdout=out, stderr=subprocess.STDOUT
            )
        procs.append(proc)
        wait_for_port(port, proc, log)
        return f"postgresql://{user}@127.0.0.1:{port}/{alias}"

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    shutil.rmtree(tmp, ignore_errors=True)


def show(conn: psycopg.Connection[Any], name: str) -> str:
    row = conn.execute("SELECT current_setting(%s)", (name,)).fetchone()
    assert row is not None
    return str(row[0])


# -- refused --------------------------------------------------------------------------------
@pytest.mark.parametrize("pool_mode", ["transaction", "statement"])
def test_status_through_a_pooler_that_does_not_keep_sessions_fails_with_one_line_naming_it(
    run_cli: CLI, pgbouncer: Callable[..., str], pool_mode: str
) -> None:
    bouncer = pgbouncer(pool_mode)

    proc = run_cli("--dsn", bouncer, "status", use_dsn=False)

    line = assert_one_line_error(proc, "connection pooler in transaction mode", "session mode")
    assert "server process" in line
    assert proc.returncode == 3


@pytest.mark.parametrize(
    "command",
    [("setup",), ("enqueue", "pooled.job"), ()],
    ids=["setup", "enqueue", "console"],
)
def test_every_command_through_transaction_pooling_fails_with_one_line_naming_it(
    run_cli: CLI, pgbouncer: Callable[..., str], command: tuple[str, ...]
) -> None:
    bouncer = pgbouncer("transaction")

    proc = run_cli("--dsn", bouncer, *command, use_dsn=False, timeout=60)

    assert_one_line_error(proc, "connection pooler in transaction mode")
    assert proc.returncode == 3


def test_a_worker_through_transaction_pooling_is_refused_before_it_starts(
    run_cli: CLI, pgbouncer: Callable[..., str]
) -> None:
    bouncer = pgbouncer("transaction")

    proc = run_cli(
        "--dsn", bouncer, "worker", "--tasks", "tests.support.tasks_retry", "--burst", use_dsn=False
    )

    assert_one_line_error(proc, "connection pooler in transaction mode")
    assert proc.returncode == 3


def test_transaction_pooling_is_refused_even_when_the_pooler_ignores_the_options(
    pgbouncer: Callable[..., str],
) -> None:
    bouncer = pgbouncer("transaction", ignore_startup_parameters="options")

    with pytest.raises(PoolerError, match="two sessions share server process"):
        open_database(bouncer, setup=False)


def test_transaction_pooling_is_refused_when_a_producer_first_connects(
    pgbouncer: Callable[..., str],
) -> None:
    bouncer = pgbouncer("transaction")

    with pytest.raises(PoolerError):
        Database(bouncer).connect()


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
    bouncer = pgbouncer("session")
    run_cli("--dsn", bouncer, "enqueue", "retry.ok", "--count", "20", use_dsn=False)

    proc = run_cli(
        "--dsn",
        bouncer,
        "worker",
        "--tasks",
        "tests.support.tasks_retry",
        "--types",
        "retry.ok",
        "--burst",
        use_dsn=False,
    )

    assert proc.returncode == 0, proc.stderr
    assert conn.execute(
        "SELECT count(*) FROM sk_task_results_t WHERE task_status = 3"
    ).fetchone() == (20,)


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
