"""Interop tier (``tests/interop``): jobs that a .NET consumer runs, which have no owner.

A Stakhanovise.NET consumer records nothing while it runs a job: no owner, no
lease, no lock. skconsole cannot tell a slow .NET job from a dead one, so it
must leave such jobs alone unless an operator (or a worker option) says how
long is too long; and a job skconsole once claimed and handed back must not
keep skconsole's stale owner once .NET has taken it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from tests.interop.conftest import Workers, cli_json, result_row, run_skconsole, wait_for
from tests.interop.dotnet_app import (
    ERROR,
    PROCESSED,
    PROCESSING,
    DequeuedTask,
    DotNetApp,
    Gate,
    SimulatedCrash,
)
from tests.interop.tasks_interop import ASSEMBLY, CHARGE_CARD, SEND_REMINDER

pytestmark = pytest.mark.interop


def processing_for_s(dsn: str, task_id: uuid.UUID) -> float:
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute(
            "SELECT extract(epoch FROM now() - task_last_processing_attempted_at_ts)::float8"
            " FROM sk_task_results_t WHERE task_id = %s",
            (task_id,),
        ).fetchone()
    assert row is not None and row[0] is not None
    return float(row[0])


def crash(task: DequeuedTask) -> None:
    raise SimulatedCrash()


def test_reap_unowned_after_reposts_a_crashed_dotnet_consumers_job(
    net_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    """A .NET consumer dies mid-job (2 Processing, no queue row, for ever). Once it has
    been processing for more than 2 s, `reap --unowned-after 2s --yes` re-posts it
    (4 Error, queued; today: "requested 1, changed 0"), and a restarted .NET consumer
    runs it to 3 Processed (so the reap's error must be readable by .NET)."""
    dead = net_apps(net_db, executors={CHARGE_CARD: crash})
    task_id = dead.post(CHARGE_CARD, ASSEMBLY, {"CardId": 7})
    with pytest.raises(SimulatedCrash):
        dead.run_one()
    row = result_row(net_db, task_id)
    assert (row["task_status"], row["queued"]) == (PROCESSING, False)
    wait_for(lambda: processing_for_s(net_db, task_id) > 2.2, "the job processing for over 2 s")

    reaped = cli_json(net_db, "reap", "--unowned-after", "2s", "--yes", "--json")

    assert reaped["changed"] == 1, reaped
    row = result_row(net_db, task_id)
    assert (row["task_status"], row["queued"]) == (ERROR, True)
    restarted = net_apps(net_db, executors={CHARGE_CARD: lambda task: None})
    run = restarted.run_one()
    assert run is not None and run.task_id == task_id and run.outcome == "processed"
    assert result_row(net_db, task_id)["task_status"] == PROCESSED


def add_canary(dsn: str) -> uuid.UUID:
    """A job in 2 Processing owned by a worker id no worker registered: every reaper
    round reaps it at once (a job of a type no test worker runs, so it stays 4 Error).
    Once it is reaped, a reap round has judged every job in 2 Processing."""
    canary = uuid.uuid4()
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(
            "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
            " task_status, task_priority, task_posted_at_ts, task_last_processing_attempted_at_ts,"
            " sk_owner_worker_id) VALUES (%s, 'Interop.Canary', 'test', '{}', 2, 0, now(), now(),"
            " %s)",
            (canary, uuid.uuid4()),
        )
    return canary


def test_a_worker_leaves_a_long_running_dotnet_job_alone_unless_told(
    net_db: str, workers: Workers, net_apps: Callable[..., DotNetApp]
) -> None:
    """A live .NET consumer has run a job for over an hour. A `skconsole worker` with
    default reaping options does not reap it (today: hung after 1 h, reaped); one
    started with `--reap-unowned-after 30m` does. (The workers run another type only,
    so that they do not run the re-posted job themselves.)"""
    gate = Gate()
    app = net_apps(net_db, executors={CHARGE_CARD: gate}).start()
    task_id = app.post(CHARGE_CARD, ASSEMBLY, {"CardId": 1})
    assert gate.started.wait(10), "the .NET consumer did not start the job"
    with psycopg.connect(net_db, autocommit=True) as c:
        c.execute(
            "UPDATE sk_task_results_t SET task_first_processing_attempted_at_ts ="
            " now() - interval '61 minutes', task_last_processing_attempted_at_ts ="
            " now() - interval '61 minutes' WHERE task_id = %s",
            (task_id,),
        )
    canary = add_canary(net_db)

    worker = workers.start(net_db, "--types", SEND_REMINDER)
    wait_for(
        lambda: result_row(net_db, canary)["task_status"] != PROCESSING,
        "a reap round of the worker (the canary reaped)",
        timeout=30,
    )
    row = result_row(net_db, task_id)
    assert (row["task_status"], row["queued"]) == (PROCESSING, False), (
        f"the default worker reaped the .NET job: {row['task_last_error']}"
    )
    assert workers.stop(worker) == 0, workers.output(worker)

    told = workers.start(net_db, "--types", SEND_REMINDER, "--reap-unowned-after", "30m")
    wait_for(
        lambda: told.poll() is not None or result_row(net_db, task_id)["task_status"] != PROCESSING,
        "the .NET job reaped by the worker told to",
        timeout=30,
    )
    assert told.poll() is None, workers.output(told)
    row = result_row(net_db, task_id)
    assert (row["task_status"], row["queued"]) == (ERROR, True)
    gate.release.set()


def worker_lease_lapsed(dsn: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as c:
        rows = c.execute("SELECT lease_lapsed FROM sk_worker_liveness()").fetchall()
    return bool(rows) and all(r[0] for r in rows)


def inflight_entry(dsn: str, task_id: uuid.UUID) -> dict[str, Any]:
    doc = cli_json(dsn, "status", "inflight", "--json")
    entry = next((j for j in doc["jobs"] if j["task_id"] == str(task_id)), None)
    assert entry is not None, doc
    return entry


def test_a_job_skconsole_handed_back_then_dotnet_took_is_not_skconsoles(
    net_db: str, workers: Workers, net_apps: Callable[..., DotNetApp]
) -> None:
    """A skconsole worker claims a job and snoozes it (hands it back); a .NET consumer
    then dequeues it and runs it slowly; meanwhile the skconsole worker stops and its
    lease lapses. `status inflight --json` must not call the job stopped, gone or hung
    (today: "worker stopped ... while the job ran", from the stale owner), and
    `reap --yes` must not re-post it."""
    gate = Gate()
    app = net_apps(net_db, executors={SEND_REMINDER: gate}, poll_interval=0.05)
    task_id = app.post(SEND_REMINDER, ASSEMBLY, {"InvoiceId": 5})
    # --poll 1h: after the snooze the worker only claims on a notification, and the
    # fast-forward below sends none, so the .NET consumer is the one that takes it
    worker = workers.start(net_db, "--lease", "5s", "--poll", "1h", "--types", SEND_REMINDER)
    wait_for(
        lambda: (
            (lambda r: (r["task_status"], r["sk_snooze_count"], r["queued"]))(
                result_row(net_db, task_id)
            )
            == (1, 1, True)
        ),
        "the job snoozed by the skconsole worker",
    )
    with psycopg.connect(net_db, autocommit=True) as c:  # the snooze is over
        c.execute(
            "UPDATE sk_tasks_queue_t SET task_locked_until_ts = now() - interval '1 second'"
            " WHERE task_id = %s",
            (task_id,),
        )
    app.start()
    assert gate.started.wait(10), "the .NET consumer did not take the job"
    assert workers.stop(worker) == 0, workers.output(worker)
    wait_for(lambda: worker_lease_lapsed(net_db), "the stopped worker's lease lapsed", timeout=20)

    entry = inflight_entry(net_db, task_id)
    words = f"{entry['state']} | {entry['note']} | {entry['hung_reason']}"
    assert not entry["hung"] and entry["hung_reason"] is None, words
    assert entry["state"] != "hung", words
    assert not any(w in words.lower() for w in ("stopped", "gone")), words

    reaped = run_skconsole(net_db, "reap", "--yes", "--json")
    assert reaped.returncode == 0, reaped.stderr
    row = result_row(net_db, task_id)
    assert (row["task_status"], row["queued"]) == (PROCESSING, False), row["task_last_error"]

    gate.release.set()
    wait_for(lambda: result_row(net_db, task_id)["task_status"] == PROCESSED, "the .NET run ended")
    assert app.crashed is None
