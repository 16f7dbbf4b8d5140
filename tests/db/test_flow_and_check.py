"""Flow per type, SLOs and `skconsole check` on a real server.

Waiting is made by backdating timestamps with SQL, never by sleeping: a job
whose task_locked_until_ts is a minute ago has been ready for a minute.
"""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from skconsole import ops
from skconsole.check.verdict import CHECKS
from skconsole.core.status import JobStatus
from skconsole.db.schema import missing_objects, setup_schema
from skconsole.db.sqlfiles import load_sql
from skconsole.read.flow import DONE, FAILED_FINISHED, flow

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]
#: a type of tests.support.tasks_faults that succeeds at once
OK_TYPE = "ok"
WORKER = ("worker", "--tasks", "tests.support.tasks_faults", "--types", OK_TYPE, "--burst")
#: other engineers' sessions on a shared test server may hold the xmin horizon; the
#: SLO is what these tests are about
QUIET_HEALTH = ("--horizon-warn", "1d", "--lock-wait-warn", "1d")


def backdate_ready(conn: Conn, task_type: str, seconds: float) -> None:
    """Make the type's queued jobs posted and eligible ``seconds`` ago."""
    conn.execute(
        "UPDATE sk_tasks_queue_t SET task_posted_at_ts = now() - %(s)s * interval '1 second',"
        " task_locked_until_ts = now() - %(s)s * interval '1 second' WHERE task_type = %(t)s",
        {"s": seconds, "t": task_type},
    )
    conn.execute(
        "UPDATE sk_task_results_t SET task_posted_at_ts = now() - %(s)s * interval '1 second'"
        " WHERE task_type = %(t)s",
        {"s": seconds, "t": task_type},
    )


def add_results(
    conn: Conn,
    task_type: str,
    n: int,
    *,
    status: int,
    posted_ago_s: float,
    finalized_ago_s: float | None = None,
) -> None:
    """``n`` result rows of ``task_type`` posted (and finalized) that long ago."""
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_posted_at_ts, task_processing_finalized_at_ts)"
        " SELECT gen_random_uuid(), %(t)s, 'test', 'null', %(status)s, 0,"
        " now() - %(posted)s * interval '1 second',"
        " now() - %(done)s * interval '1 second'"
        " FROM generate_series(1, %(n)s)",
        {
            "t": task_type,
            "status": status,
            "posted": posted_ago_s,
            "done": finalized_ago_s,
            "n": n,
        },
    )


def add_ready(conn: Conn, task_type: str, n: int, *, ready_for_s: float = 1.0) -> None:
    """``n`` queued jobs of ``task_type``, eligible for ``ready_for_s``."""
    conn.execute(
        "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,"
        " task_priority, task_posted_at_ts, task_locked_until_ts)"
        " SELECT gen_random_uuid(), %(t)s, 'test', 'null', 0,"
        " now() - %(s)s * interval '1 second', now() - %(s)s * interval '1 second'"
        " FROM generate_series(1, %(n)s)",
        {"t": task_type, "n": n, "s": ready_for_s},
    )


# -- the done-when: check exits 2 past the SLO, 0 once drained ------------------------------
def test_check_is_critical_past_a_types_slo_and_ok_once_its_jobs_drain(
    run_cli: CLI, conn: Conn
) -> None:
    assert run_cli("slo", "set", OK_TYPE, "--max-wait", "2s", "--yes").returncode == 0
    assert run_cli("enqueue", OK_TYPE, "--count", "5").returncode == 0
    backdate_ready(conn, OK_TYPE, 60.0)

    late = run_cli("check", *QUIET_HEALTH)

    assert late.returncode == 2, late.stdout + late.stderr
    summary = late.stdout.splitlines()[0]
    # backdated 60 s; a loaded machine may take a second or two more to read it
    assert re.match(
        r"SKCONSOLE CRITICAL - 1 SLO breached \(ok: oldest ready 1m 0\ds > 2\.0s", summary
    ), summary
    assert re.search(r"\| oldest_ready_ok=6[0-9]\.", summary), summary
    assert "CRITICAL slo: ok: oldest ready" in late.stdout

    drained = run_cli(*WORKER)
    assert drained.returncode == 0, drained.stdout + drained.stderr

    ok = run_cli("check", *QUIET_HEALTH)

    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("SKCONSOLE OK - 1 SLO met, no hung job")


