"""A database with Stakhanovise.NET's objects alone, read by a role that may not create
anything: every ``status`` view and the read models work degraded, and say so;
writes are refused with one clear line."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import conninfo, sql

from skconsole import read
from skconsole.core.signature import error_signature
from skconsole.core.states import InflightState
from skconsole.db.connect import Database
from skconsole.db.layout import has_skconsole_objects
from skconsole.db.mapping import DEFAULT_MAPPING
from skconsole.db.sqlfiles import schema_scripts
from tests.conftest import ROOT, select_only_role, skconsole_cmd

TIMEOUT = "Traceback (most recent call last):\n  File x\nTimeoutError: timed out after {n}s"
DECLINED = "payments.Declined: card 4242 declined (order {n})"


def _seed(c: psycopg.Connection[Any]) -> dict[str, Any]:
    """Jobs in every state a Stakhanovise.NET application leaves, by hand."""
    ids: dict[str, Any] = {"old_running": uuid.uuid4(), "new_running": uuid.uuid4()}

    def result(task_id: Any, task_type: str, status: int, error: str | None, age: str) -> None:
        c.execute(
            "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
            " task_status, task_priority, task_error_count, task_last_error,"
            " task_last_error_is_recoverable, task_processing_time_milliseconds,"
            " task_posted_at_ts, task_last_processing_attempted_at_ts,"
            " task_processing_finalized_at_ts)"
            " VALUES (%s, %s, 'net-app', '{}', %s, 0, %s, %s, true, 5, now() - %s::interval,"
            " now() - %s::interval, CASE WHEN %s IN (3, 5, 6) THEN now() - %s::interval END)",
            (task_id, task_type, status, 1 if error else 0, error, age, age, status, age),
        )

    for n in range(3):
        t = uuid.uuid4()
        c.execute(
            "INSERT INTO sk_tasks_queue_t (task_id, task_lock_handle_id, task_type, task_source,"
            " task_payload, task_priority, task_posted_at_ts, task_locked_until_ts)"
            " VALUES (%s, %s, 'emails.send', 'net-app', '{}', 0, now(), now() - interval '1 min')",
            (t, n + 1),
        )
        result(t, "emails.send", 1, None, "1 minute")
    result(ids["old_running"], "reports.build", 2, None, "3 hours")
    result(ids["new_running"], "reports.build", 2, None, "1 minute")
    for n in range(4):
        result(uuid.uuid4(), "api.call", 5, TIMEOUT.format(n=30 + n), f"{n + 1} minutes")
    for n in range(2):
        result(uuid.uuid4(), "payments.charge", 6, DECLINED.format(n=n), f"{n + 1} minutes")
    c.execute(
        "INSERT INTO sk_metrics_t (metric_id, metric_owner_process_id, metric_category,"
        " metric_value) VALUES ('worker@processed-payload-count', 'net-worker-1', 'task-worker', 42)"
    )
    return ids


@pytest.fixture
def reader(fresh_database: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(DSN of a role that may only read Stakhanovise.NET's tables, the seeded ids)."""
    stakhanovise = next(
        text for name, text in schema_scripts(DEFAULT_MAPPING) if name.startswith("010")
    )
    with psycopg.connect(fresh_database, autocommit=True) as c:
        c.execute(stakhanovise)
        ids = _seed(c)
        c.execute(
            sql.SQL("REVOKE CREATE, TEMPORARY ON DATABASE {} FROM PUBLIC").format(
                sql.Identifier(conninfo.conninfo_to_dict(fresh_database)["dbname"])
            )
        )
        c.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    with select_only_role(fresh_database, "sk_reader") as role_dsn:
        yield role_dsn, ids


