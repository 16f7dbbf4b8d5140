"""Values skconsole never writes, but a .NET application sharing the database may.

Npgsql writes DateTime.MaxValue as ``infinity`` and DateTime.MinValue as
``-infinity`` (or, with its infinity conversions off, the years 9999 and 1,
which a session zone east or west of UTC pushes past what Python's datetime
holds); a Stakhanovise.NET process starts its minimum and maximum metrics at
bigint's limits. Rows holding them are written here by hand, as such an
application would, and every read must go on working: on skconsole's
connections a time Python cannot hold reads as the edge of datetime (UTC), an
age from a time not within 100 years of now is unknown (None), never a huge
number or an infinity (which is not JSON), and sums never overflow.

PostgreSQL before 17 cannot subtract an infinite timestamp at all; 17 and
later can, and gives infinite intervals: both are run (CI runs this file on
the embedded server and on a PostgreSQL 15).
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from prometheus_client import CollectorRegistry, generate_latest

from skconsole import read
from skconsole.db.connect import Database
from skconsole.db.layout import has_skconsole_objects
from skconsole.db.mapping import DEFAULT_MAPPING
from skconsole.db.sqlfiles import schema_scripts
from skconsole.db.timestamps import EARLIEST_TIME, LATEST_TIME
from skconsole.exporter.collector import Exporter
from skconsole.exporter.sources import app_metric_families
from skconsole.read import MetricKind, flow
from tests.conftest import ROOT, skconsole_cmd
from tests.db.test_cli_errors import assert_one_line_error

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]

LONG_MAX = 9_223_372_036_854_775_807
LONG_MIN = -9_223_372_036_854_775_808
#: timestamptz text a .NET application may write, and what skconsole reads back
ODD_TIMES = {
    "infinity": LATEST_TIME,
    "-infinity": EARLIEST_TIME,
    "10000-06-01 00:00:00+00": LATEST_TIME,
}
#: a finite time past year 9999: PostgreSQL of any version can subtract it
BEYOND_9999 = "10000-06-01 00:00:00+00"


# -- rows as another application writes them ----------------------------------------------
#: a .NET handler's failure, as Stakhanovise.NET stores it
NO_ANSWER = "System.TimeoutException: no answer"


def dotnet_job(
    conn: Conn,
    task_type: str,
    status: int,
    *,
    posted: str = "now",
    started: str | None = None,
    finalized: str | None = None,
    locked_until: str | None = None,
    error: str | None = None,
) -> uuid.UUID:
    """A result row (and a queue row when ``locked_until`` is given) with these times,
    written as timestamptz text the way Npgsql sends them; no skconsole column set."""
    task_id = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_last_error, task_error_count,"
        " task_last_error_is_recoverable, task_processing_time_milliseconds, task_posted_at_ts,"
        " task_first_processing_attempted_at_ts, task_last_processing_attempted_at_ts,"
        " task_processing_finalized_at_ts)"
        " VALUES (%(id)s, %(type)s, 'dotnet', '{}', %(status)s, 0, %(error)s, %(errors)s, false, 0,"
        " %(posted)s::timestamptz, %(started)s::timestamptz, %(started)s::timestamptz,"
        " %(finalized)s::timestamptz)",
        {
            "id": task_id,
            "type": task_type,
            "status": status,
            "error": error,
            "errors": 1 if error else 0,
            "posted": posted,
            "started": started,
            "finalized": finalized,
        },
    )
    if locked_until is not None:
        conn.execute(
            "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,"
            " task_priority, task_posted_at_ts, task_locked_until_ts)"
            " VALUES (%s, %s, 'dotnet', '{}', 0, %s::timestamptz, %s::timestamptz)",
            (task_id, task_type, posted, locked_until),
        )
    return task_id


def dotnet_metric(conn: Conn, metric_id: str, process: str, value: int, updated: str) -> None:
    conn.execute(
        "INSERT INTO sk_metrics_t (metric_id, metric_owner_process_id, metric_category,"
        " metric_value, metric_last_updated) VALUES (%s, %s, 'task-worker', %s, %s::timestamptz)",
        (metric_id, process, value, updated),
    )


def dotnet_execution_times(conn: Conn, process: str) -> None:
    """A process's execution-time row of type "odd" at bigint's limits: cycles and total
    at the maximum, fastest and longest at the start values of a minimum and a maximum."""
    conn.execute(
        "INSERT INTO sk_task_execution_time_stats_t (et_payload_type, et_owner_process_id,"
        " et_n_execution_cycles, et_last_execution_time, et_avg_execution_time,"
        " et_fastest_execution_time, et_longest_execution_time, et_total_execution_time)"
        " VALUES ('odd', %s, %s, 5, 5, %s, %s, %s)",
        (process, LONG_MAX, LONG_MAX, LONG_MIN, LONG_MAX),
    )


def set_slo(conn: Conn, task_type: str, seconds: float) -> None:
    conn.execute(
        "INSERT INTO sk_task_types_t (task_type, tt_slo_max_wait_seconds) VALUES (%s, %s)",
        (task_type, seconds),
    )


def odd_queue(conn: Conn) -> None:
    """Every odd time in every time column of the queue, results and metrics tables:
    queued (ready since -infinity, or scheduled), processed, failed; in flight only
    with a finite start (an infinite one: see the in-flight tests below)."""
    for n, value in enumerate(ODD_TIMES):
        dotnet_job(conn, f"odd.queued.{n}", 1, posted=value, locked_until=value)
        dotnet_job(conn, f"odd.done.{n}", 3, posted=value, started=value, finalized=value)
        dotnet_job(
            conn,
            f"odd.failed.{n}",
            5,
            posted=value,
            started=value,
            finalized=value,
            error=f"System.TimeoutException: odd {n}",
        )
        dotnet_metric(conn, "worker@processed-payload-count", f"dotnet-{n}", 7, value)
    dotnet_job(conn, "odd.running", 2, started=BEYOND_9999)
    dotnet_job(conn, "plain", 1, posted="now", locked_until="now")


def strict_json(text: str) -> Any:
    """JSON as the standard has it: NaN and Infinity (which Python's json writes) refused."""

    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} in the JSON output")

    return json.loads(text, parse_constant=refuse)


