"""A database whose Stakhanovise.NET objects were renamed (``QueuedTaskMapping``) and
live in a schema of their own: setup, posting, working and reading all follow the
mapping, in-process and through the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skconsole import ops, read
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.db.mapping import TableMapping
from skconsole.db.schema import check_schema, setup_schema
from skconsole.db.sqlfiles import query
from skconsole.ops import Actor, LimitParams, Selection
from skconsole.ops.key_index import key_indexes
from skconsole.producer import Job, Producer
from skconsole.worker.registry import TaskRegistry
from tests.conftest import ROOT, skconsole_cmd
from tests.support.rows import tables_in
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

MAPPING = {
    # as a .NET application writes them: unquoted, so PostgreSQL folds the first to
    # app_queue; the second was created quoted, and is named so
    "QueueTableName": "App_Queue",
    "ResultsQueueTableName": '"App Results"',
    "NewTaskNotificationChannelName": "app_job_added",
    "DequeueFunctionName": "app_dequeue",
    "metrics_table": "app_metrics",
    "execution_time_stats_table": "app_exec_times",
}
SCHEMA = "jobs"

tasks = TaskRegistry()
done: list[Any] = []


@tasks.task("mapped.ok")
async def mapped_ok(payload: Any) -> None:
    done.append(payload)


#: the layout the tests' databases are given (the CLI's: --mapping and --schema)
LAYOUT = TableMapping.from_dict({**MAPPING, "schema": SCHEMA})


@pytest.fixture
def mapped(fresh_database: str) -> Iterator[str]:
    """A fresh database set up with the renamed objects in schema ``jobs`` (reached with
    ``Database(dsn, mapping=LAYOUT)``)."""
    with psycopg.connect(fresh_database, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {SCHEMA}")
    with Database(fresh_database, mapping=LAYOUT).connect() as conn:
        setup_schema(conn)
    yield fresh_database


def test_setup_creates_the_renamed_tables_in_the_schema_and_nothing_by_default_names(
    mapped: str,
) -> None:
    names = set(tables_in(mapped, SCHEMA))
    assert {"app_queue", "App Results", "app_metrics", "app_exec_times", "sk_workers_t"} <= names
    assert not {"sk_tasks_queue_t", "sk_task_results_t"} & names
    assert set(tables_in(mapped, "public")) == set()
    with Database(mapped, mapping=LAYOUT).connect() as conn:
        check_schema(conn)


def test_jobs_posted_and_worked_through_the_mapping_land_in_the_renamed_tables(
    mapped: str,
) -> None:
    db = Database(mapped, mapping=LAYOUT)
    with Producer(db) as p:
        p.post("mapped.ok", {"n": 1})
        p.post_many([Job("mapped.ok", {"n": i}) for i in range(2, 302)])  # COPY path
    with db.connect() as conn:
        assert read.depth(conn).ready == 301
        with EngineThread(db, tasks):
            wait_until(
                lambda: read.status_summary(conn).counts.get(JobStatus.PROCESSED, 0) == 301,
                timeout=60,
            )
        assert read.depth(conn).ready == 0
    with psycopg.connect(mapped) as c:
        assert c.execute(
            f'SELECT count(*) FROM {SCHEMA}."App Results" WHERE task_status = 3'
        ).fetchone() == (301,)
        metrics = c.execute(f"SELECT count(*) FROM {SCHEMA}.app_metrics").fetchone()
        assert metrics is not None and metrics[0] > 0


def test_a_post_notifies_on_the_mapped_channel(mapped: str) -> None:
    with psycopg.connect(mapped, autocommit=True) as listener:
        listener.execute("LISTEN app_job_added")
        with Producer(Database(mapped, mapping=LAYOUT)) as p:
            p.post("mapped.ok", None)
        got = list(listener.notifies(timeout=2.0, stop_after=1))
    assert [n.channel for n in got] == ["app_job_added"]


def test_the_cli_works_through_a_mapping_file(mapped: str, tmp_path: Path) -> None:
    mapping_file = tmp_path / "appsettings.json"
    mapping_file.write_text(json.dumps({"QueuedTaskMapping": MAPPING}))

    def cli_ok(*args: str) -> str:
        """``skconsole ARGS`` through the mapping file, which must succeed: what it prints."""
        done = subprocess.run(
            skconsole_cmd(
                "--dsn", mapped, "--mapping", str(mapping_file), "--schema", SCHEMA, *args
            ),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
            env=dict(os.environ),
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    cli_ok("enqueue", "ok", "--payload", "null", "--count", "5")
    cli_ok("worker", "--tasks", "tests.support.tasks_faults", "--burst")
    doc = json.loads(cli_ok("status", "--json"))
    assert doc["statuses"]["Processed"] == 5
    # without the mapping, the same database has no queue at all
    bare = subprocess.run(
        skconsole_cmd("--dsn", mapped, "--no-setup", "status", "--json"),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert bare.returncode != 0 and "skconsole setup" in bare.stderr


def test_a_bad_schema_name_is_refused_with_one_line(tmp_path: Path) -> None:
    got = subprocess.run(
        skconsole_cmd("--schema", "bad name", "status"),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert got.returncode == 2
    assert got.stderr.strip().count("\n") == 0 and "--schema takes a plain name" in got.stderr


def test_a_per_key_limit_and_its_key_index_work_through_the_mapping(mapped: str) -> None:
    """sk_claim_keyed() names the queue in its statement text: the mapping rewrites it."""
    db = Database(mapped, mapping=LAYOUT)
    with Producer(db) as p:
        p.post_many([Job("mapped.ok", {"customer": c}) for c in ("a", "a", "a", "b")])
    with db.connect() as conn:
        ops.LIMIT.execute(
            conn,
            Selection(task_type="mapped.ok"),
            LimitParams(concurrency=1, per=("customer",)),
            actor=Actor(user="tester", host="test-host"),
        )
        [index] = key_indexes(conn, "mapped.ok")
        rows = conn.execute(
            query("claim"),
            {"types": ["mapped.ok"], "limit": 10, "worker_id": uuid.uuid4(), "hold_s": 12.0},
        ).fetchall()
    assert index.valid and index.schema == SCHEMA
    assert sorted(json.loads(r[3])["customer"] for r in rows) == ["a", "b"]
