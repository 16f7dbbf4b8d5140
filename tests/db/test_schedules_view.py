"""The schedules read model and ``skconsole status schedules``: each periodic type's
definition, next run, latest posted job and waiting jobs, on a real PostgreSQL.

Schedules are seeded by a real engine (a type with ``every="1s"``) or written
into sk_schedules_t directly, as another version of skconsole might have.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from uuid import UUID
from zoneinfo import ZoneInfo

import psycopg

from skconsole import read
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.worker.registry import TaskOptions, TaskRegistry
from tests.support.rows import add_big_results
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

from .test_ops import add_job

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]

ticking = TaskRegistry(TaskOptions(max_attempts=1, timeout=10.0))


@ticking.task("sched.tick", every="1s", payload={"report": "heartbeat"})
async def tick(payload: Any) -> None:
    pass


def add_schedule(
    conn: Conn,
    task_type: str,
    *,
    cron: str | None = None,
    every: float | None = None,
    timezone: str = "UTC",
    last_tick_age_s: float = 0.0,
    last_task_id: UUID | None = None,
    scheduled: bool = True,
) -> None:
    """A row of sk_schedules_t as a worker leaves it; its latest tick ``last_tick_age_s`` ago.
    ``scheduled``: a live worker that schedules the type is registered too."""
    if scheduled:
        conn.execute(
            "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,"
            " worker_concurrency, worker_task_types, worker_lease_seconds,"
            " worker_lease_margin_seconds, worker_schedules)"
            " VALUES (gen_random_uuid(), 'p', 'h', 1, 1, ARRAY[%s], 3600, 1, ARRAY[%s])",
            (task_type, task_type),
        )
    conn.execute(
        "INSERT INTO sk_schedules_t (task_type, sch_cron, sch_every_seconds, sch_timezone, "
        "sch_last_tick_ts, sch_last_task_id, sch_last_posted_ts) VALUES (%s, %s, %s, %s, "
        "now() - %s * interval '1 second', %s, "
        "CASE WHEN %s::uuid IS NOT NULL THEN now() - %s * interval '1 second' END)",
        (
            task_type,
            cron,
            every,
            timezone,
            last_tick_age_s,
            last_task_id,
            last_task_id,
            last_tick_age_s,
        ),
    )


def pause(conn: Conn, task_type: str) -> None:
    conn.execute(
        "INSERT INTO sk_task_types_t (task_type, tt_paused) VALUES (%s, true)", (task_type,)
    )


def only(conn: Conn, **kw: Any) -> read.ScheduleInfo:
    (info,) = read.schedules(conn, **kw)
    return info


def last_posted_job(conn: Conn) -> UUID | None:
    row = conn.execute(
        "SELECT s.sch_last_task_id FROM sk_schedules_t s "
        "JOIN sk_task_results_t r ON r.task_id = s.sch_last_task_id AND r.task_status = 3"
    ).fetchone()
    return row[0] if row else None


# -- the read model ------------------------------------------------------------------------
def test_a_running_workers_schedule_shows_its_latest_job_and_its_next_tick(
    db: Database, conn: Conn
) -> None:
    with EngineThread(db.dsn, ticking):
        wait_until(lambda: last_posted_job(conn) is not None, timeout=30)
        info = only(conn)

    assert (info.task_type, info.schedule, info.error, info.paused) == (
        "sched.tick",
        "every 1s",
        None,
        False,
    )
    assert info.last_task_id == last_posted_job(conn)
    assert info.last_status == JobStatus.PROCESSED and not info.last_job_purged
    assert info.payload == '{"report": "heartbeat"}'
    assert info.next_run_in_s is not None and 0 < info.next_run_in_s <= 1
    assert info.last_posted_age_s is not None and info.last_posted_age_s < 30


def test_an_interval_schedule_runs_next_at_the_next_multiple_of_its_interval(conn: Conn) -> None:
    add_schedule(conn, "t.every", every=60)

    info = only(conn)

    assert info.schedule == "every 1m"
    assert info.next_run is not None and info.next_run.timestamp() % 60 == 0
    assert info.next_run_in_s is not None and 0 < info.next_run_in_s <= 60


def test_a_cron_schedule_runs_next_at_its_time_in_its_time_zone(conn: Conn) -> None:
    add_schedule(conn, "t.nightly", cron="0 3 * * *", timezone="Europe/Paris")

    info = only(conn)

    assert info.schedule == "cron 0 3 * * * (Europe/Paris)"
    assert info.next_run is not None
    local = info.next_run.astimezone(ZoneInfo("Europe/Paris"))
    assert (local.hour, local.minute) == (3, 0)
    assert info.next_run_in_s is not None and 0 < info.next_run_in_s <= 25 * 3600


def test_a_paused_type_has_no_next_run(conn: Conn) -> None:
    add_schedule(conn, "t.every", every=60)
    pause(conn, "t.every")

    info = only(conn)

    assert info.paused is True
    assert (info.next_run, info.next_run_in_s, info.late_s) == (None, None, None)


def test_the_latest_jobs_status_comes_from_its_result_row(conn: Conn) -> None:
    job = add_job(conn, 6, task_type="t.every")
    add_schedule(conn, "t.every", every=60, last_tick_age_s=30, last_task_id=job)

    info = only(conn)

    assert (info.last_task_id, info.last_status, info.last_job_purged) == (
        job,
        JobStatus.FATAL,
        False,
    )
    assert info.last_posted_age_s is not None and 30 <= info.last_posted_age_s < 90


def test_a_latest_job_that_was_purged_is_said_to_be(conn: Conn) -> None:
    gone = uuid.uuid4()
    add_schedule(conn, "t.every", every=60, last_task_id=gone)

    info = only(conn)

    assert (info.last_task_id, info.last_status, info.last_job_purged) == (gone, None, True)


def test_a_schedule_that_never_posted_has_no_latest_job(conn: Conn) -> None:
    add_schedule(conn, "t.every", every=60)

    info = only(conn)

    assert (info.last_task_id, info.last_status, info.last_job_purged) == (None, None, False)
    assert info.last_posted_at is None


def test_waiting_counts_the_types_ready_and_scheduled_jobs(conn: Conn) -> None:
    for _ in range(3):
        add_job(conn, 1, task_type="t.every")
    add_job(conn, 4, task_type="t.every", ready=False)  # backing off
    add_job(conn, 1, task_type="t.other")
    add_job(conn, 3, task_type="t.every")
    add_schedule(conn, "t.every", every=60)

    info = only(conn)

    assert (info.waiting, info.waiting_estimated) == (4, False)


def test_waiting_on_a_sampled_queue_is_said_to_be_an_estimate(conn: Conn) -> None:
    for _ in range(3):
        add_job(conn, 1, task_type="t.every")
    conn.execute("ANALYZE sk_tasks_queue_t")
    add_schedule(conn, "t.every", every=60)

    info = only(conn, queue=read.depth(conn, exact_limit=0))

    # a queue this small is sampled whole: the estimate is exact
    assert (info.waiting, info.waiting_estimated) == (3, True)


def test_a_type_with_nothing_queued_waits_for_nothing(conn: Conn) -> None:
    add_job(conn, 1, task_type="t.other")
    add_schedule(conn, "t.every", every=60)

    assert only(conn).waiting == 0


def test_a_due_tick_no_worker_took_is_late(conn: Conn) -> None:
    # yearly, last taken two years ago: this year's tick is due and nobody took it
    add_schedule(conn, "t.yearly", cron="0 0 1 1 *", last_tick_age_s=2 * 365 * 86400)

    info = only(conn)

    this_year = datetime(datetime.now(UTC).year, 1, 1, tzinfo=UTC)
    assert info.late_s is not None
    assert abs(info.late_s - (datetime.now(UTC) - this_year).total_seconds()) < 60
    assert info.next_run == datetime(this_year.year + 1, 1, 1, tzinfo=UTC)


def test_a_schedule_no_live_worker_has_says_so_instead_of_a_next_run(conn: Conn) -> None:
    """Removed from the code (or all its workers are gone): no tick will be posted, so
    neither a next run nor lateness is shown."""
    add_schedule(conn, "t.removed", every=1, last_tick_age_s=3600, scheduled=False)
    conn.execute(  # a live worker that schedules something else, and a stopped one that had it
        "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,"
        " worker_concurrency, worker_task_types, worker_lease_seconds,"
        " worker_lease_margin_seconds, worker_schedules, worker_stopped_at_ts) VALUES"
        " (gen_random_uuid(), 'p', 'h', 1, 1, ARRAY['x'], 3600, 1, ARRAY['t.other'], NULL),"
        " (gen_random_uuid(), 'p', 'h', 2, 1, ARRAY['x'], 3600, 1, ARRAY['t.removed'], now())"
    )

    info = only(conn)

    assert (info.scheduled_by, info.orphaned) == (0, True)
    assert (info.next_run, info.late_s) == (None, None)
    assert info.next_run_text == "no worker schedules it"


def test_a_tick_taken_on_time_is_not_late(conn: Conn) -> None:
    add_schedule(conn, "t.yearly", cron="0 0 1 1 *", last_tick_age_s=0)

    assert only(conn).late_s is None


def test_a_cron_this_version_cannot_read_is_shown_as_stored_with_the_reason(conn: Conn) -> None:
    add_schedule(conn, "t.bad", cron="61 * * * *")
    add_schedule(conn, "t.good", every=30)

    bad, good = read.schedules(conn)

    assert (bad.task_type, bad.schedule) == ("t.bad", "cron 61 * * * *")
    assert bad.error is not None and "invalid cron expression" in bad.error
    assert (bad.next_run, bad.late_s) == (None, None)
    assert (good.schedule, good.error) == ("every 30s", None)


def test_an_unknown_time_zone_is_shown_as_stored_with_the_reason(conn: Conn) -> None:
    add_schedule(conn, "t.bad", cron="0 3 * * *", timezone="Europe/Atlantis")

    info = only(conn)

    assert info.schedule == "cron 0 3 * * * (Europe/Atlantis)"
    assert info.error is not None and "unknown time zone 'Europe/Atlantis'" in info.error
    assert info.next_run is None


def test_an_interval_below_the_minimum_is_shown_as_stored_with_the_reason(conn: Conn) -> None:
    add_schedule(conn, "t.fast", every=0.25)

    info = only(conn)

    assert info.schedule == "every 0.25s"
    assert info.error is not None and "every= must be at least" in info.error


# -- skconsole status schedules ----------------------------------------------------------------
def test_status_schedules_prints_each_schedule_with_its_next_run(run_cli: CLI, conn: Conn) -> None:
    add_schedule(conn, "t.every", every=60)
    add_schedule(conn, "t.nightly", cron="0 3 * * *", timezone="Europe/Paris")

    proc = run_cli("status", "schedules", env={"COLUMNS": "200"})

    assert proc.returncode == 0, proc.stderr
    [every] = [line for line in proc.stdout.splitlines() if "t.every" in line]
    assert "every 1m" in every and " in " in every
    [nightly] = [line for line in proc.stdout.splitlines() if "t.nightly" in line]
    assert "cron 0 3 * * * (Europe/Paris)" in nightly


def test_status_schedules_says_paused_instead_of_a_next_run(run_cli: CLI, conn: Conn) -> None:
    add_schedule(conn, "t.every", every=60)
    pause(conn, "t.every")

    proc = run_cli("status", "schedules", env={"COLUMNS": "200"})

    assert proc.returncode == 0, proc.stderr
    [row] = [line for line in proc.stdout.splitlines() if "t.every" in line]
    assert "paused" in row and " in " not in row


def test_status_schedules_says_when_the_latest_job_was_purged(run_cli: CLI, conn: Conn) -> None:
    add_schedule(conn, "t.every", every=60, last_task_id=uuid.uuid4())

    proc = run_cli("status", "schedules", env={"COLUMNS": "200"})

    assert proc.returncode == 0, proc.stderr
    [row] = [line for line in proc.stdout.splitlines() if "t.every" in line]
    assert "purged" in row


def test_status_schedules_shows_an_unreadable_row_as_stored_with_a_note_below(
    run_cli: CLI, conn: Conn
) -> None:
    add_schedule(conn, "t.bad", cron="61 * * * *")

    proc = run_cli("status", "schedules", env={"COLUMNS": "250"})

    assert proc.returncode == 0, proc.stderr
    [row, note] = [line for line in proc.stdout.splitlines() if "t.bad" in line]
    assert "cron 61 * * * *" in row and "unreadable" in row
    assert note.startswith("t.bad: cannot read its schedule: invalid cron expression")


def test_status_schedules_at_80_columns_fits(run_cli: CLI, conn: Conn) -> None:
    add_schedule(conn, "billing.monthly_invoices", cron="0 6 1 * *", timezone="America/New_York")
    add_schedule(conn, "t.bad", cron="0 3 * * *", timezone="Europe/Atlantis")
    job = add_job(conn, 3, task_type="billing.monthly_invoices")
    conn.execute("UPDATE sk_schedules_t SET sch_last_task_id = %s", (job,))

    proc = run_cli("status", "schedules", env={"COLUMNS": "80"})

    assert proc.returncode == 0, proc.stderr
    assert all(len(line) <= 80 for line in proc.stdout.splitlines()), proc.stdout
    assert "billing.monthly_invoices" in proc.stdout


def test_status_schedules_json_has_stable_keys_and_iso_times(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 3, task_type="t.every")
    add_schedule(conn, "t.every", every=60, last_tick_age_s=5, last_task_id=job)

    proc = run_cli("status", "schedules", "--json")

    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)["schedules"]
    assert list(row) == [
        "task_type",
        "schedule",
        "cron",
        "every_s",
        "timezone",
        "missed",
        "payload",
        "error",
        "paused",
        "next_run",
        "next_run_in_s",
        "late_s",
        "last_tick",
        "last_task_id",
        "last_status",
        "last_job_purged",
        "last_posted_at",
        "last_posted_age_s",
        "waiting",
        "waiting_estimated",
        "defined_at",
        "scheduled_by",
    ]
    assert (row["schedule"], row["last_task_id"], row["last_status"]) == (
        "every 1m",
        str(job),
        "Processed",
    )
    for key in ("next_run", "last_tick", "last_posted_at", "defined_at"):
        assert datetime.fromisoformat(row[key]).tzinfo is not None, key


# -- the read stays cheap on a big results table ------------------------------------------------
def test_the_latest_job_is_looked_up_by_primary_key_on_a_big_results_table(conn: Conn) -> None:
    add_big_results(conn)
    add_schedule(conn, "t.every", every=60, last_task_id=uuid.uuid4())

    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + query("schedules")))

    assert "pk_sk_task_results_t" in plan
    assert "Seq Scan on sk_task_results_t" not in plan