def below_17(conn: Conn) -> bool:
    return conn.info.server_version < 170000


# -- the loader of skconsole's connections ----------------------------------------------------
@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
@pytest.mark.parametrize("value", list(ODD_TIMES))
def test_a_time_python_cannot_hold_reads_as_the_edge_of_datetime(
    db: Database, value: str, binary: bool
) -> None:
    with db.connect() as conn:
        row = conn.cursor(binary=binary).execute("SELECT %s::timestamptz", (value,)).fetchone()
    assert row is not None
    assert row[0] == ODD_TIMES[value]
    assert row[0].tzinfo is not None and row[0].utcoffset().total_seconds() == 0


def test_a_time_out_of_range_only_in_the_sessions_zone_reads_as_the_edge(db: Database) -> None:
    with db.connect() as conn:
        conn.execute("SET TIME ZONE 'Asia/Tokyo'")
        row = conn.execute("SELECT '9999-12-31 23:00:00+00'::timestamptz").fetchone()
    assert row == (LATEST_TIME,)


def test_a_time_in_range_reads_as_psycopg_reads_it(db: Database) -> None:
    with db.connect() as conn:
        conn.execute("SET TIME ZONE 'America/New_York'")
        row = conn.execute("SELECT '2030-05-01 12:00:00+00'::timestamptz").fetchone()
    assert row is not None
    assert row[0] == datetime(2030, 5, 1, 12, tzinfo=UTC)
    assert row[0].utcoffset().total_seconds() == -4 * 3600


# -- the read models -----------------------------------------------------------------------------
@pytest.mark.parametrize("exact_limit", [read.DEPTH_EXACT_LIMIT, 0], ids=["exact", "estimated"])
def test_depth_counts_a_job_ready_since_minus_infinity_without_an_age(
    db: Database, conn: Conn, exact_limit: int
) -> None:
    dotnet_job(conn, "odd", 1, locked_until="-infinity")
    dotnet_job(conn, "plain", 1, locked_until="now")
    conn.execute("ANALYZE sk_tasks_queue_t")

    with db.connect() as c:
        d = read.depth(c, exact_limit=exact_limit)

    by_type = {t.task_type: t for t in d.types}
    assert (by_type["odd"].ready, by_type["odd"].oldest_ready_s) == (1, None)
    assert by_type["plain"].ready == 1
    assert by_type["plain"].oldest_ready_s is not None and by_type["plain"].oldest_ready_s < 60