def cli(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        skconsole_cmd("--dsn", dsn, *args), capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def test_read_only_status_json_works_and_says_it_is_degraded(
    reader: tuple[str, dict[str, Any]],
) -> None:
    dsn, _ = reader
    got = cli(dsn, "--read-only", "status", "--json")
    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    depth = {t["task_type"]: t for t in doc["depth"]["types"]}
    assert depth["emails.send"]["ready"] == 3
    assert depth["reports.build"]["in_flight"] == 2
    assert doc["statuses"]["Faulted"] == 4 and doc["statuses"]["Fatal"] == 2
    assert doc["workers"] == []
    assert any("Stakhanovise.NET's only" in line for line in doc["degraded"])


@pytest.mark.parametrize(
    "view",
    [
        "depth",
        "inflight",
        "failures",
        "stats",
        "metrics",
        "workers",
        "history",
        "schedules",
        "health",
    ],
)
def test_every_status_view_works_read_only(reader: tuple[str, dict[str, Any]], view: str) -> None:
    dsn, _ = reader
    got = cli(dsn, "--read-only", "status", view, "--json")
    assert got.returncode == 0, got.stderr
    assert "degraded" in json.loads(got.stdout)
    table = cli(dsn, "--read-only", "status", view)
    assert table.returncode == 0, table.stderr
    assert "skconsole's objects are not in this database" in table.stderr


def test_without_owner_data_a_job_is_hung_once_it_has_processed_past_the_threshold(
    reader: tuple[str, dict[str, Any]],
) -> None:
    dsn, ids = reader
    with Database(dsn, read_only=True).connect() as conn:
        assert not has_skconsole_objects(conn)
        inflight = {j.task_id: j for j in read.inflight(conn).jobs}
    assert inflight[ids["old_running"]].hung
    assert "no owner recorded" in (inflight[ids["old_running"]].hung_reason or "")
    assert not inflight[ids["new_running"]].hung
    assert inflight[ids["new_running"]].state is InflightState.UNOWNED


def test_failure_groups_are_computed_over_a_capped_scan_and_say_so(
    reader: tuple[str, dict[str, Any]],
) -> None:
    dsn, _ = reader
    with Database(dsn, read_only=True).connect() as conn:
        groups = {g.signature: g for g in read.failure_groups(conn)}
        capped = read.failure_groups(conn, scan_cap=3)
        timeout = error_signature(TIMEOUT.format(n=30))
        jobs = read.failure_jobs(conn, timeout)
    assert groups[timeout].count == 4 and groups[timeout].task_types == ["api.call"]
    assert groups[error_signature(DECLINED.format(n=0))].count == 2
    assert groups[timeout].scan == read.FailureScan(6, 6)
    assert sum(g.count for g in capped) == 3 and capped[0].scan == read.FailureScan(3, 6)
    assert capped[0].scan is not None and capped[0].scan.capped
    assert jobs.total == 4 and len(jobs.jobs) == 4
    assert jobs.jobs[0].error_line == "TimeoutError: timed out after 30s"


def test_without_read_only_or_setup_rights_the_views_still_read(
    reader: tuple[str, dict[str, Any]],
) -> None:
    """The role may not create our objects: setup fails, so the view reads degraded."""
    dsn, _ = reader
    for args in (("status", "--json"), ("--no-setup", "status", "--json")):
        got = cli(dsn, *args)
        assert got.returncode == 0, got.stderr
        assert "degraded" in json.loads(got.stdout)


def test_a_write_is_refused_with_one_line(reader: tuple[str, dict[str, Any]]) -> None:
    dsn, _ = reader
    got = cli(dsn, "--no-setup", "requeue", "--type", "api.call", "--yes")
    assert got.returncode != 0
    assert got.stderr.count("\n") == 1 and "skconsole setup" in got.stderr
    assert "Traceback" not in got.stderr


def test_check_judges_what_the_tables_hold_and_has_no_worker_registry_to_judge(
    reader: tuple[str, dict[str, Any]],
) -> None:
    dsn, _ = reader
    got = cli(dsn, "--read-only", "check", "--json", "--horizon-warn", "1d")
    doc = json.loads(got.stdout)
    assert got.returncode == doc["status"] != 3, got.stdout + got.stderr
    by_name = {c["name"]: c for c in doc["checks"]}
    assert by_name["workers"]["summary"] == "no worker registry (Stakhanovise.NET tables only)"
    assert by_name["hung"]["summary"] == "1 hung job"
