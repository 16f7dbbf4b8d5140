"""``skconsole db uri`` reaches the database asked for: ``--database NAME``, or with
``--demo`` the demo's own (skconsole_demo), on the server of --data-dir."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator

import psycopg
import pytest
from psycopg import conninfo, sql

from skconsole.db.connect import Database
from skconsole.demo.scenario import DEMO_DATABASE, fresh_demo_database

CLI = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def data_dir(server_dsn: str) -> str:
    with psycopg.connect(server_dsn) as c:
        row = c.execute("SHOW data_directory").fetchone()
    assert row is not None
    return str(row[0])


@pytest.fixture
def demo_database(server_dsn: str) -> Iterator[None]:
    fresh_demo_database(Database(server_dsn))
    yield
    with psycopg.connect(server_dsn, autocommit=True) as c:
        c.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DEMO_DATABASE))
        )


def test_db_uri_demo_prints_a_dsn_that_reaches_the_demo_database(
    run_cli: CLI, data_dir: str, demo_database: None
) -> None:
    proc = run_cli("--data-dir", data_dir, "db", "uri", "--demo", use_dsn=False)

    assert proc.returncode == 0, proc.stderr
    dsn = proc.stdout.strip()
    with psycopg.connect(dsn) as c:
        assert c.execute("SELECT current_database()").fetchone() == (DEMO_DATABASE,)
        assert c.execute("SELECT count(*) FROM sk_task_results_t").fetchone() == (0,)


def test_db_uri_database_names_the_database_asked_for(run_cli: CLI, data_dir: str) -> None:
    proc = run_cli("--data-dir", data_dir, "db", "uri", "--database", "app/db x", use_dsn=False)

    assert proc.returncode == 0, proc.stderr
    assert conninfo.conninfo_to_dict(proc.stdout.strip())["dbname"] == "app/db x"


def test_db_status_takes_no_dsn_from_the_environment_for_its_own(
    run_cli: CLI, data_dir: str, dsn: str
) -> None:
    """After `export SKCONSOLE_DSN="$(skconsole db uri)"` (the quickstart), `db status`
    and `db stop` still manage the embedded server; only an explicit --dsn is refused."""
    env_only = run_cli(
        "--data-dir", data_dir, "db", "status", "--json", use_dsn=False,
        env={"SKCONSOLE_DSN": dsn},
    )  # fmt: skip
    given = run_cli("--data-dir", data_dir, "--dsn", dsn, "db", "status", use_dsn=False)
    assert env_only.returncode == 0, env_only.stderr
    assert given.returncode == 2 and "does not apply with --dsn" in given.stderr