def test_flow_says_the_wait_is_unknown_when_no_ready_job_has_one(db: Database, conn: Conn) -> None:
    dotnet_job(conn, "odd", 1, locked_until="-infinity")
    set_slo(conn, "odd", 30.0)

    with db.connect() as c:
        (f,) = flow.flow(c)

    assert (f.ready, f.oldest_ready_s, f.slo_text) == (1, None, "wait unknown")
    assert f.slo_state is flow.SloState.OK  # nothing says it is breached


def test_inflight_shows_a_job_started_past_year_9999_without_a_running_time(
    db: Database, conn: Conn
) -> None:
    task_id = dotnet_job(conn, "odd", 2, started=BEYOND_9999)

    with db.connect() as c:
        data = read.inflight(c)

    (job,) = data.jobs
    assert (job.task_id, job.started_at, job.running_s, job.hung) == (
        task_id,
        LATEST_TIME,
        None,
        False,
    )


@pytest.mark.parametrize("value", ["infinity", "-infinity"])
def test_inflight_shows_a_job_whose_start_is_infinite(db: Database, conn: Conn, value: str) -> None:
    dotnet_job(conn, "odd", 2, started=value)

    with db.connect() as c:
        (job,) = read.inflight(c).jobs

    assert (job.started_at, job.running_s) == (ODD_TIMES[value], None)


@pytest.mark.parametrize("value", list(ODD_TIMES))
def test_failure_groups_and_their_jobs_show_failures_stamped_at_odd_times(
    db: Database, conn: Conn, value: str
) -> None:
    task_id = dotnet_job(conn, "odd", 5, started=value, finalized=value, error=NO_ANSWER)

    with db.connect() as c:
        (group,) = read.failure_groups(c)
        jobs = read.failure_jobs(c, group.signature)

    assert (group.first_seen, group.last_seen) == (ODD_TIMES[value], ODD_TIMES[value])
    assert [(j.task_id, j.failed_at) for j in jobs.jobs] == [(task_id, ODD_TIMES[value])]


@pytest.mark.parametrize("value", list(ODD_TIMES))
def test_job_detail_shows_odd_times_as_the_edges_of_datetime(
    db: Database, conn: Conn, value: str
) -> None:
    task_id = dotnet_job(
        conn,
        "odd",
        4,
        posted=value,
        started=value,
        finalized=value,
        locked_until=value,
        error=NO_ANSWER,
    )

    with db.connect() as c:
        job = read.job(c, task_id)

    assert job is not None
    edge = ODD_TIMES[value]
    assert (job.posted_at, job.first_attempt_at, job.last_attempt_at) == (edge, edge, edge)
    assert (job.finalized_at, job.queued_until) == (edge, edge)
    assert strict_json(json.dumps(job.as_dict()))["posted_at"] == edge.isoformat()


@pytest.mark.parametrize("value", list(ODD_TIMES))
def test_metrics_read_a_row_updated_at_an_odd_time(db: Database, conn: Conn, value: str) -> None:
    dotnet_metric(conn, "worker@processed-payload-count", "dotnet", 3, value)

    with db.connect() as c:
        (metric,) = read.metrics(c).metrics

    assert (metric.value, metric.updated_at) == (3, ODD_TIMES[value])


def test_execution_stats_sum_rows_at_bigints_limits(db: Database, conn: Conn) -> None:
    dotnet_execution_times(conn, "dotnet-1")
    dotnet_execution_times(conn, "dotnet-2")

    with db.connect() as c:
        (times,) = read.execution_stats(c)

    assert (times.cycles, times.total_ms) == (2 * LONG_MAX, 2 * LONG_MAX)
    # the start values of a minimum and a maximum: no time yet
    assert (times.fastest_ms, times.longest_ms, times.avg_ms) == (None, None, 1.0)


