"""Starting the console: bad input ends with one clear line and an exit code before
the screen opens; a database without the schema is offered a setup."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from skconsole.core.errors import SchemaError
from skconsole.db.connect import Database
from skconsole.db.schema import missing_objects, setup_schema
from skconsole.tui.app import ConsoleApp
from skconsole.tui.database_source import DatabaseSource
from skconsole.tui.launch import schema_state
from skconsole.tui.screens.schema_setup import SchemaSetupScreen
from tests.tui.conftest import SIZE, until

RunCli = Callable[..., Any]


def _one_line_error(result: Any, code: int, *fragments: str) -> None:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    err = result.stderr.strip()
    assert "Traceback" not in err
    assert err.startswith("error:"), err
    for fragment in fragments:
        assert fragment in " ".join(err.split()), err


def test_unreachable_server(run_cli: RunCli) -> None:
    result = run_cli("--dsn", "postgresql://nobody@127.0.0.1:1/queue", use_dsn=False, timeout=60)
    _one_line_error(result, 3, "cannot connect to PostgreSQL at nobody@127.0.0.1:1/queue")


def test_bad_dsn(run_cli: RunCli) -> None:
    result = run_cli("--dsn", "this is not a dsn", use_dsn=False, timeout=60)
    _one_line_error(result, 3, "cannot connect")


def test_bad_refresh_interval(run_cli: RunCli) -> None:
    _one_line_error(run_cli("--refresh", "10ms"), 2, "--refresh")


def test_task_module_that_does_not_import(run_cli: RunCli) -> None:
    _one_line_error(run_cli("--tasks", "no_such_module_here"), 2, "cannot import task module")


def test_tasks_in_read_only_mode(run_cli: RunCli) -> None:
    _one_line_error(run_cli("--read-only", "--tasks", "skconsole.demo"), 5, "read-only")


def test_demo_in_read_only_mode(run_cli: RunCli) -> None:
    _one_line_error(run_cli("--read-only", "demo"), 5, "read-only")


def test_missing_schema_read_only_says_how(run_cli: RunCli, fresh_database: str) -> None:
    result = run_cli("--dsn", fresh_database, "--read-only", use_dsn=False)
    _one_line_error(result, 4, "schema is missing", "skconsole setup")


def test_missing_schema_no_setup_says_how(run_cli: RunCli, fresh_database: str) -> None:
    result = run_cli("--dsn", fresh_database, "--no-setup", use_dsn=False)
    _one_line_error(result, 4, "schema is missing", "skconsole setup")


def test_newer_schema_is_refused(run_cli: RunCli, fresh_database: str) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as c:
        setup_schema(c)
        c.execute("INSERT INTO sk_schema_version_t (version, skconsole_version) VALUES (99, '9')")
    result = run_cli("--dsn", fresh_database, use_dsn=False)
    _one_line_error(result, 4, "newer")


def test_schema_state(fresh_database: str, dsn: str) -> None:
    assert schema_state(Database(dsn), read_only=True, setup=False) == []
    missing = schema_state(Database(fresh_database), read_only=False, setup=True)
    assert "sk_tasks_queue_t" in missing
    with pytest.raises(SchemaError):
        schema_state(Database(fresh_database, read_only=True), read_only=True, setup=True)


async def test_console_offers_to_set_up_the_schema(fresh_database: str) -> None:
    db = Database(fresh_database)
    missing = schema_state(db, read_only=False, setup=True)
    app = ConsoleApp(DatabaseSource(db), setup_needed=missing, refresh_interval=0.5)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SchemaSetupScreen))
        assert app.screen.focused is not None and app.screen.focused.id == "no"
        assert app.status_state().connection == "setup"
        await pilot.press("y")
        await until(pilot, lambda: app.connection == "live")
    app.source.close()
    with psycopg.connect(fresh_database) as c:
        assert missing_objects(c) == []


async def test_declining_the_setup_quits_with_a_message(fresh_database: str) -> None:
    db = Database(fresh_database)
    missing = schema_state(db, read_only=False, setup=True)
    app = ConsoleApp(DatabaseSource(db), setup_needed=missing)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SchemaSetupScreen))
        await pilot.press("enter")  # the focused button: No
        await pilot.pause(0.2)
    assert app.return_code == 4
    app.source.close()
    with psycopg.connect(fresh_database) as c:
        assert missing_objects(c) != []
