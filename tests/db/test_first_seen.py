"""A failure group's first seen is the older of its rows' and the per-minute record's:
a group whose failed jobs were purged and that fails again is not new (panel 3's NEW
mark, ``skconsole status failures``)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from datetime import datetime
from typing import Any

import psycopg

from skconsole import read
from skconsole.core.errors import FatalTaskError
from skconsole.db.connect import Database
from skconsole.producer import Producer
from skconsole.read.first_seen import first_seen, with_first_seen
from skconsole.testing.run import run_until_idle
from skconsole.worker.registry import TaskRegistry

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]


def _fails(db: Database, n: int) -> None:
    tasks = TaskRegistry()

    def reject(payload: object) -> None:
        raise FatalTaskError("partner rejected the invoice")

    tasks.task("inv.send")(reject)
    with Producer(db) as p:
        for i in range(n):
            p.post("inv.send", {"n": i})
    run_until_idle(db, tasks)


def _only_group(conn: Conn) -> read.FailureGroup:
    (group,) = read.failure_groups(conn, limit=10)
    return group


def test_the_record_knows_when_a_signature_first_failed(db: Database, conn: Conn) -> None:
    _fails(db, 2)
    group = _only_group(conn)

    seen = first_seen(conn, [group.signature, "never: failed"])

    assert list(seen) == [group.signature]
    assert group.first_seen is not None
    assert seen[group.signature] <= group.first_seen  # its minute, not later


def test_a_group_back_after_a_purge_keeps_its_first_failure(
    db: Database, conn: Conn, run_cli: CLI
) -> None:
    _fails(db, 2)
    first_failure = _only_group(conn).first_seen
    assert first_failure is not None
    purged = run_cli("purge", "--status", "6", "--older-than", "0s", "--yes")
    assert purged.returncode == 0, purged.stderr
    _fails(db, 1)
    rows_alone = _only_group(conn)
    assert rows_alone.first_seen is not None and rows_alone.first_seen > first_failure

    (group,) = with_first_seen([rows_alone], first_seen(conn, [rows_alone.signature]))
    shown = json.loads(run_cli("status", "failures", "--json").stdout)["groups"][0]

    assert group.first_seen is not None and group.first_seen <= first_failure
    assert datetime.fromisoformat(shown["first_seen"]) == group.first_seen
