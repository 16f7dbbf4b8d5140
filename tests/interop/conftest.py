"""Fixtures of the ``tests/interop`` tier: skconsole beside an emulated Stakhanovise.NET
application (:mod:`tests.interop.dotnet_app`) on one database.

Each test gets a database of its own (``fresh_database``): most start from
what a real deployment looks like, a database the .NET application set up and
skconsole was added to later (``net_db``); the setup tests choose the order
themselves. skconsole runs as its CLI and as ``skconsole worker`` processes,
like an operator and a fleet would run it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.rows import dict_row

from tests.conftest import ROOT, skconsole_cmd
from tests.interop.dotnet_app import DotNetApp, NetMapping
from tests.support.statuses import named
from tests.support.tasks_faults import OutputDrain
from tests.support.waiting import wait_until


def skconsole_setup(dsn: str) -> None:
    """skconsole's own setup, as ``skconsole setup`` runs it."""
    from skconsole.db.connect import Database
    from skconsole.db.schema import setup_schema

    with Database(dsn).connect() as conn:
        setup_schema(conn)


def set_up_in_order(app: DotNetApp, first: str) -> None:
    """Both setups on the app's database: ``first`` ("dotnet" or "skconsole") first."""
    if first == "dotnet":
        app.setup()
        skconsole_setup(app.dsn)
    else:
        skconsole_setup(app.dsn)
        app.setup()


@pytest.fixture
def net_only_db(fresh_database: str) -> str:
    """A new database with Stakhanovise.NET's objects alone (its setup ran)."""
    DotNetApp(fresh_database).setup()
    return fresh_database


@pytest.fixture
def net_db(net_only_db: str) -> str:
    """A database a .NET application set up first, skconsole's setup after."""
    skconsole_setup(net_only_db)
    return net_only_db


Cli = Callable[..., subprocess.CompletedProcess[str]]


def run_skconsole(dsn: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``skconsole --dsn DSN ARGS`` as a person runs it (cwd: the repository)."""
    return subprocess.run(
        skconsole_cmd("--dsn", dsn, *args),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=dict(os.environ),
    )


def cli_json(dsn: str, *args: str) -> Any:
    """The JSON document of a CLI command that must succeed."""
    got = run_skconsole(dsn, *args)
    assert got.returncode == 0, f"skconsole {' '.join(args)}: exit {got.returncode}\n{got.stderr}"
    return json.loads(got.stdout)


class Workers:
    """``skconsole worker --tasks tests.interop.tasks_interop`` processes (logging each
    execution to ``log_dir``); any still running at the end are killed."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, dsn: str, *args: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            skconsole_cmd("--dsn", dsn, "worker", "--tasks", "tests.interop.tasks_interop", *args),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "SKTEST_LOG_DIR": str(self.log_dir)},
            cwd=ROOT,
            start_new_session=True,
        )
        proc.drain = OutputDrain(proc)  # type: ignore[attr-defined]
        self.procs.append(proc)
        return proc

    @staticmethod
    def output(proc: subprocess.Popen[str]) -> str:
        drain: OutputDrain = proc.drain  # type: ignore[attr-defined]
        drain.join(2)
        return drain.tail(40)

    def stop(self, proc: subprocess.Popen[str], timeout: float = 20) -> int:
        """SIGTERM (a graceful stop) and wait for the exit code."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        return proc.wait(timeout)

    def kill_all(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture
def workers(log_dir: Path) -> Iterator[Workers]:
    w = Workers(log_dir)
    yield w
    w.kill_all()


@pytest.fixture
def net_apps() -> Iterator[Callable[..., DotNetApp]]:
    """Make emulated .NET processes; their consumers are stopped at the end."""
    apps: list[DotNetApp] = []

    def make(dsn: str, **kw: Any) -> DotNetApp:
        app = DotNetApp(dsn, **kw)
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.stop()


def result_row(dsn: str, task_id: Any) -> dict[str, Any]:
    """A job's result row (status, error, ...) and whether it has a queue row, read with
    the default names."""
    with psycopg.connect(dsn, autocommit=True) as c:
        cur = c.cursor(row_factory=dict_row)
        row = cur.execute(
            "SELECT r.*, EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id)"
            " AS queued FROM sk_task_results_t r WHERE r.task_id = %s",
            (task_id,),
        ).fetchone()
    assert row is not None, f"no result row for {task_id}"
    return row


def statuses(dsn: str, mapping: NetMapping | None = None) -> dict[int, int]:
    """Jobs per status in the results table (of ``mapping``'s names, folded as .NET's are)."""
    table = (mapping or NetMapping()).results_table.lower()
    with psycopg.connect(dsn, autocommit=True) as c:
        rows = c.execute(
            sql.SQL("SELECT task_status, count(*) FROM {} GROUP BY 1").format(sql.Identifier(table))
        ).fetchall()
    return {named(int(s)): int(n) for s, n in rows}


def wait_for(
    predicate: Callable[[], bool],
    what: str,
    timeout: float = 30.0,
    interval: float = 0.05,
) -> None:
    """:func:`~tests.support.waiting.wait_until`, ``what`` first and this tier's defaults
    (a .NET consumer polls quickly)."""
    wait_until(predicate, timeout, what, interval)