def test_check_warns_when_the_oldest_ready_job_nears_its_slo(run_cli: CLI, conn: Conn) -> None:
    ops.SLO.execute(
        conn,
        ops.Selection(task_type="t"),
        ops.SloParams(max_wait_s=100.0),
        actor=ops.Actor.current(),
    )
    add_ready(conn, "t", 1, ready_for_s=90.0)

    near = run_cli("check", *QUIET_HEALTH)

    assert near.returncode == 1, near.stdout + near.stderr
    assert "within 20% of its SLO 1m 40s" in near.stdout.splitlines()[0]


def test_check_is_critical_for_a_dead_worker_holding_a_job(run_cli: CLI, conn: Conn) -> None:
    """Its lease lapsed two minutes ago (no heartbeat, no control session) with a job in
    2 Processing: the worker is dead (CRITICAL) and its job hung (WARNING until it has
    been silent for --critical-hung-after)."""
    worker = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,"
        " worker_concurrency, worker_task_types, worker_heartbeat_at_ts, worker_lease_seconds,"
        " worker_lease_margin_seconds) VALUES (%s, 'p', 'w1', 42, 4, '{t.a}',"
        " now() - interval '150 seconds', 30, 5)",
        (worker,),
    )
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_posted_at_ts, task_last_processing_attempted_at_ts,"
        " sk_owner_worker_id, sk_attempt) VALUES (gen_random_uuid(), 't.a', 'test', 'null', 2, 0,"
        " now() - interval '200 seconds', now() - interval '200 seconds', %s, 1)",
        (worker,),
    )

    done = run_cli("--read-only", "check", *QUIET_HEALTH)

    assert done.returncode == 2, done.stdout + done.stderr
    assert "1 dead worker holding jobs (worker w1 pid 42 gone" in done.stdout.splitlines()[0]
    assert "WARNING hung: t.a: 1 hung job (worker gone (w1 pid 42)" in done.stdout
    assert "hung_jobs=1;1;;0" in done.stdout and "dead_workers=1;;1;0" in done.stdout
    stale = run_cli("check", "--critical-hung-after", "1m", *QUIET_HEALTH)
    assert "CRITICAL hung: job " in stale.stdout, stale.stdout


def test_check_skip_workers_leaves_out_types_no_registered_worker_runs(
    run_cli: CLI, conn: Conn
) -> None:
    """Consumers that register nowhere (Stakhanovise.NET processes) would make every type
    they run read as unserved: --skip workers is how such a queue is monitored."""
    add_ready(conn, "dotnet.emails", 4)

    unserved = run_cli("check", *QUIET_HEALTH)
    skipped = run_cli("check", "--skip", "workers", *QUIET_HEALTH)

    assert unserved.returncode == 1, unserved.stdout + unserved.stderr
    assert "dotnet.emails: 4 ready, no alive worker runs it" in unserved.stdout
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "worker" not in skipped.stdout  # neither the check nor its perfdata


def test_check_skip_of_an_unknown_check_is_unknown_in_one_line(run_cli: CLI) -> None:
    done = run_cli("check", "--skip", "worker")

    assert done.returncode == 3
    assert done.stdout == (
        "SKCONSOLE UNKNOWN - --skip: no check 'worker' (the checks: slo, hung, workers, health, schedules, replication, breakers)\n"
    )


