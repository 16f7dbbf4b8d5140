"""Starting the console: bad input ends with one clear line and an exit code before
the screen opens; so does a queue that is not set up (the console creates nothing
unless started with --setup)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from skconsole.core.errors import SchemaError
from skconsole.db.connect import Database
from skconsole.db.schema import missing_objects, setup_schema
from skconsole.tui.launch import schema_state

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


def test_a_queue_not_set_up_is_said_in_one_line_and_nothing_is_created(
    run_cli: RunCli, fresh_database: str
) -> None:
    for flags in ((), ("--read-only",), ("--no-setup",)):
        result = run_cli("--dsn", fresh_database, *flags, use_dsn=False)
        _one_line_error(result, 4, "the queue is not set up", "skconsole setup")
    with psycopg.connect(fresh_database) as c:
        assert "sk_tasks_queue_t" in missing_objects(c)


def test_newer_schema_is_refused(run_cli: RunCli, fresh_database: str) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as c:
        setup_schema(c)
        c.execute("INSERT INTO sk_schema_version_t (version, skconsole_version) VALUES (99, '9')")
    result = run_cli("--dsn", fresh_database, use_dsn=False)
    _one_line_error(result, 4, "newer")


def test_the_console_sets_the_queue_up_first_only_when_told(fresh_database: str) -> None:
    with pytest.raises(SchemaError, match="not set up"):
        schema_state(Database(fresh_database), read_only=False, setup=False)
    schema_state(Database(fresh_database), read_only=False, setup=True)
    with psycopg.connect(fresh_database) as c:
        assert missing_objects(c) == []
