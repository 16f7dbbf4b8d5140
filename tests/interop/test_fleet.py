"""Interop tier (``tests/interop``): skconsole workers and .NET consumers on one queue.

A team moving from Stakhanovise.NET to skconsole (or running both) has both
kinds of consumer on the same task types: each job must run once, whichever
side takes it, and what one side leaves in a result row (an error, a retry)
must not break the other.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skconsole.core.status import JobStatus
from skconsole.producer import Job, Producer
from tests.conftest import ROOT, skconsole_cmd
from tests.interop.conftest import Workers, result_row, set_up_in_order, statuses, wait_for
from tests.interop.dotnet_app import (
    PROCESSED,
    DequeuedTask,
    DotNetApp,
    NetDeserializationError,
    parse_queued_task_error,
)
from tests.interop.tasks_interop import ASSEMBLY, CHARGE_CARD, SYNC_LEDGER
from tests.support.tasks_faults import executions, overlaps

pytestmark = pytest.mark.interop

JOBS_PER_SIDE = 120
SLEEP_MS = 10


def sleep_briefly(task: DequeuedTask) -> None:
    """The same work as the skconsole handler: sleep SleepMs of the payload."""
    time.sleep(float(task.payload.fields.get("SleepMs", 0)) / 1000)


@pytest.mark.parametrize("first", ["dotnet", "skconsole"])
def test_a_mixed_fleet_runs_every_job_exactly_once(
    fresh_database: str,
    first: str,
    workers: Workers,
    log_dir: Path,
    net_apps: Callable[..., DotNetApp],
) -> None:
    """Two .NET consumer threads and two `skconsole worker` processes share one type;
    half the jobs are posted by .NET, half by skconsole: every job runs exactly once,
    no two runs of a job overlap, all end 3 Processed, and both sides took part. On a
    database either side set up first."""
    net_db = fresh_database
    set_up_in_order(DotNetApp(net_db), first)
    app = net_apps(net_db, executors={CHARGE_CARD: sleep_briefly}, poll_interval=0.05)
    posted = [
        app.post(CHARGE_CARD, ASSEMBLY, {"CardId": n, "SleepMs": SLEEP_MS})
        for n in range(JOBS_PER_SIDE)
    ]
    with Producer(net_db) as producer:
        posted += producer.post_many(
            [
                Job(
                    CHARGE_CARD,
                    {"$type": f"{CHARGE_CARD}, {ASSEMBLY}", "CardId": n, "SleepMs": SLEEP_MS},
                )
                for n in range(JOBS_PER_SIDE, 2 * JOBS_PER_SIDE)
            ]
        ).ids
    procs = [
        workers.start(net_db, "--burst", "--concurrency", "4", "--poll", "0.1s") for _ in range(2)
    ]
    app.start(threads=2)

    wait_for(
        lambda: statuses(net_db).get(PROCESSED, 0) == len(posted) or app.crashed is not None,
        "every job processed",
        timeout=60,
    )
    assert app.crashed is None, f"the .NET consumer crashed: {app.crashed!r}"
    for proc in procs:
        assert proc.wait(30) == 0, workers.output(proc)

    dotnet_runs: dict[str, int] = {}
    for run in app.finished_runs():
        dotnet_runs[str(run.task_id)] = dotnet_runs.get(str(run.task_id), 0) + 1
    skconsole_runs = executions(log_dir)
    runs = {
        str(t): dotnet_runs.get(str(t), 0) + len(skconsole_runs.get(str(t), [])) for t in posted
    }
    assert {t: n for t, n in runs.items() if n != 1} == {}, "jobs not run exactly once"
    assert not [t for t, r in skconsole_runs.items() if overlaps(r)]
    assert statuses(net_db) == {PROCESSED: len(posted)}
    assert dotnet_runs, "the .NET consumers ran no job"
    assert skconsole_runs, "the skconsole workers ran no job"


# -- jobs skconsole failed, retried by .NET -------------------------------------------------
MODES = {"raise": 2, "timeout": 2, "fatal": 1}


def fail_in_skconsole(dsn: str, app: DotNetApp) -> dict[str, list[uuid.UUID]]:
    """.NET posts SyncLedger jobs; a burst `skconsole worker` fails each as its Mode
    says: recoverable exception and timeout (4 Error, retried in 60 s), fatal (6)."""
    ids: dict[str, list[uuid.UUID]] = {}
    n = 0
    for mode, count in MODES.items():
        for _ in range(count):
            n += 1
            ids.setdefault(mode, []).append(
                app.post(SYNC_LEDGER, ASSEMBLY, {"LedgerId": n, "Mode": mode})
            )
    worker = subprocess.run(
        skconsole_cmd(
            "--dsn",
            dsn,
            "worker",
            "--tasks",
            "tests.interop.tasks_interop",
            "--burst",
            "--poll",
            "0.1s",
        ),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert worker.returncode == 0, worker.stdout + worker.stderr
    for mode in ("raise", "timeout"):
        for task_id in ids[mode]:
            row = result_row(dsn, task_id)
            assert (row["task_status"], row["queued"]) == (JobStatus.ERROR, True), (mode, row)
    assert result_row(dsn, ids["fatal"][0])["task_status"] == JobStatus.FATAL
    return ids


def make_due(dsn: str) -> None:
    """The retries' back-off is over (they wait 60 s otherwise)."""
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("UPDATE sk_tasks_queue_t SET task_locked_until_ts = now() - interval '1 second'")


