"""The exporter's rendering, from read models and snapshots made by hand (no database):
what each family is called, its type and labels, and what a scrape serves."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from skconsole import read
from skconsole.core.states import WorkerState
from skconsole.core.status import JobStatus
from skconsole.exporter import MAX_FAILURE_GROUPS, Snapshot
from skconsole.exporter.collector import snapshot_families
from skconsole.exporter.sources import (
    TypeInflight,
    app_metric_families,
    depth_families,
    execution_families,
    failure_families,
    health_families,
    inflight_families,
    limit_families,
    status_families,
    worker_families,
)
from skconsole.read import health
from tests.support.samples import PRIMARY_WITH_AN_ASYNC_STANDBY

HOSTILE = 'q"uote \\back\\slash\nnew line \\n \\" ${x} \x1b[31m é\t'

REPLICATION = PRIMARY_WITH_AN_ASYNC_STANDBY


class _Fixed:
    """A collector serving one snapshot, as the exporter serves its latest."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap

    def collect(self) -> Iterable[Metric]:
        return snapshot_families(self.snap)


def _registry(snap: Snapshot) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(_Fixed(snap))
    return registry


def scrape(snap: Snapshot) -> dict[str, Metric]:
    """The families a scrape of ``snap`` serves, parsed back from the text format."""
    text = generate_latest(_registry(snap)).decode()
    return {f.name: f for f in text_string_to_metric_families(text)}


def values(family: Metric, *keys: str) -> dict[tuple[str, ...], float]:
    """{label values in ``keys`` order: value} of the family's samples."""
    return {tuple(s.labels[k] for k in keys): s.value for s in family.samples}


def ok(*families: Metric) -> Snapshot:
    return Snapshot(families=families, up=True, finished_at=1e9, duration_s=0.25, cycles_ok=1)


def depth() -> read.Depth:
    return read.Depth(
        [
            read.TypeDepth("t.a", 3, 1, 2, 42.5, False),
            read.TypeDepth(HOSTILE, 0, 4, 0, None, True),
        ]
    )


def test_depth_gives_jobs_per_type_and_state_ages_and_paused_types() -> None:
    fams = scrape(ok(*depth_families(depth())))

    assert fams["skconsole_queue_jobs"].type == "gauge"
    assert values(fams["skconsole_queue_jobs"], "task_type", "state") == {
        ("t.a", "ready"): 3,
        ("t.a", "scheduled"): 1,
        ("t.a", "in_flight"): 2,
        (HOSTILE, "ready"): 0,
        (HOSTILE, "scheduled"): 4,
        (HOSTILE, "in_flight"): 0,
    }
    ages = fams["skconsole_queue_oldest_ready_age_seconds"]
    assert values(ages, "task_type") == {("t.a",): 42.5}
    assert values(fams["skconsole_task_type_paused"], "task_type") == {("t.a",): 0, (HOSTILE,): 1}
    assert values(fams["skconsole_queue_depth_estimated"]) == {(): 0}


def test_a_hostile_task_type_survives_escaping_and_parsing() -> None:
    text = generate_latest(_registry(ok(*depth_families(depth())))).decode()

    assert "\x1b" in text and "\\n" in text  # escaped newline, raw escape sequence
    assert "\nnew line" not in text  # a raw newline would end the sample's line
    parsed = {f.name: f for f in text_string_to_metric_families(text)}
    assert (HOSTILE,) in values(parsed["skconsole_task_type_paused"], "task_type")


def test_every_status_is_present_by_label_and_estimates_are_flagged() -> None:
    summary = read.StatusCounts({1: 5, 3: 300_000, 9: 1}, estimated=(3,))

    fams = scrape(ok(*status_families(summary)))

    jobs = values(fams["skconsole_jobs"], "status")
    assert jobs[("Unprocessed",)] == 5 and jobs[("Processed",)] == 300_000
    assert jobs[("Cancelled",)] == 0
    assert jobs[("9",)] == 1  # a code another version wrote: its number
    assert {k[0] for k in jobs} == {s.label for s in JobStatus} | {"9"}
    estimated = values(fams["skconsole_jobs_estimated"], "status")
    assert estimated[("Processed",)] == 1 and estimated[("Unprocessed",)] == 0


def test_inflight_and_hung_per_type() -> None:
    fams = scrape(ok(*inflight_families([TypeInflight("t.a", 4, 1), TypeInflight("t.b", 2, 0)])))

    assert values(fams["skconsole_inflight_jobs"], "task_type") == {("t.a",): 4, ("t.b",): 2}
    assert values(fams["skconsole_hung_jobs"], "task_type") == {("t.a",): 1, ("t.b",): 0}


