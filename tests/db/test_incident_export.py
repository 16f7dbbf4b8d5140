"""``skconsole incident export``: one JSON document of a window that outlives the job rows
(the record, the gauges, the failure groups with sample errors, the audited actions, the
workers seen), and one clear line for a window it cannot hold. On a real PostgreSQL, the
jobs run by a real engine."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg

from skconsole import ops
from skconsole.core.status import FINAL
from skconsole.db.connect import Database
from skconsole.producer import Producer
from skconsole.read.incident import FORMAT, load
from tests.support.statuses import status_of
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
RunCli = Callable[..., subprocess.CompletedProcess[str]]


def run_jobs(db: Database, conn: Conn) -> list[UUID]:
    """2 jobs that succeed and 2 that fail for good, run by a real engine (its upkeep
    writes the gauges)."""
    with Producer(db) as p:
        ids = [p.post("retry.ok", {"n": i}) for i in range(2)]
        ids += [p.post("retry.fatal", {"n": i}) for i in range(2)]
    with EngineThread(db.dsn):
        wait_until(lambda: all(status_of(conn, i) in FINAL for i in ids), timeout=30)
        wait_until(
            lambda: conn.execute("SELECT count(*) FROM sk_record_gauges_t").fetchone() != (0,),
            timeout=30,
        )
    return ids


def exported(run_cli: RunCli, *args: str) -> dict[str, Any]:
    done = run_cli("incident", "export", "--since", "1h ago", *args)
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def test_an_export_holds_the_window_s_failures_with_a_sample_error_and_the_workers(
    db: Database, conn: Conn, run_cli: RunCli
) -> None:
    run_jobs(db, conn)

    doc = exported(run_cli)

    assert (doc["format"], doc["version"]) == (FORMAT, 1)
    (group,) = doc["failure_groups"]
    assert group["fatal"] == 2 and group["task_types"] == ["retry.fatal"]
    assert "recipient address is invalid" in group["samples"][0]["error"]
    assert len(doc["workers"]) == 1
    assert doc["record"]["gauges"]


def test_an_export_still_holds_jobs_purged_since_and_the_purge_itself(
    db: Database, conn: Conn, run_cli: RunCli, tmp_path: Path
) -> None:
    ids = run_jobs(db, conn)
    ops.PURGE.execute(conn, ops.Selection(ids=tuple(ids)), actor=ops.Actor("t", "h"))

    path = tmp_path / "incident.json"
    path.write_text(json.dumps(exported(run_cli)), encoding="utf-8")
    bundle = load(path)

    assert sum(c.succeeded for c in bundle.book.by_type["retry.ok"].values()) == 2
    assert [a.action for a in bundle.audit] == ["purge"]


def test_a_window_over_7_days_is_refused_in_one_line(run_cli: RunCli) -> None:
    done = run_cli("incident", "export", "--since", "8d ago")

    assert done.returncode == 2
    assert "at most 7 days" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_an_unreadable_time_is_refused_in_one_line(run_cli: RunCli) -> None:
    done = run_cli("incident", "export", "--since", "yesterday-ish")

    assert done.returncode == 2
    assert "--since" in done.stderr and len(done.stderr.strip().splitlines()) == 1
