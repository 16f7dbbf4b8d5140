"""The user's connection options (the DSN's ``options``, else PGOPTIONS) reach the
server merged with skconsole's own, never replaced by them: a ``search_path``
chooses the schema the queue lives in, a ``statement_timeout`` overrides ours,
and read-only mode stays read-only whatever the user's options say."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, urlencode

import psycopg
import pytest
from psycopg import conninfo, sql

from skconsole.db.connect import Database
from skconsole.db.schema import SKCONSOLE_OBJECTS, STAKHANOVISE_OBJECTS
from skconsole.db.target import open_database
from tests.support.rows import one_row, tables_in

CLI = Callable[..., subprocess.CompletedProcess[str]]
SCHEMA = "queue_other"
TABLES = sorted([*STAKHANOVISE_OBJECTS, *SKCONSOLE_OBJECTS])


def as_uri(dsn: str, **extra: str) -> str:
    """The same connection as a URI, every parameter in its query string (percent-encoded)."""
    params = {k: str(v) for k, v in conninfo.conninfo_to_dict(dsn).items() if v is not None}
    return "postgresql:///?" + urlencode(params | extra, quote_via=quote)


def with_params(dsn: str, **extra: str) -> str:
    """The same connection as a key=value string, with ``extra`` parameters."""
    return conninfo.make_conninfo(dsn, **extra)


@pytest.fixture
def schema_db(fresh_database: str) -> str:
    """A new database with an empty schema ``queue_other`` beside ``public``."""
    with psycopg.connect(fresh_database, autocommit=True) as c:
        c.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(SCHEMA)))
    return fresh_database


@pytest.fixture
def no_pgoptions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGOPTIONS", raising=False)


def sk_tables(dsn: str, schema: str) -> list[str]:
    return [t for t in tables_in(dsn, schema) if t.startswith("sk_")]


def show(conn: psycopg.Connection[Any], name: str) -> str:
    row = one_row(conn, "SELECT current_setting(%s)", (name,))
    return str(row[0])


def cli_ok(run_cli: CLI, dsn: str, *args: str, env: dict[str, str] | None = None) -> str:
    proc = run_cli("--dsn", dsn, *args, env=env, use_dsn=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# -- the schema a search_path chooses ----------------------------------------------------
def test_setup_with_a_search_path_in_the_dsn_options_creates_the_tables_in_that_schema(
    run_cli: CLI, schema_db: str, no_pgoptions: None
) -> None:
    cli_ok(run_cli, as_uri(schema_db, options=f"-csearch_path={SCHEMA}"), "setup")

    assert sk_tables(schema_db, SCHEMA) == TABLES
    assert sk_tables(schema_db, "public") == []


def test_a_job_posted_with_a_search_path_in_the_dsn_options_is_seen_by_status(
    run_cli: CLI, schema_db: str, no_pgoptions: None
) -> None:
    dsn = as_uri(schema_db, options=f"-csearch_path={SCHEMA}")
    cli_ok(run_cli, dsn, "setup")

    cli_ok(run_cli, dsn, "enqueue", "opts.job", "--payload", '{"n": 1}')
    status = json.loads(cli_ok(run_cli, dsn, "status", "--json"))

    assert status["statuses"]["Unprocessed"] == 1
    assert [t["task_type"] for t in status["depth"]["types"]] == ["opts.job"]
    with psycopg.connect(schema_db) as c:
        assert c.execute(
            sql.SQL("SELECT count(*) FROM {}.sk_task_results_t").format(sql.Identifier(SCHEMA))
        ).fetchone() == (1,)


def test_pgoptions_in_the_environment_chooses_the_schema_like_the_dsn_options(
    run_cli: CLI, schema_db: str
) -> None:
    env = {"PGOPTIONS": f"-c search_path={SCHEMA}"}

    cli_ok(run_cli, schema_db, "setup", env=env)
    cli_ok(run_cli, schema_db, "enqueue", "opts.env", env=env)
    status = json.loads(cli_ok(run_cli, schema_db, "status", "--json", env=env))

    assert sk_tables(schema_db, SCHEMA) == TABLES
    assert sk_tables(schema_db, "public") == []
    assert [t["task_type"] for t in status["depth"]["types"]] == ["opts.env"]


def test_open_database_sets_up_the_schema_the_dsn_options_name(
    schema_db: str, no_pgoptions: None
) -> None:
    open_database(with_params(schema_db, options=f"-c search_path={SCHEMA}"), setup=True)

    assert sk_tables(schema_db, SCHEMA) == TABLES
    assert sk_tables(schema_db, "public") == []


def test_the_dsns_options_beat_pgoptions(server_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGOPTIONS", "-c search_path=from_env")

    with Database(with_params(server_dsn, options="-c search_path=from_dsn")).connect() as c:
        assert show(c, "search_path") == "from_dsn"


# -- our defaults and the user's overrides ---------------------------------------------------
def test_without_user_options_sessions_get_our_statement_timeout_and_no_jit(
    server_dsn: str, no_pgoptions: None
) -> None:
    with Database(server_dsn).connect() as c:
        assert show(c, "statement_timeout") == "30s"
        assert show(c, "jit") == "off"


def test_the_users_statement_timeout_overrides_ours(server_dsn: str, no_pgoptions: None) -> None:
    with Database(with_params(server_dsn, options="-c statement_timeout=1234")).connect() as c:
        assert show(c, "statement_timeout") == "1234ms"
        assert show(c, "jit") == "off"


def test_a_statement_timeout_in_pgoptions_overrides_ours(
    server_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGOPTIONS", "-c statement_timeout=5min")

    with Database(server_dsn).connect() as c:
        assert show(c, "statement_timeout") == "5min"


def test_an_escaped_space_in_the_users_options_reaches_the_server_intact(
    server_dsn: str, no_pgoptions: None
) -> None:
    dsn = with_params(server_dsn, options=r"-c skconsole.test=a,\ b -c search_path=x,\ y")

    with Database(dsn, read_only=True).connect() as c:
        assert show(c, "skconsole.test") == "a, b"
        assert show(c, "search_path") == "x, y"
        assert show(c, "default_transaction_read_only") == "on"


def test_aconnect_merges_the_users_options_too(server_dsn: str, no_pgoptions: None) -> None:
    dsn = with_params(server_dsn, options="-c statement_timeout=4321")

    async def settings() -> tuple[Any, ...] | None:
        async with await Database(dsn, read_only=True).aconnect() as c:
            cur = await c.execute(
                "SELECT current_setting('statement_timeout'), current_setting('jit'), "
                "current_setting('default_transaction_read_only')"
            )
            return await cur.fetchone()

    assert asyncio.run(settings()) == ("4321ms", "off", "on")


# -- read-only stays read-only -------------------------------------------------------------
@pytest.fixture(params=["dsn", "pgoptions"])
def overriding_read_only(
    request: pytest.FixtureRequest, server_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """A DSN whose user options (in the DSN or in PGOPTIONS) turn read-only off."""
    off = "-c default_transaction_read_only=off"
    if request.param == "dsn":
        monkeypatch.delenv("PGOPTIONS", raising=False)
        yield with_params(server_dsn, options=off)
    else:
        monkeypatch.setenv("PGOPTIONS", off)
        yield server_dsn


def test_read_only_mode_stays_read_only_when_the_users_options_turn_it_off(
    overriding_read_only: str,
) -> None:
    with Database(overriding_read_only, read_only=True).connect() as c:
        assert show(c, "default_transaction_read_only") == "on"
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            c.execute("CREATE TEMP TABLE sk_read_only_probe (x int)")