# -- the flow read model ----------------------------------------------------------------------
def test_flow_counts_arrivals_and_completions_within_the_window(conn: Conn) -> None:
    # backlog: 60 posted and 30 finished in the window: 12/min in, 6/min out
    add_results(conn, "slow", 60, status=JobStatus.UNPROCESSED, posted_ago_s=60.0)
    add_results(
        conn, "slow", 30, status=JobStatus.PROCESSED, posted_ago_s=1200.0, finalized_ago_s=120.0
    )
    add_results(
        conn, "slow", 10, status=JobStatus.PROCESSED, posted_ago_s=1200.0, finalized_ago_s=600.0
    )  # old
    add_results(
        conn, "slow", 7, status=JobStatus.ERROR, posted_ago_s=1200.0, finalized_ago_s=30.0
    )  # retries
    add_ready(conn, "slow", 100)
    # 30 in, 120 done (the Faulted ones are failures, not done): net 18/min, 90 ready
    # drain in 5 min
    add_results(conn, "fast", 30, status=JobStatus.UNPROCESSED, posted_ago_s=10.0)
    add_results(
        conn, "fast", 120, status=JobStatus.PROCESSED, posted_ago_s=900.0, finalized_ago_s=10.0
    )
    add_results(
        conn, "fast", 20, status=JobStatus.FAULTED, posted_ago_s=900.0, finalized_ago_s=10.0
    )
    add_ready(conn, "fast", 90)

    by_type = {f.task_type: f for f in flow(conn, 300.0)}

    slow, fast = by_type["slow"], by_type["fast"]
    assert (slow.arrivals, slow.completions, slow.ready) == (60, 30, 100)
    assert (slow.arrivals_per_min, slow.completions_per_min) == (12.0, 6.0)
    assert slow.drain_text == "growing 6.0/min"
    assert (fast.arrivals, fast.completions) == (30, 120)
    assert fast.drain_s == pytest.approx(300.0)
    assert fast.drain_text == "drains in 5m 00s"


def test_flow_lists_a_type_with_an_slo_and_nothing_else(conn: Conn) -> None:
    ops.SLO.execute(
        conn,
        ops.Selection(task_type="quiet"),
        ops.SloParams(max_wait_s=30.0),
        actor=ops.Actor.current(),
    )

    (quiet,) = flow(conn)

    assert (quiet.task_type, quiet.slo_max_wait_s, quiet.slo_text) == (
        "quiet",
        30.0,
        "met: none ready",
    )


def test_flow_reads_only_the_windows_rows_of_a_big_results_table(conn: Conn) -> None:
    """50,000 results from yesterday: both counts are index range scans, no full scan."""
    add_results(
        conn,
        "old",
        50_000,
        status=JobStatus.PROCESSED,
        posted_ago_s=86_400.0,
        finalized_ago_s=86_000.0,
    )
    add_results(
        conn, "new", 10, status=JobStatus.PROCESSED, posted_ago_s=60.0, finalized_ago_s=30.0
    )
    conn.execute("ANALYZE sk_task_results_t")

    plan = "\n".join(
        r[0]
        for r in conn.execute(
            "EXPLAIN " + load_sql("queries/flow"),
            {
                "window_s": 300.0,
                "done": [int(s) for s in DONE],
                "failed": [int(s) for s in FAILED_FINISHED],
            },
        )
    )

    assert "idx_sk_task_results_posted" in plan, plan
    assert "idx_sk_task_results_status_finalized" in plan, plan
    assert "Seq Scan on sk_task_results_t" not in plan, plan


# -- skconsole slo ------------------------------------------------------------------------------
def test_slo_set_and_clear_are_audited_with_the_old_and_new_values(
    run_cli: CLI, conn: Conn
) -> None:
    done = run_cli("slo", "set", "emails.send", "--max-wait", "30s", "--yes")
    assert done.returncode == 0, done.stderr
    assert "emails.send: max wait 30s (audit #" in done.stdout
    listed = json.loads(run_cli("slo", "--json").stdout)
    assert [(s["task_type"], s["slo_max_wait_s"]) for s in listed["slos"]] == [
        ("emails.send", 30.0)
    ]

    cleared = run_cli("slo", "clear", "emails.send", "--yes")

    assert cleared.returncode == 0, cleared.stderr
    clear_row, set_row = ops.audit.entries(conn, action="slo")[:2]
    none = {"max_wait_s": None, "max_failure_rate": None}
    assert (set_row.details or {})["old"] == none
    assert (set_row.details or {})["new"] == {**none, "max_wait_s": 30.0}
    assert (clear_row.details or {})["old"] == {**none, "max_wait_s": 30.0}
    assert (clear_row.details or {})["new"] == none
    assert json.loads(run_cli("slo", "--json").stdout) == {"slos": []}


