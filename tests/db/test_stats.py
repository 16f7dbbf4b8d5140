"""Read models against a real PostgreSQL: what each one reports, and the status views."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

import psycopg

from skconsole import read
from skconsole.core.hung import HungPolicy
from skconsole.core.signature import error_signature
from skconsole.core.status import JobStatus

from .test_ops import DECLINED, TIMEOUT_A, TIMEOUT_B, add_job

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]


# -- depth -----------------------------------------------------------------------------------
def test_depth_counts_ready_scheduled_and_in_flight_per_type(conn: Conn) -> None:
    add_job(conn, 1, task_type="t.a", age_s=30)
    add_job(conn, 1, task_type="t.a")
    add_job(conn, 4, task_type="t.a", ready=False)
    add_job(conn, 2, task_type="t.b", owner=uuid.uuid4())

    d = read.depth(conn)

    by_type = {t.task_type: t for t in d.types}
    assert (by_type["t.a"].ready, by_type["t.a"].scheduled, by_type["t.a"].in_flight) == (2, 1, 0)
    assert (by_type["t.b"].ready, by_type["t.b"].in_flight) == (0, 1)
    assert 30 <= (by_type["t.a"].oldest_ready_s or 0) < 120
    assert by_type["t.b"].oldest_ready_s is None
    assert (d.ready, d.scheduled, d.in_flight, d.estimated) == (2, 1, 1, False)


def test_depth_shows_a_paused_type(conn: Conn) -> None:
    add_job(conn, 1, task_type="t.a")
    conn.execute("INSERT INTO sk_task_types_t (task_type, tt_paused) VALUES ('t.a', true)")

    assert [t.paused for t in read.depth(conn).types] == [True]


def test_depth_of_a_big_queue_is_estimated_and_labelled(conn: Conn) -> None:
    for _ in range(3):
        add_job(conn, 1, task_type="t.a")
    add_job(conn, 4, task_type="t.b", ready=False)
    conn.execute("ANALYZE sk_tasks_queue_t")

    d = read.depth(conn, exact_limit=0)

    assert d.estimated is True
    # a queue this small is sampled whole: the estimate is exact
    assert {t.task_type: (t.ready, t.scheduled) for t in d.types} == {"t.a": (3, 0), "t.b": (0, 1)}
    assert d.as_dict()["estimated"] is True


# -- statuses ---------------------------------------------------------------------------------
def test_status_summary_counts_exactly_on_a_small_table(conn: Conn) -> None:
    add_job(conn, 1)
    add_job(conn, 3)
    add_job(conn, 3)

    s = read.status_summary(conn)

    assert s.counts == {JobStatus.UNPROCESSED: 1, JobStatus.PROCESSED: 2}
    assert s.estimated == ()


def test_status_summary_estimates_only_the_big_statuses(conn: Conn) -> None:
    for _ in range(5):
        add_job(conn, 3)
    add_job(conn, 6)
    conn.execute("ANALYZE sk_task_results_t")

    s = read.status_summary(conn, exact_limit=2)

    assert s.estimated == (3,)
    assert s.counts == {JobStatus.PROCESSED: 5, JobStatus.FATAL: 1}


# -- in flight -------------------------------------------------------------------------------
def test_inflight_judges_a_job_of_a_dead_worker_hung(conn: Conn) -> None:
    job = add_job(conn, 2, owner=uuid.uuid4())

    view = read.inflight(conn)

    assert (view.total, view.hung) == (1, 1)
    assert view.jobs[0].task_id == job
    assert view.jobs[0].hung_reason == "worker gone (no longer registered)"


def test_inflight_without_owner_data_is_hung_after_the_unowned_limit(conn: Conn) -> None:
    add_job(conn, 2, age_s=120)  # a Stakhanovise.NET worker records no owner

    assert read.inflight(conn).hung == 0
    hung = read.inflight(conn, HungPolicy(unowned_after_s=60)).jobs[0]
    assert hung.hung_reason == "no owner recorded; processing for more than 60 s"


# -- failure groups --------------------------------------------------------------------------
def test_failure_groups_gather_errors_that_differ_only_in_numbers(conn: Conn) -> None:
    add_job(conn, 4, error=TIMEOUT_A, task_type="t.a", age_s=600)
    add_job(conn, 5, error=TIMEOUT_B, task_type="t.b")
    add_job(conn, 6, error=DECLINED)
    add_job(conn, 3)

    groups = read.failure_groups(conn)

    assert [(g.signature, g.count) for g in groups] == [
        (error_signature(TIMEOUT_A), 2),
        (error_signature(DECLINED), 1),
    ]
    top = groups[0]
    assert top.statuses == {JobStatus.ERROR: 1, JobStatus.FAULTED: 1, JobStatus.FATAL: 0}
    assert top.task_types == ["t.a", "t.b"]
    assert top.first_seen is not None and top.last_seen is not None
    assert (top.last_seen - top.first_seen).total_seconds() >= 590
    assert top.sample_error in (TIMEOUT_A, TIMEOUT_B)
    assert top.as_dict()["id"] == read.group_id(top.signature)


def test_failure_jobs_lists_a_group_latest_first_with_its_size(conn: Conn) -> None:
    old = add_job(conn, 5, error=TIMEOUT_A, age_s=600)
    new = add_job(conn, 5, error=TIMEOUT_B)
    add_job(conn, 5, error=DECLINED)

    jobs = read.failure_jobs(conn, error_signature(TIMEOUT_A), limit=1)

    assert jobs.total == 2
    assert [j.task_id for j in jobs.jobs] == [new]
    assert jobs.jobs[0].error_line == TIMEOUT_B
    assert old not in [j.task_id for j in jobs.jobs]


def test_job_detail_has_the_full_error_and_the_queue_state(conn: Conn) -> None:
    job = add_job(conn, 4, error=TIMEOUT_A, ready=False)

    detail = read.job(conn, job)

    assert detail is not None
    assert (detail.last_error, detail.status, detail.queued) == (TIMEOUT_A, JobStatus.ERROR, True)
    assert detail.signature == error_signature(TIMEOUT_A)
    assert read.job(conn, uuid.uuid4()) is None


# -- execution times, metrics ------------------------------------------------------------------
def test_execution_stats_sum_processes_and_add_recent_percentiles(conn: Conn) -> None:
    conn.execute(
        "INSERT INTO sk_task_execution_time_stats_t VALUES "
        "('t.a', 'p1', 10, 30, 20, 5, 90, 200), ('t.a', 'p2', 30, 10, 10, 2, 50, 300)"
    )
    for ms in (10, 20, 30, 40, 1000):
        job = add_job(conn, 3)
        conn.execute(
            "UPDATE sk_task_results_t SET task_processing_time_milliseconds = %s WHERE task_id = %s",
            (ms, job),
        )

    (row,) = read.execution_stats(conn)

    assert (row.task_type, row.cycles, row.total_ms, row.fastest_ms, row.longest_ms) == (
        "t.a",
        40,
        500,
        2,
        90,
    )
    assert row.avg_ms == 12.5
    assert row.sample == 5
    assert row.p50_ms == 30
    assert row.p99_ms is not None and 900 < row.p99_ms <= 1000


def test_execution_stats_recent_figures_are_of_one_population_so_p95_stays_below_its_longest(
    conn: Conn,
) -> None:
    """The processes reported a longest of 90 ms; the recent runs hold one of 1,000 ms.
    A row's recent figures (count, average, percentiles, fastest, longest) are all of
    the recent runs, so none contradicts another."""
    conn.execute(
        "INSERT INTO sk_task_execution_time_stats_t VALUES ('t.a', 'p1', 10, 30, 20, 5, 90, 200)"
    )
    for ms in (10, 20, 30, 40, 1000):
        job = add_job(conn, 3)
        conn.execute(
            "UPDATE sk_task_results_t SET task_processing_time_milliseconds = %s WHERE task_id = %s",
            (ms, job),
        )

    (row,) = read.execution_stats(conn)

    assert (row.sample, row.recent_fastest_ms, row.recent_longest_ms) == (5, 10, 1000)
    assert row.recent_avg_ms == 220.0
    assert row.p95_ms is not None and row.p99_ms is not None
    assert row.recent_fastest_ms <= row.p95_ms <= row.p99_ms <= row.recent_longest_ms
    assert row.longest_ms == 90  # every run reported: another population, kept apart


def test_status_stats_names_the_runs_its_rows_are_of_and_no_p95_passes_its_longest(
    run_cli: CLI, conn: Conn
) -> None:
    conn.execute(
        "INSERT INTO sk_task_execution_time_stats_t VALUES ('t.a', 'p1', 10, 30, 20, 5, 90, 200)"
    )
    for ms in (10, 20, 30, 40, 1000):
        job = add_job(conn, 3)
        conn.execute(
            "UPDATE sk_task_results_t SET task_processing_time_milliseconds = %s WHERE task_id = %s",
            (ms, job),
        )

    proc = run_cli("status", "stats", "--wide")

    assert proc.returncode == 0, proc.stderr
    assert "in the last 1h, the latest 10,000 jobs at most" in " ".join(proc.stdout.split())
    lines = [line.replace("┃", " ").replace("│", " ") for line in proc.stdout.splitlines()]
    header = next(line for line in lines if "p95" in line)
    row = next(line for line in lines if "t.a" in line)
    cells = dict(zip(header.split(), row.split(), strict=True))
    assert cells["runs"] == "5"
    assert _ms(cells["p95"]) <= _ms(cells["longest"])
    assert cells["longest"] == "1.0s"  # in the readable unit the console shows too


def _ms(text: str) -> float:
    """A figure as the views print one ("850ms", "1.2s") in milliseconds."""
    if text.endswith("ms"):
        return float(text[:-2])
    assert text.endswith("s") and " " not in text, text
    return float(text[:-1]) * 1000


def test_metrics_are_summed_over_processes_by_category(conn: Conn) -> None:
    conn.execute(
        "INSERT INTO sk_metrics_t (metric_id, metric_owner_process_id, metric_category, metric_value) "
        "VALUES ('worker@processed-payload-count', 'p1', 'task-worker', 10), "
        "('worker@processed-payload-count', 'p2', 'task-worker', 5), "
        "('poller@dequeue-count', 'p1', 'task-poller', 7)"
    )

    snap = read.metrics(conn)

    assert snap.values() == {"worker@processed-payload-count": 15, "poller@dequeue-count": 7}
    assert sorted(snap.by_category()) == ["task-poller", "task-worker"]


# -- workers, history --------------------------------------------------------------------------
def test_history_counts_posted_processed_and_failed_per_minute(conn: Conn) -> None:
    add_job(conn, 1)
    add_job(conn, 3)
    add_job(conn, 3)
    add_job(conn, 6)
    add_job(conn, 3, age_s=7200)

    h = read.history(conn, minutes=60)

    assert len(h.minutes) == 60
    assert isinstance(h.minutes[-1].minute, datetime)
    # the last two minutes hold everything recent (a write may straddle a minute)
    assert sum(h.series("posted")[-2:]) == 4
    assert sum(h.series("processed")[-2:]) == 2
    assert sum(h.series("failed")[-2:]) == 1
    assert sum(h.series("processed")) == 2


# -- the read models stay clear of the UI libraries --------------------------------------------
# -- skconsole status VIEW --------------------------------------------------------------------
def test_status_failures_json_lists_the_groups(run_cli: CLI, conn: Conn) -> None:
    add_job(conn, 5, error=TIMEOUT_A)

    proc = run_cli("status", "failures", "--json")

    assert proc.returncode == 0, proc.stderr
    (group,) = json.loads(proc.stdout)["groups"]
    assert set(group) >= {
        "id",
        "signature",
        "count",
        "statuses",
        "task_types",
        "first_seen",
        "last_seen",
        "sample_error",
    }
    assert (group["signature"], group["count"], group["statuses"]) == (
        error_signature(TIMEOUT_A),
        1,
        {"Faulted": 1},
    )


def test_status_failures_group_json_lists_its_jobs(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 5, error=TIMEOUT_A)

    proc = run_cli(
        "status", "failures", "--group", read.group_id(error_signature(TIMEOUT_A)), "--json"
    )

    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["total"], [j["task_id"] for j in doc["jobs"]]) == (1, [str(job)])


def test_every_status_view_prints_a_table_and_json(run_cli: CLI, conn: Conn) -> None:
    add_job(conn, 1)
    add_job(conn, 2, owner=uuid.uuid4())
    add_job(conn, 5)
    for view in stats_views():
        table = run_cli("status", view, "--sample", "0")
        doc = run_cli("status", view, "--json", "--sample", "0")
        assert table.returncode == 0, (view, table.stderr)
        assert doc.returncode == 0, (view, doc.stderr)
        assert isinstance(json.loads(doc.stdout), dict), view


def stats_views() -> tuple[str, ...]:
    from skconsole.cli.status import VIEW_NAMES as VIEWS

    return VIEWS


def test_status_inflight_json_shape(run_cli: CLI, conn: Conn) -> None:
    add_job(conn, 2, owner=uuid.uuid4())

    doc = json.loads(run_cli("status", "inflight", "--json").stdout)

    assert (doc["total"], doc["hung"], doc["shown"]) == (1, 1, 1)
    assert set(doc["jobs"][0]) >= {
        "task_id",
        "task_type",
        "worker_id",
        "worker_host",
        "started_at",
        "running_s",
        "heartbeat_age_s",
        "hung",
        "hung_reason",
    }


def test_an_unknown_status_view_is_a_usage_error(run_cli: CLI) -> None:
    proc = run_cli("status", "nope")

    assert proc.returncode == 2
    assert "unknown view 'nope'" in proc.stderr