def _group(n: int) -> read.FailureGroup:
    return read.FailureGroup(
        signature=f"app.Error{n}: broken",
        count=1000 - n,
        statuses={JobStatus.ERROR: 0, JobStatus.FAULTED: 1000 - n, JobStatus.FATAL: 0},
        task_types=["t.a"],
        first_seen=None,
        last_seen=None,
        sample_task_id=uuid.uuid4(),
        sample_error=None,
    )


def test_failure_groups_are_capped_and_labelled_by_id() -> None:
    groups = [_group(n) for n in range(MAX_FAILURE_GROUPS + 1)]

    fams = scrape(ok(*failure_families(groups)))

    exported = values(fams["skconsole_failure_group_jobs"], "group")
    assert exported == {(g.id,): g.count for g in groups[:MAX_FAILURE_GROUPS]}
    assert values(fams["skconsole_failure_groups_truncated"]) == {(): 1}
    assert values(
        scrape(ok(*failure_families(groups[:3])))["skconsole_failure_groups_truncated"]
    ) == {(): 0}


def test_execution_times_are_a_summary_in_seconds_and_recent_percentiles() -> None:
    times = [
        read.TypeTimes("t.a", 4, 2000, 100, 900, 300, 3, 250.0, 800.0, 890.0),
        read.TypeTimes("t.b", 0, 0, None, None, None, 0, None, None, None),
    ]

    fams = scrape(ok(*execution_families(times)))

    summary = fams["skconsole_job_execution_seconds"]
    assert summary.type == "summary"
    by_name = {(s.name, s.labels["task_type"]): s.value for s in summary.samples}
    assert by_name[("skconsole_job_execution_seconds_count", "t.a")] == 4
    assert by_name[("skconsole_job_execution_seconds_sum", "t.a")] == 2.0
    recent = values(fams["skconsole_job_execution_recent_seconds"], "task_type", "quantile")
    assert recent == {("t.a", "0.5"): 0.25, ("t.a", "0.95"): 0.8, ("t.a", "0.99"): 0.89}
    assert values(fams["skconsole_job_execution_recent_jobs"], "task_type") == {
        ("t.a",): 3,
        ("t.b",): 0,
    }
    assert values(fams["skconsole_job_execution_longest_seconds"], "task_type") == {("t.a",): 0.9}
    assert values(fams["skconsole_job_execution_fastest_seconds"], "task_type") == {("t.a",): 0.1}


def _worker(state: WorkerState) -> read.WorkerInfo:
    return read.WorkerInfo(
        worker_id=uuid.uuid4(),
        process_id="p",
        host="h",
        pid=1,
        concurrency=4,
        task_types=[],
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
        heartbeat_age_s=0.5,
        stopped=state is WorkerState.STOPPED,
        connected=state is WorkerState.ALIVE,
        in_flight=0,
        state=state,
        note="",
        lease_s=10.0,
    )


def test_workers_by_state_and_alive() -> None:
    ws = [
        _worker(WorkerState.ALIVE),
        _worker(WorkerState.ALIVE),
        _worker(WorkerState.CONNECTION_LOST),
    ]

    fams = scrape(ok(*worker_families(ws)))

    assert values(fams["skconsole_workers"], "state") == {("alive",): 2, ("connection lost",): 1}
    assert values(fams["skconsole_workers_alive"]) == {(): 2}
    assert values(scrape(ok(*worker_families([])))["skconsole_workers_alive"]) == {(): 0}


def test_app_metrics_are_counters_with_times_in_seconds() -> None:
    snap = read.MetricsSnapshot(
        (
            read.Metric("task-worker", "worker@processed-payload-count", 12, 2, None),
            read.Metric("task-worker", "worker@total-processing-time", 1500, 2, None),
            read.Metric(
                "task-queue-consumer", "queue-consumer@total-dequeue-duration", 20, 1, None
            ),
        )
    )

    fams = scrape(ok(*app_metric_families(snap)))

    events, times = fams["skconsole_app_events"], fams["skconsole_app_time_seconds"]
    assert events.type == times.type == "counter"
    assert [s.name for s in events.samples] == ["skconsole_app_events_total"]
    assert values(events, "metric") == {("worker@processed-payload-count",): 12}
    assert values(times, "category", "metric") == {
        ("task-worker", "worker@total-processing-time"): 1.5,
        ("task-queue-consumer", "queue-consumer@total-dequeue-duration"): 0.02,
    }