def test_an_slo_dry_run_changes_nothing(run_cli: CLI, conn: Conn) -> None:
    done = run_cli("slo", "set", "emails.send", "--max-wait", "30s", "--dry-run")

    assert done.returncode == 0, done.stderr
    assert "slo would set max wait 30s" in done.stdout
    assert ops.audit.entries(conn, action="slo") == []


def test_an_slo_is_refused_in_read_only_mode(run_cli: CLI, conn: Conn) -> None:
    done = run_cli("--read-only", "slo", "set", "emails.send", "--max-wait", "30s", "--yes")

    assert done.returncode == 5, done.stdout + done.stderr
    assert "read-only" in done.stderr
    assert conn.execute("SELECT count(*) FROM sk_task_types_t").fetchone() == (0,)


@pytest.mark.parametrize("value", ["0s", "500ms", "31d", "soon"])
def test_a_bad_max_wait_is_one_clear_line(run_cli: CLI, value: str) -> None:
    done = run_cli("slo", "set", "emails.send", "--max-wait", value, "--yes")

    assert done.returncode == 2
    assert "--max-wait" in done.stderr and "Traceback" not in done.stderr


# -- skconsole status flow and check --json -------------------------------------------------------
def test_status_flow_shows_the_drain_and_the_slo(run_cli: CLI, conn: Conn) -> None:
    assert run_cli("slo", "set", OK_TYPE, "--max-wait", "30s", "--yes").returncode == 0
    add_ready(conn, OK_TYPE, 3, ready_for_s=110.0)

    table = run_cli("status", "flow", "--wide")
    doc = json.loads(run_cli("status", "flow", "--json").stdout)

    assert table.returncode == 0, table.stderr
    assert "breached 1m 20s ago" in table.stdout and "stalled" in table.stdout
    (row,) = doc["types"]
    assert (row["ready"], row["slo_state"], doc["window_s"]) == (3, "breached", 300.0)


def test_check_json_gives_every_checks_result_in_read_only_mode(run_cli: CLI) -> None:
    done = run_cli("--read-only", "check", "--json", *QUIET_HEALTH)

    doc = json.loads(done.stdout)
    assert done.returncode == doc["status"] == 0, done.stdout
    assert doc["status_name"] == "OK"
    # a queue with no circuit breaker: its check says nothing (and is left out)
    assert [c["name"] for c in doc["checks"]] == [c for c in CHECKS if c != "breakers"]
    assert doc["summary"].startswith("SKCONSOLE OK - ")


def test_check_warns_of_a_schedule_no_running_worker_has(run_cli: CLI, conn: Conn) -> None:
    """Its code was deployed without it (or its workers are all gone): no tick will be
    posted, and whatever ran on it runs no more."""
    conn.execute(
        "INSERT INTO sk_schedules_t (task_type, sch_every_seconds, sch_last_tick_ts)"
        " VALUES ('reports.hourly', 3600, now())"
    )
    done = run_cli("check", "--json", *QUIET_HEALTH)

    doc = json.loads(done.stdout)
    assert done.returncode == doc["status"] == 1, done.stdout
    [schedules] = [c for c in doc["checks"] if c["name"] == "schedules"]
    assert schedules["findings"][0]["subject"] == "reports.hourly"


# -- UNKNOWN ------------------------------------------------------------------------------------
def test_check_is_unknown_in_one_line_when_the_server_cannot_be_reached(run_cli: CLI) -> None:
    # end to end: what a monitoring agent reads, stdout apart from stderr, and the exit code
    done = run_cli(
        "--dsn", "postgresql://postgres@127.0.0.1:1/nowhere", "check", use_dsn=False, process=True
    )

    assert done.returncode == 3
    assert done.stdout.startswith("SKCONSOLE UNKNOWN - cannot connect to PostgreSQL")
    assert len(done.stdout.splitlines()) == 1 and done.stderr == ""


