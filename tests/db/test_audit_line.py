"""``skconsole audit`` says what each action did with its options, and who acted through
which face (issue 40): a bump to run now and a bump to priority 0 read apart, a
requeue's reset and spread are in its line, and the row records the CLI, the console,
a worker or a program as the origin."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import psycopg

from skconsole import ops
from skconsole.core.actor import Actor, Origin
from skconsole.core.retention import Policy
from skconsole.ops import BumpParams, Selection
from skconsole.ops.audit_line import what
from skconsole.worker.retention import purge_params

from .test_ops import add_job

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]


def audit_lines(run_cli: CLI) -> list[str]:
    """The rows of ``skconsole audit``, newest first, as printed (wide: nothing cut)."""
    proc = run_cli("audit", "--wide")
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if "│" in line]


def test_a_bump_to_run_now_and_a_bump_to_priority_0_read_apart(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 1, ready=False)
    short = str(job)[:8]
    assert run_cli("bump", "--id", str(job), "--now", "--yes").returncode == 0
    assert run_cli("bump", "--id", str(job), "--to", "0", "--yes").returncode == 0

    to_zero, now = audit_lines(run_cli)

    assert f"bump 1 waiting job {short} to run now" in now
    assert f"bump 1 waiting job {short} to priority 0" in to_zero


def test_a_requeues_reset_and_spread_are_in_its_line(run_cli: CLI, conn: Conn) -> None:
    for _ in range(3):
        add_job(conn, 5)
    proc = run_cli("requeue", "--status", "5", "--reset-errors", "--spread", "5m", "--yes")
    assert proc.returncode == 0, proc.stderr

    (line,) = audit_lines(run_cli)

    assert (
        "requeue 3 jobs with status Faulted, error counts reset to 0, due over the next 5m" in line
    )


def test_the_audit_says_an_action_came_from_the_cli(run_cli: CLI, conn: Conn) -> None:
    add_job(conn, 5)
    assert run_cli("requeue", "--status", "5", "--yes").returncode == 0

    (line,) = audit_lines(run_cli)
    (entry,) = json.loads(run_cli("audit", "--json").stdout)["entries"]

    assert entry["origin"] == "cli"
    assert f"cli ({entry['user']}@{entry['host']})" in line


def test_an_action_run_from_python_is_recorded_as_such(conn: Conn) -> None:
    job = add_job(conn, 1)
    ops.BUMP.execute(conn, Selection(ids=(job,)), BumpParams(to=0), actor=Actor("app", "web-1"))

    (entry,) = ops.audit.entries(conn)

    assert entry.origin is Origin.PYTHON
    assert entry.who == "python (app@web-1)"


def test_a_row_from_before_the_origin_was_recorded_names_the_user_alone(conn: Conn) -> None:
    conn.execute(
        "INSERT INTO sk_audit_t (audit_user, audit_host, audit_action, audit_selection,"
        " audit_count, audit_details) VALUES ('root', 'vm', 'bump', '{}', 1, '{\"to\": 0}')"
    )

    (entry,) = ops.audit.entries(conn)

    assert entry.origin is None
    assert entry.who == "root@vm"
    assert what(entry) == "bump 1 waiting job to priority 0 (the front of the queue)"


def test_a_workers_retention_round_is_recorded_as_the_workers() -> None:
    params = purge_params(Policy(task_type="t.a", older_than_s=3600.0), [], "host-1", None)

    assert params["origin"] == "worker"