def test_metrics_leave_out_minimum_and_maximum_start_values_and_sum_counters_past_bigint(
    db: Database, conn: Conn
) -> None:
    dotnet_metric(conn, "queue-consumer@minimum-dequeue-duration", "dotnet", LONG_MAX, "now")
    dotnet_metric(conn, "queue-consumer@maximum-dequeue-duration", "dotnet", LONG_MIN, "now")
    dotnet_metric(conn, "worker@processed-payload-count", "dotnet-1", LONG_MAX, "now")
    dotnet_metric(conn, "worker@processed-payload-count", "dotnet-2", LONG_MAX, "now")

    with db.connect() as c:
        snapshot = read.metrics(c)

    assert snapshot.values() == {
        "queue-consumer@maximum-dequeue-duration": None,
        "queue-consumer@minimum-dequeue-duration": None,
        "worker@processed-payload-count": 2 * LONG_MAX,
    }
    families = {f.name: f.samples for f in app_metric_families(snapshot)}
    assert [s.value for s in families["skconsole_app_events"]] == [2 * LONG_MAX]
    assert families["skconsole_app_time_extreme_seconds"] == []
    assert {m.kind for m in snapshot.metrics} == {MetricKind.MIN, MetricKind.MAX, MetricKind.SUM}


def test_the_exporter_stays_up_beside_odd_times_and_bigints_limits(
    db: Database, conn: Conn
) -> None:
    odd_queue(conn)
    dotnet_metric(conn, "queue-consumer@minimum-dequeue-duration", "dotnet", LONG_MAX, "now")
    dotnet_execution_times(conn, "dotnet-1")
    dotnet_execution_times(conn, "dotnet-2")

    exporter = Exporter(db, interval_s=60)
    snapshot = exporter.cycle()
    registry = CollectorRegistry()
    registry.register(exporter)
    scrape = generate_latest(registry).decode()
    exporter.stop()

    assert snapshot.up is True
    assert "skconsole_exporter_up 1.0" in scrape


# -- the command line ------------------------------------------------------------------------------
def test_status_shows_a_queue_with_odd_times(run_cli: CLI, conn: Conn) -> None:
    odd_queue(conn)

    proc = run_cli("status", "--json")

    assert proc.returncode == 0, proc.stderr
    doc = strict_json(proc.stdout)
    by_type = {t["task_type"]: t for t in doc["depth"]["types"]}
    # ready since -infinity: ready, its wait unknown; the others scheduled (far future)
    minus_infinity = by_type["odd.queued.1"]
    assert (minus_infinity["ready"], minus_infinity["oldest_ready_s"]) == (1, None)
    assert by_type["odd.queued.0"]["scheduled"] == by_type["odd.queued.2"]["scheduled"] == 1
    assert doc["depth"]["totals"]["oldest_ready_s"] == by_type["plain"]["oldest_ready_s"]


def test_every_status_view_reads_a_queue_with_odd_times(run_cli: CLI, conn: Conn) -> None:
    from skconsole.cli.status import VIEW_NAMES as VIEWS

    odd_queue(conn)
    for view in VIEWS:
        table = run_cli("status", view, "--sample", "0")
        doc = run_cli("status", view, "--json", "--sample", "0")
        assert table.returncode == 0, (view, table.stderr)
        assert doc.returncode == 0, (view, doc.stderr)
        assert isinstance(strict_json(doc.stdout), dict), view
        assert "Traceback" not in table.stderr + doc.stderr, view


def test_check_judges_a_queue_with_odd_times_rather_than_unknown(run_cli: CLI, conn: Conn) -> None:
    odd_queue(conn)
    set_slo(conn, "odd.queued.1", 30.0)  # its one ready job waits since -infinity

    proc = run_cli("check", "--skip", "health", "--json")

    doc = strict_json(proc.stdout)
    assert doc["status_name"] != "UNKNOWN", doc["summary"]
    slo = next(c for c in doc["checks"] if c["name"] == "slo")
    assert (slo["status_name"], slo["summary"]) == ("OK", "1 SLO met")
    # ready jobs and no worker registered: the workers check speaks, as on any queue
    assert proc.returncode == 1, doc["summary"]


def test_status_metrics_shows_bigints_limits_as_none_yet(run_cli: CLI, conn: Conn) -> None:
    dotnet_metric(conn, "queue-consumer@minimum-dequeue-duration", "dotnet", LONG_MAX, "now")
    dotnet_metric(conn, "worker@processed-payload-count", "dotnet-1", LONG_MAX, "infinity")
    dotnet_metric(conn, "worker@processed-payload-count", "dotnet-2", LONG_MAX, "now")

    proc = run_cli("status", "metrics", "--json", "--sample", "0")

    assert proc.returncode == 0, proc.stderr
    (metrics,) = strict_json(proc.stdout)["categories"].values()
    values = {m["metric_id"]: m["value"] for m in metrics}
    assert values == {
        "queue-consumer@minimum-dequeue-duration": None,
        "worker@processed-payload-count": 2 * LONG_MAX,
    }