def test_check_is_unknown_on_a_database_without_the_schema_and_does_not_create_it(
    run_cli: CLI, fresh_database: str
) -> None:
    done = run_cli("--dsn", fresh_database, "check", use_dsn=False)

    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.startswith("SKCONSOLE UNKNOWN - the queue is not set up in this database")
    with psycopg.connect(fresh_database) as c:
        assert c.execute("SELECT to_regclass('sk_tasks_queue_t')").fetchone() == (None,)


def test_a_schema_without_the_slo_column_is_incomplete(fresh_database: str) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as c:
        setup_schema(c)
        c.execute("ALTER TABLE sk_task_types_t DROP COLUMN tt_slo_max_wait_seconds")

        assert missing_objects(c) == ["sk_task_types_t.tt_slo_max_wait_seconds"]
        assert setup_schema(c) is True
        assert missing_objects(c) == []


# -- failure rates (issue 24, point 6) ---------------------------------------------------------


def _finished_a_minute_ago(
    conn: Conn, *, succeeded: int, failed: int, failed_as: JobStatus = JobStatus.FATAL
) -> None:
    """Jobs of type t posted 15 minutes ago and finished a minute ago: ``succeeded``
    Processed, ``failed`` ended ``failed_as``."""
    add_results(
        conn, "t", succeeded, status=JobStatus.PROCESSED, posted_ago_s=900.0, finalized_ago_s=60.0
    )
    add_results(conn, "t", failed, status=failed_as, posted_ago_s=900.0, finalized_ago_s=60.0)


def test_the_failure_rate_counts_the_failed_among_the_jobs_finished_in_the_window(
    conn: Conn,
) -> None:
    _finished_a_minute_ago(conn, succeeded=30, failed=10)
    add_results(conn, "t", 5, status=JobStatus.FAULTED, posted_ago_s=900.0, finalized_ago_s=60.0)
    add_results(
        conn, "t", 4, status=JobStatus.CANCELLED, posted_ago_s=900.0, finalized_ago_s=60.0
    )  # cancelled
    add_results(
        conn, "t", 20, status=JobStatus.FATAL, posted_ago_s=900.0, finalized_ago_s=600.0
    )  # old
    add_results(
        conn, "t", 7, status=JobStatus.ERROR, posted_ago_s=900.0, finalized_ago_s=60.0
    )  # will retry

    (t,) = flow(conn, 300.0)

    assert (t.completions, t.failures, t.cancellations, t.finished) == (30, 15, 4, 45)
    assert t.failure_rate == pytest.approx(15 / 45)
    assert t.failures_text == "15 of 45 (33%)"


def test_the_failure_rate_counts_a_real_workers_failed_and_processed_jobs(
    run_cli: CLI, conn: Conn
) -> None:
    assert run_cli("enqueue", "fatal", "--count", "3").returncode == 0
    assert run_cli("enqueue", OK_TYPE, "--count", "2").returncode == 0
    done = run_cli(
        "worker", "--tasks", "tests.support.tasks_faults", "--types", "ok,fatal", "--burst"
    )
    assert done.returncode == 0, done.stdout + done.stderr

    by_type = {f.task_type: f for f in flow(conn)}

    assert (by_type["fatal"].failures, by_type["fatal"].finished) == (3, 3)
    assert (by_type[OK_TYPE].failures, by_type[OK_TYPE].finished) == (0, 2)
    assert by_type["fatal"].failure_rate == 1.0


def test_status_flow_does_not_count_failed_jobs_as_drained(run_cli: CLI, conn: Conn) -> None:
    """82 jobs failed in the window and none succeeded: the backlog is not draining."""
    add_ready(conn, "t", 40)
    add_results(conn, "t", 82, status=JobStatus.FAULTED, posted_ago_s=900.0, finalized_ago_s=60.0)

    table = run_cli("status", "flow", "--wide")
    doc = json.loads(run_cli("status", "flow", "--json").stdout)

    assert table.returncode == 0, table.stderr
    assert "drains in" not in table.stdout
    assert "stalled" in table.stdout and "82 of 82 (100%)" in table.stdout
    (row,) = doc["types"]
    assert (row["completions"], row["failures"], row["drain_s"]) == (0, 82, None)
    assert row["failure_rate"] == 1.0


