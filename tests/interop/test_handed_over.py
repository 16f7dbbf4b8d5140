"""Interop tier: a .NET consumer takes over what skconsole left, and reads its error.

A job skconsole failed once (its error written as ``QueuedTaskError`` JSON) and then
handed back at a worker's shutdown, or cancelled while it ran and requeued by an
operator, goes back to the queue with an error skconsole wrote: the .NET consumer
that dequeues it next must read that error (Newtonsoft is strict: plain text would
stop it). And skconsole's own setup must refuse to add a second, empty queue beside a
.NET application's renamed one when ``--mapping`` was forgotten.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from skconsole.core.status import JobStatus
from tests.interop.conftest import (
    Workers,
    result_row,
    run_skconsole,
    wait_for,
)
from tests.interop.dotnet_app import PROCESSED, DequeuedTask, DotNetApp
from tests.interop.tasks_interop import ASSEMBLY, EXPORT_REPORT
from tests.interop.test_capital_mapping import BILLING, queue_like_tables
from tests.support.tasks_faults import executions

pytestmark = pytest.mark.interop


def _failed_once_by_skconsole(dsn: str, app: DotNetApp, workers: Workers) -> uuid.UUID:
    """An ExportReport job .NET posted, failed once by a skconsole worker (4 Error, its
    error skconsole's), then due again."""
    task_id = app.post(EXPORT_REPORT, ASSEMBLY, {"ReportId": 7, "SleepMs": 30_000})
    first = workers.start(dsn, "--burst", "--poll", "0.1s")
    assert first.wait(60) == 0, Workers.output(first)
    assert result_row(dsn, task_id)["task_status"] == JobStatus.ERROR
    run_skconsole(dsn, "bump", "--id", str(task_id), "--now", "--yes")
    return task_id


def _reads_its_error(app: DotNetApp) -> list[DequeuedTask]:
    """The .NET consumer's next run of ExportReport: what it dequeued."""
    seen: list[DequeuedTask] = []
    app.executors[EXPORT_REPORT] = seen.append
    run = app.run_one()
    assert run is not None and run.outcome == "processed", run
    return seen


def test_a_job_skconsole_handed_back_at_shutdown_is_run_by_dotnet_reading_its_error(
    net_db: str, workers: Workers, log_dir: Path, net_apps: Callable[..., DotNetApp]
) -> None:
    app = net_apps(net_db, executors={})
    task_id = _failed_once_by_skconsole(net_db, app, workers)
    worker = workers.start(net_db, "--poll", "0.1s", "--grace", "1s")
    wait_for(lambda: str(task_id) in executions(log_dir, deaths={}), "skconsole runs it again")
    assert workers.stop(worker) == 0, Workers.output(worker)
    row = result_row(net_db, task_id)
    # handed back, due now
    assert (row["task_status"], row["queued"]) == (JobStatus.UNPROCESSED, True)

    (task,) = _reads_its_error(app)

    assert task.last_error is not None
    assert (task.last_error.type, task.last_error.message) == (
        "tests.interop.tasks_interop.ReportFailed",
        "report 7 failed to render",
    )
    assert result_row(net_db, task_id)["task_status"] == PROCESSED


def test_a_job_skconsole_cancelled_while_it_ran_then_requeued_is_run_by_dotnet(
    net_db: str, workers: Workers, log_dir: Path, net_apps: Callable[..., DotNetApp]
) -> None:
    app = net_apps(net_db, executors={})
    task_id = _failed_once_by_skconsole(net_db, app, workers)
    worker = workers.start(net_db, "--poll", "0.1s")
    wait_for(lambda: str(task_id) in executions(log_dir, deaths={}), "skconsole runs it again")
    cancelled = run_skconsole(net_db, "cancel", "--id", str(task_id), "--yes")
    assert cancelled.returncode == 0, cancelled.stderr
    wait_for(
        lambda: result_row(net_db, task_id)["task_status"] == JobStatus.CANCELLED,
        "the cancel took effect",
    )
    workers.stop(worker)
    requeued = run_skconsole(net_db, "requeue", "--id", str(task_id), "--status", "7", "--yes")
    assert requeued.returncode == 0, requeued.stderr

    (task,) = _reads_its_error(app)

    assert task.last_error is not None and task.last_error.type == "skconsole.JobCancelled"
    assert "cancelled by an operator while it ran" in (task.last_error.message or "")


def test_setup_without_the_mapping_refuses_a_second_queue_beside_a_renamed_one(
    fresh_database: str,
) -> None:
    DotNetApp(fresh_database, mapping=BILLING).setup()
    before = queue_like_tables(fresh_database)

    refused = run_skconsole(fresh_database, "setup")

    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "already holds a Stakhanovise.NET queue" in refused.stderr
    assert "--mapping" in refused.stderr
    assert queue_like_tables(fresh_database) == before