def test_status_stats_shows_execution_times_at_bigints_limits(run_cli: CLI, conn: Conn) -> None:
    dotnet_execution_times(conn, "dotnet-1")
    dotnet_execution_times(conn, "dotnet-2")

    proc = run_cli("status", "stats", "--json")

    assert proc.returncode == 0, proc.stderr
    (row,) = strict_json(proc.stdout)["types"]
    assert (row["cycles"], row["fastest_ms"], row["longest_ms"]) == (2 * LONG_MAX, None, None)


# -- a database with Stakhanovise.NET's tables alone (read degraded) ------------------------------
@pytest.fixture
def dotnet_only(fresh_database: str) -> str:
    """A database with Stakhanovise.NET's objects only, holding the odd rows, jobs in
    flight since every odd time included (no sk_inflight_tasks() here to trip on)."""
    stakhanovise = next(
        text for name, text in schema_scripts(DEFAULT_MAPPING) if name.startswith("010")
    )
    with psycopg.connect(fresh_database, autocommit=True) as c:
        c.execute(stakhanovise)
        odd_queue(c)  # one in flight since BEYOND_9999 among them
        for value in ("infinity", "-infinity"):
            dotnet_job(c, "odd.running", 2, started=value)
    return fresh_database


def test_inflight_without_owner_data_tells_no_running_time_from_odd_starts(
    dotnet_only: str,
) -> None:
    with Database(dotnet_only, read_only=True).connect() as c:
        assert not has_skconsole_objects(c)
        jobs = [j for j in read.inflight(c).jobs if j.task_type == "odd.running"]

    assert sorted((j.started_at, j.running_s, j.hung) for j in jobs) == [
        (EARLIEST_TIME, None, False),
        (LATEST_TIME, None, False),
        (LATEST_TIME, None, False),
    ]


def test_every_status_view_of_a_stakhanovise_only_database_reads_odd_times(
    dotnet_only: str,
) -> None:
    from skconsole.cli.status import VIEW_NAMES as VIEWS

    for view in ("", *VIEWS):
        args = ["--dsn", dotnet_only, "--read-only", "status", *([view] if view else [])]
        proc = subprocess.run(
            skconsole_cmd(*args, "--json", "--sample", "0"),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
        assert proc.returncode == 0, (view, proc.stderr)
        assert "degraded" in strict_json(proc.stdout), view


# -- what is refused on the way in ------------------------------------------------------------------
@pytest.mark.parametrize("payload", ['{"a": NaN}', "[Infinity]", '{"a": [-Infinity]}'])
def test_enqueue_refuses_a_payload_with_nan_or_infinity_in_one_line(
    run_cli: CLI, conn: Conn, payload: str
) -> None:
    proc = run_cli("enqueue", "odd", "--payload", payload)

    assert_one_line_error(proc, "payload holds", "which JSON cannot hold")
    assert proc.returncode == 2
    assert conn.execute("SELECT count(*) FROM sk_task_results_t").fetchone() == (0,)


def test_edit_refuses_a_payload_with_nan_in_one_line(run_cli: CLI, conn: Conn) -> None:
    task_id = dotnet_job(conn, "odd", 1, locked_until="now")

    proc = run_cli("edit", "--id", str(task_id), "--payload", '{"a": NaN}', "--yes")

    assert_one_line_error(proc, "--payload: payload holds NaN")
    row = conn.execute(
        "SELECT task_payload FROM sk_task_results_t WHERE task_id = %s", (task_id,)
    ).fetchone()
    assert row == ("{}",)


@pytest.mark.parametrize(
    "when", ["9999-12-31T23:59:59Z", "9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00Z"]
)
def test_enqueue_refuses_a_run_at_beyond_100_years_in_one_line(
    run_cli: CLI, conn: Conn, when: str
) -> None:
    proc = run_cli("enqueue", "odd", "--run-at", when)

    assert_one_line_error(proc, "--run-at must be within 36500d (100 years) of now", when)
    assert proc.returncode == 2
    assert conn.execute("SELECT count(*) FROM sk_task_results_t").fetchone() == (0,)