def _set_max_failure_rate(run_cli: CLI, task_type: str, value: str) -> None:
    done = run_cli("slo", "set", task_type, "--max-failure-rate", value, "--yes")
    assert done.returncode == 0, done.stdout + done.stderr


def _check_at_most_10_percent_failed(
    run_cli: CLI,
    conn: Conn,
    *,
    succeeded: int,
    failed: int,
    failed_as: JobStatus = JobStatus.FATAL,
) -> subprocess.CompletedProcess[str]:
    """``skconsole check`` (workers skipped, health quiet) once type t may see at most 10%
    of its jobs fail and these have finished (``_finished_a_minute_ago``)."""
    _set_max_failure_rate(run_cli, "t", "10%")
    _finished_a_minute_ago(conn, succeeded=succeeded, failed=failed, failed_as=failed_as)
    return run_cli("check", "--skip", "workers", *QUIET_HEALTH)


def test_check_warns_when_a_types_failure_rate_is_over_its_max(run_cli: CLI, conn: Conn) -> None:
    over = _check_at_most_10_percent_failed(run_cli, conn, succeeded=85, failed=15)

    assert over.returncode == 1, over.stdout + over.stderr
    assert over.stdout.startswith("SKCONSOLE WARNING - 1 SLO at risk (t: 15 of 100 jobs failed")
    assert "failure_rate_t=15%;10;20;0" in over.stdout


def test_check_is_critical_when_a_types_failure_rate_is_over_twice_its_max(
    run_cli: CLI, conn: Conn
) -> None:
    over = _check_at_most_10_percent_failed(
        run_cli, conn, succeeded=70, failed=30, failed_as=JobStatus.FAULTED
    )

    assert over.returncode == 2, over.stdout + over.stderr
    assert "CRITICAL slo: t: 30 of 100 jobs failed in the last 5m 00s (30% > 2x its max 10%)" in (
        over.stdout
    )


def test_check_is_ok_while_the_failure_rate_is_within_its_max(run_cli: CLI, conn: Conn) -> None:
    ok = _check_at_most_10_percent_failed(run_cli, conn, succeeded=95, failed=5)

    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("SKCONSOLE OK - 1 SLO met")


def test_a_max_failure_rate_is_listed_and_leaves_the_max_wait_as_it_was(
    run_cli: CLI, conn: Conn
) -> None:
    assert run_cli("slo", "set", "t", "--max-wait", "30s", "--yes").returncode == 0
    _set_max_failure_rate(run_cli, "t", "2.5%")
    _finished_a_minute_ago(conn, succeeded=3, failed=1)

    listed = json.loads(run_cli("slo", "--json").stdout)
    table = run_cli("slo", "--wide")

    (row,) = listed["slos"]
    assert (row["slo_max_wait_s"], row["slo_max_failure_rate"]) == (30.0, 0.025)
    assert (row["failures"], row["failure_rate"]) == (1, 0.25)
    assert "2.5%" in table.stdout and "1 of 4 (25%)" in table.stdout


@pytest.mark.parametrize("value", ["0%", "100%", "150%", "-5%", "ten", "%", "nan"])
def test_a_bad_max_failure_rate_is_one_clear_line(run_cli: CLI, conn: Conn, value: str) -> None:
    done = run_cli("slo", "set", "t", "--max-failure-rate", value, "--yes")

    assert done.returncode == 2, done.stdout + done.stderr
    assert "--max-failure-rate takes a percentage above 0% and below 100%" in done.stderr
    assert "Traceback" not in done.stderr
    assert conn.execute("SELECT count(*) FROM sk_task_types_t").fetchone() == (0,)


def test_slo_set_needs_a_max_wait_or_a_max_failure_rate(run_cli: CLI) -> None:
    done = run_cli("slo", "set", "t", "--yes")

    assert done.returncode == 2, done.stdout + done.stderr
    assert "--max-failure-rate" in done.stderr and "Traceback" not in done.stderr