def test_a_dotnet_consumer_runs_the_retries_of_jobs_skconsole_failed(
    net_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    """After a skconsole worker failed jobs (exception, timeout, fatal), a .NET consumer
    dequeues the retries: it reads their last error without crashing (today: skconsole's
    plain-text traceback is not QueuedTaskError JSON, so Newtonsoft throws and the
    poller stops), runs them to 3 and keeps polling."""
    app = net_apps(net_db, executors={SYNC_LEDGER: lambda task: None}, poll_interval=0.05)
    ids = fail_in_skconsole(net_db, app)
    retried = ids["raise"] + ids["timeout"]
    make_due(net_db)

    app.start()
    wait_for(
        lambda: (
            app.crashed is not None
            or all(result_row(net_db, t)["task_status"] == PROCESSED for t in retried)
        ),
        "the retries processed by .NET",
    )
    assert app.crashed is None, f"the .NET consumer crashed: {app.crashed!r}"

    # still polling: a new job is picked up too
    later = app.post(SYNC_LEDGER, ASSEMBLY, {"LedgerId": 99, "Mode": "none"})
    wait_for(
        lambda: app.crashed is not None or result_row(net_db, later)["task_status"] == PROCESSED,
        "a later job processed by .NET",
    )
    assert app.crashed is None and app.polling
    assert result_row(net_db, ids["fatal"][0])["task_status"] == JobStatus.FATAL


def test_every_error_skconsole_stores_is_queued_task_error_json(
    net_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    """Each error a skconsole worker stored (handler exception, timeout, fatal) reads as
    .NET's QueuedTaskError: a JSON object with the exception's type and its message,
    and for a handler's exception the Python traceback as the stack trace (today:
    the plain-text traceback, which Newtonsoft cannot read)."""
    app = net_apps(net_db)
    ids = fail_in_skconsole(net_db, app)

    expected_type = {
        "raise": "LedgerUnavailable",
        "timeout": "TimeoutError",
        "fatal": "FatalTaskError",
    }
    unreadable: dict[str, Any] = {}
    for mode, task_ids in ids.items():
        for task_id in task_ids:
            text = result_row(net_db, task_id)["task_last_error"]
            try:
                error = parse_queued_task_error(text)
            except NetDeserializationError as exc:
                unreadable[f"{mode} {task_id}"] = f"{exc}; stored: {str(text)[:80]!r}"
                continue
            assert error is not None and error.type and error.message, (mode, text)
            assert error.type.endswith(expected_type[mode]), (mode, error.type)
            if mode != "timeout":  # the engine's timeout has no traceback of its own
                assert error.stack_trace and "Traceback" in error.stack_trace, (mode, text)
    assert unreadable == {}


# -- errors skconsole stored as plain text before schema 7 ----------------------------------
LEGACY_ERROR = (
    'Traceback (most recent call last):\n  File "/srv/tasks.py", line 9, in sync\n'
    "tests.interop.tasks_interop.LedgerUnavailable: ledger 7 unavailable"
)


def _legacy_failure(dsn: str, app: DotNetApp, status: int, queued: bool) -> uuid.UUID:
    """A job skconsole failed before schema 7: its plain-text traceback in the row."""
    task_id = app.post(SYNC_LEDGER, ASSEMBLY, {"LedgerId": 7, "Mode": "none"})
    with psycopg.connect(dsn, autocommit=True) as c:
        if not queued:
            c.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = %s", (task_id,))
        c.execute(
            "UPDATE sk_task_results_t SET task_status = %s, task_error_count = 1,"
            " task_last_error = %s WHERE task_id = %s",
            (status, LEGACY_ERROR, task_id),
        )
    return task_id


def test_setup_converts_the_plain_errors_of_waiting_jobs_for_dotnet(
    net_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    """A job that waits in the queue with a plain-text error (stored before schema 7) is
    given the QueuedTaskError shape by setup (same naming line, so the same failure
    group): a .NET consumer then runs it instead of stopping on it."""
    from skconsole.core.signature import error_signature
    from skconsole.db.connect import Database
    from skconsole.db.schema import setup_schema

    app = net_apps(net_db, executors={SYNC_LEDGER: lambda task: None})
    task_id = _legacy_failure(net_db, app, 4, queued=True)
    with psycopg.connect(net_db, autocommit=True) as c:  # setup runs again: an upgrade
        c.execute("UPDATE sk_schema_version_t SET scripts_sha256 = NULL")
    with Database(net_db).connect() as conn:
        setup_schema(conn)
    row = result_row(net_db, task_id)
    error = parse_queued_task_error(row["task_last_error"])
    assert error is not None and error.type.endswith("LedgerUnavailable")
    assert error.stack_trace == LEGACY_ERROR
    assert row["sk_error_signature"] == error_signature(LEGACY_ERROR)
    assert app.run_one() is not None and app.crashed is None
    assert result_row(net_db, task_id)["task_status"] == PROCESSED


def test_a_requeued_job_with_a_plain_error_reaches_dotnet_as_json(
    net_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    """An operator requeues a job that faulted before schema 7: the error goes back to
    the queue in the QueuedTaskError shape, and a .NET consumer runs the job."""
    app = net_apps(net_db, executors={SYNC_LEDGER: lambda task: None})
    task_id = _legacy_failure(net_db, app, 5, queued=False)
    got = subprocess.run(
        skconsole_cmd("--dsn", net_db, "requeue", "--id", str(task_id), "--yes"),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert got.returncode == 0, got.stderr
    assert app.run_one() is not None and app.crashed is None
    assert result_row(net_db, task_id)["task_status"] == PROCESSED


def test_a_dotnet_consumer_takes_a_spread_requeue_only_as_each_job_falls_due(
    net_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    """skconsole requeue --spread sets each job's due time in the queue row: a .NET
    consumer's dequeue honours it (the first job is due at once, the rest later)."""
    app = net_apps(net_db, executors={SYNC_LEDGER: lambda task: None})
    ids = [_legacy_failure(net_db, app, 5, queued=False) for _ in range(3)]
    got = subprocess.run(
        skconsole_cmd(
            "--dsn", net_db, "requeue", "--type", SYNC_LEDGER, "--status", "5",
            "--spread", "1h", "--yes",
        ),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    first = app.run_one()
    assert first is not None and first.task_id in ids and app.crashed is None
    assert app.run_one() is None  # the other two are due 20 and 40 minutes from now
    assert sorted(result_row(net_db, i)["task_status"] for i in ids) == [
        JobStatus.UNPROCESSED,
        JobStatus.UNPROCESSED,
        PROCESSED,
    ]
