"""A multi-host DSN (``host=a,b port=p,q target_session_attrs=read-write``), as an HA
setup gives its clients, works in every face: the first host is down, the second is the
test server, and each face finds it by itself.

Reconnecting to a promoted standby after a failover is tests/faults/test_failover.py.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from psycopg import conninfo, sql

from skconsole.db.connect import Database, masked_dsn, unreachable
from skconsole.producer import Producer
from skconsole.tui.database_source import DatabaseSource
from skconsole.tui.reads import SNAPSHOT
from tests.conftest import ROOT, skconsole_cmd

from .test_exporter import one_cycle

CLI = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def multi_host(dsn: str, nowhere: str) -> str:
    """The test server second, after a host where nothing listens."""
    live = conninfo.conninfo_to_dict(dsn)
    dead = conninfo.conninfo_to_dict(nowhere)
    params = {
        **live,
        "host": f"{dead['host']},{live.get('host') or 'localhost'}",
        "port": f"{dead['port']},{live.get('port') or 5432}",
        "target_session_attrs": "read-write",
    }
    return conninfo.make_conninfo(**params)  # type: ignore[arg-type]


def test_a_producer_and_a_worker_find_the_writable_server(
    multi_host: str, conn: psycopg.Connection[Any]
) -> None:
    with Producer(multi_host) as p:
        task_id = p.post("ok")
    worker = subprocess.run(
        skconsole_cmd(
            "--dsn", multi_host, "worker", "--tasks", "tests.support.tasks_faults", "--burst"
        ),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert worker.returncode == 0, worker.stdout + worker.stderr
    row = conn.execute(
        "SELECT task_status FROM sk_task_results_t WHERE task_id = %s", (task_id,)
    ).fetchone()
    assert row == (3,)


def test_reading_commands_and_check_find_the_server(multi_host: str, run_cli: CLI) -> None:
    with Producer(multi_host) as p:
        p.post("t.multi", {"n": 1})
    depth = run_cli("--dsn", multi_host, "status", "depth", use_dsn=False)
    checked = run_cli("--dsn", multi_host, "check", use_dsn=False)
    health = run_cli("--dsn", multi_host, "status", "health", use_dsn=False)
    assert depth.returncode == 0 and "t.multi" in depth.stdout, depth.stdout + depth.stderr
    assert "claims_held=0s" in checked.stdout, checked.stdout  # the replication check ran
    assert health.returncode == 0 and "replication (timeline 1)" in health.stdout, health.stdout


def test_the_exporter_collects_from_the_server(multi_host: str) -> None:
    samples = one_cycle(multi_host)
    assert samples["skconsole_exporter_up"][()] == 1
    assert samples["skconsole_timeline"][()] == 1
    assert samples["skconsole_claims_held_seconds"][()] == 0


def test_a_read_only_console_finds_the_primary(multi_host: str) -> None:
    """The console's read-only guard makes its sessions read-only, which
    target_session_attrs=read-write would refuse everywhere: it asks for the primary."""
    source = DatabaseSource(Database(multi_host, read_only=True))
    try:
        snapshot = source.read(SNAPSHOT)
    finally:
        source.close()
    assert snapshot.replication is not None and snapshot.replication.timeline == 1


def test_serve_hands_the_multi_host_dsn_to_its_consoles(multi_host: str) -> None:
    """serve starts a console per browser tab with SKCONSOLE_DSN in its environment: the DSN
    goes through whole, and a command started that way reaches the server."""
    from skconsole.cli.serve import console_command

    command = console_command({"dsn": multi_host}, read_only=True, user="u", host="h")
    assert command.env["SKCONSOLE_DSN"] == multi_host
    depth = subprocess.run(
        skconsole_cmd("status", "depth"),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, **command.env},
    )
    assert depth.returncode == 0, depth.stdout + depth.stderr


def test_the_description_names_every_host() -> None:
    assert masked_dsn(
        "postgresql://ops:pw@db1:5432,db2:5433/q?target_session_attrs=read-write"
    ) == ("ops@db1:5432,db2:5433/q")


def test_no_writable_server_yet_is_a_server_to_wait_for(dsn: str) -> None:
    """While a failover promotes the standby, libpq finds only read-only servers: that is
    waited for (a worker retries), not refused as a wrong DSN."""
    params = conninfo.conninfo_to_dict(dsn)
    name = sql.Identifier(str(params["dbname"]))
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = on").format(name))
    try:
        writable = conninfo.make_conninfo(**{**params, "target_session_attrs": "read-write"})  # type: ignore[arg-type]
        with pytest.raises(psycopg.OperationalError) as refused:
            psycopg.connect(writable, connect_timeout=5)
        assert unreachable(refused.value), str(refused.value)
    finally:
        writes = "-c default_transaction_read_only=off"
        with psycopg.connect(dsn, autocommit=True, options=writes) as c:
            c.execute(sql.SQL("ALTER DATABASE {} RESET default_transaction_read_only").format(name))
