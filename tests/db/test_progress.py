"""A running job's progress (``ctx.progress``): kept by the engine, written at most
once per write round (once a second) however often a handler reports, fenced by the
attempt's claim id, shown by ``status inflight --json``, the job detail and the exporter
while the attempt runs, and gone once it ends."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
from prometheus_client.metrics_core import Metric

from skconsole import read
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.exporter.sources import read_inflight
from skconsole.producer import Producer
from skconsole.worker.progress import PROGRESS_INTERVAL
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from tests.support.rows import one_row
from tests.support.statuses import status_of
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]

tasks = TaskRegistry(TaskOptions(max_attempts=1, timeout=120.0))
#: set by a test to let its handler return
release: dict[str, threading.Event] = {}
REPORTS = 20_000


def _release(ctx: JobContext) -> threading.Event:
    return release.setdefault(str(ctx.task_id), threading.Event())


@tasks.task("progress.sync_chatty")
def sync_chatty(payload: Any, ctx: JobContext) -> None:
    """Reports many thousand times as fast as it can, then a last value, then waits."""
    for i in range(REPORTS):
        ctx.progress(i / REPORTS, f"step {i}")
    ctx.progress(0.5, "half way")
    _release(ctx).wait(60)


@tasks.task("progress.async_reporter")
async def async_reporter(payload: Any, ctx: JobContext) -> None:
    ctx.progress(0.25, "a quarter")
    while not _release(ctx).is_set():
        await asyncio.sleep(0.02)


def post(db: Database, task_type: str) -> uuid.UUID:
    with Producer(db) as p:
        task_id = p.post(task_type, None)
    release.setdefault(str(task_id), threading.Event())
    return task_id


def inflight_progress(run_cli: CLI, task_id: uuid.UUID) -> dict[str, Any] | None:
    proc = run_cli("status", "inflight", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    jobs = doc["jobs"] if "jobs" in doc else doc["inflight"]["jobs"]
    found = [j for j in jobs if j["task_id"] == str(task_id)]
    return found[0]["progress"] if found else None


def progress_shown(run_cli: CLI, task_id: uuid.UUID) -> dict[str, Any]:
    """The job's progress in ``status inflight --json``, once it shows one."""
    wait_until(lambda: inflight_progress(run_cli, task_id) is not None, timeout=30)
    progress = inflight_progress(run_cli, task_id)
    assert progress is not None
    return progress


def test_a_handler_reporting_thousands_of_times_is_written_once_per_round_with_the_latest_value(
    db: Database, conn: Conn, run_cli: CLI
) -> None:
    assert PROGRESS_INTERVAL == 1.0  # a write round a second
    with EngineThread(db.dsn, tasks) as worker:
        task_id = post(db, "progress.sync_chatty")
        shown: dict[str, Any] = {}

        def latest_shown() -> bool:
            shown.update(inflight_progress(run_cli, task_id) or {})
            return shown.get("message") == "half way"

        wait_until(latest_shown, timeout=30)
        board = worker.engine.progress
        assert board.reports == REPORTS + 1
        # one row per job and round at most: thousands of reports, a handful of writes
        assert board.rows_sent <= board.writes <= worker.engine.progress_writer.rounds
        assert board.rows_sent < 50
        release[str(task_id)].set()
    assert shown["fraction"] == 0.5
    assert shown["at"] is not None


def test_status_inflight_json_shows_an_async_handlers_progress_while_it_runs(
    db: Database, conn: Conn, run_cli: CLI
) -> None:
    with EngineThread(db.dsn, tasks):
        task_id = post(db, "progress.async_reporter")
        progress = progress_shown(run_cli, task_id)
        release[str(task_id)].set()
    assert (progress["fraction"], progress["message"]) == (0.25, "a quarter")
    assert set(progress) == {"fraction", "message", "at"}


def test_the_job_detail_shows_the_running_attempts_progress_and_not_once_it_ended(
    db: Database, conn: Conn
) -> None:
    with EngineThread(db.dsn, tasks):
        task_id = post(db, "progress.async_reporter")

        def detail_progress() -> read.Progress | None:
            found = read.job(conn, task_id)
            return found.progress if found is not None else None

        wait_until(lambda: detail_progress() is not None, timeout=30)
        progress = detail_progress()
        release[str(task_id)].set()
        wait_until(lambda: status_of(conn, task_id) == JobStatus.PROCESSED, timeout=30)
    assert progress is not None and progress.message == "a quarter"
    assert detail_progress() is None


def test_a_stale_attempt_cannot_write_progress_over_the_current_one(
    db: Database, conn: Conn, run_cli: CLI
) -> None:
    with EngineThread(db.dsn, tasks):
        task_id = post(db, "progress.async_reporter")
        progress_shown(run_cli, task_id)  # the current attempt's
        row = one_row(
            conn, "SELECT sk_claim_id FROM sk_task_results_t WHERE task_id = %s", (task_id,)
        )
        current = int(row[0])
        for stale in (current - 1, current + 1):  # an earlier attempt, or one not yet begun
            conn.execute(
                query("progress_write"),
                {
                    "task_ids": [task_id],
                    "claim_ids": [stale],
                    "fractions": [1.0],
                    "messages": ["stale"],
                    "ages": [0.0],
                },
            )
        progress = inflight_progress(run_cli, task_id)
        stored = conn.execute(
            "SELECT claim_id, progress_message FROM sk_task_progress_t WHERE task_id = %s",
            (task_id,),
        ).fetchone()
        release[str(task_id)].set()
    assert progress is not None and progress["message"] == "a quarter"
    assert stored == (current, "a quarter")


def test_the_exporter_gives_how_many_jobs_report_progress_and_the_least_advanced(
    db: Database, conn: Conn, run_cli: CLI
) -> None:
    with EngineThread(db.dsn, tasks):
        task_id = post(db, "progress.async_reporter")
        wait_until(lambda: inflight_progress(run_cli, task_id) is not None, timeout=30)
        families = read_inflight(conn)
        release[str(task_id)].set()

    def sample(name: str) -> float:
        family: Metric = next(f for f in families if f.name == name)
        return next(
            s.value for s in family.samples if s.labels == {"task_type": "progress.async_reporter"}
        )

    assert sample("skconsole_inflight_progress_jobs") == 1
    assert sample("skconsole_inflight_progress_min_ratio") == 0.25
    assert sample("skconsole_inflight_progress_age_max_seconds") >= 0