def test_limits_per_type() -> None:
    limits = [read.TypeLimit("t.a", 5, None, None, 2), read.TypeLimit("t.b", None, 10, 60.0, 0)]

    fams = scrape(ok(*limit_families(limits)))

    assert values(fams["skconsole_task_type_concurrency_limit"], "task_type") == {("t.a",): 5}
    assert values(fams["skconsole_task_type_rate_limit_jobs"], "task_type") == {("t.b",): 10}
    window = fams["skconsole_task_type_rate_limit_window_seconds"]
    assert values(window, "task_type") == {("t.b",): 60}


def test_per_key_limits_and_their_keys_at_limit() -> None:
    limits = [read.TypeLimit("t.k", None, None, None, 3, ["customer"], 1, None, None, 3)]

    fams = scrape(ok(*limit_families(limits)))

    assert values(fams["skconsole_task_type_key_concurrency_limit"], "task_type") == {("t.k",): 1}
    assert values(fams["skconsole_task_type_keys_at_limit"], "task_type") == {("t.k",): 3}


def test_before_the_first_cycle_only_up_0_and_the_cycle_counts() -> None:
    fams = scrape(Snapshot())

    assert values(fams["skconsole_exporter_up"]) == {(): 0}
    assert "skconsole_exporter_last_cycle_timestamp_seconds" not in fams
    assert values(fams["skconsole_exporter_cycles"], "result") == {("ok",): 0, ("failed",): 0}


def test_a_failed_cycle_serves_the_exporter_metrics_only() -> None:
    snap = Snapshot(up=False, finished_at=1e9, duration_s=0.5, cycles_ok=3, cycles_failed=2)

    fams = scrape(snap)

    assert set(fams) == {
        "skconsole_exporter_up",
        "skconsole_exporter_last_cycle_timestamp_seconds",
        "skconsole_exporter_cycle_duration_seconds",
        "skconsole_exporter_cycles",
    }
    assert values(fams["skconsole_exporter_up"]) == {(): 0}
    assert values(fams["skconsole_exporter_last_cycle_timestamp_seconds"]) == {(): 1e9}
    assert values(fams["skconsole_exporter_cycles"], "result") == {("ok",): 3, ("failed",): 2}


def test_the_exporter_engine_imports_no_ui_library() -> None:
    code = (
        "import sys, skconsole.exporter; "
        "print(sorted(m for m in ('textual', 'typer', 'rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _health(horizon_age_s: float | None, waits: int) -> health.Health:
    settings = health.autovacuum_settings({"autovacuum": "on", "track_counts": "on"}, None)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    tables = [
        health.TableHealth(name, live, dead, size, 0, None, None, None, None, None, None, settings)
        for name, live, dead, size in (
            ("sk_tasks_queue_t", 40, 900, 8192 * 120),
            ("sk_task_results_t", 5_000, 10, 8192 * 900),
        )
    ]
    wait = health.LockWait(7, None, None, None, 9.0, "transactionid", "ShareLock", "q", (8,))
    horizon = health.Horizon(1_234 if horizon_age_s else None, horizon_age_s, None, [], [], [])
    return health.Health(at, tables, horizon, [wait] * waits, [], [], {}, "ops", REPLICATION)


def test_health_gives_rows_and_size_per_table_the_horizon_and_lock_waits() -> None:
    fams = scrape(ok(*health_families(_health(7380.0, 2))))

    assert values(fams["skconsole_table_dead_tuples"], "table") == {
        ("sk_tasks_queue_t",): 900,
        ("sk_task_results_t",): 10,
    }
    assert values(fams["skconsole_table_live_tuples"], "table")[("sk_task_results_t",)] == 5_000
    assert values(fams["skconsole_table_bytes"], "table")[("sk_tasks_queue_t",)] == 8192 * 120
    assert values(fams["skconsole_xmin_horizon_age_seconds"]) == {(): 7380.0}
    assert values(fams["skconsole_xmin_horizon_age_transactions"]) == {(): 1_234}
    assert values(fams["skconsole_lock_waits"]) == {(): 2}


def test_an_unknown_horizon_age_is_left_out_rather_than_exported_as_zero() -> None:
    fams = scrape(ok(*health_families(_health(None, 0))))

    assert "skconsole_xmin_horizon_age_seconds" not in fams
    assert values(fams["skconsole_xmin_horizon_age_transactions"]) == {(): 0}
    assert values(fams["skconsole_lock_waits"]) == {(): 0}
