"""What one exporter cycle reads, and how each read model becomes metric families.

:data:`SOURCES` is the one list of what a cycle reads. Each source takes the
cycle's connection and returns finished ``prometheus_client`` metric families;
the pure ``*_families`` functions beside them turn a read model's own
dataclasses into families, so the rendering is tested without a database.

Extension point: to export another read model (SLO breaches, say), write its source here (read, then
map) and add it to :data:`SOURCES`; the cycle, the snapshot and the scrape
need no change.

Label values that come from the database (task types) are arbitrary text:
``prometheus_client`` escapes them in the exposition. Every label has bounded
cardinality: task types and worker states are few; failure groups are
labelled by their short id (:func:`skconsole.read.group_id`), never their
text, and only the biggest :data:`MAX_FAILURE_GROUPS` are exported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    SummaryMetricFamily,
)

from skconsole import read
from skconsole.core.durations import format_age
from skconsole.core.hung import HungPolicy
from skconsole.core.status import JobStatus
from skconsole.read import flow, health, type_settings
from skconsole.read.query import fetch

Conn = psycopg.Connection[Any]
Source = Callable[[Conn], list[Metric]]

#: failure groups exported, the biggest first (each is one series)
MAX_FAILURE_GROUPS = 50
#: app metric ids whose value is a time in milliseconds (the others count events)
_TIME_SUFFIXES = ("-time", "-duration")


def _type_gauge(name: str, documentation: str) -> GaugeMetricFamily:
    """A gauge with one sample per task type (most families here are)."""
    return GaugeMetricFamily(name, documentation, labels=["task_type"])


def _seconds(ms: float) -> float:
    return ms / 1000.0


# -- queue depth --------------------------------------------------------------------------
def depth_families(depth: read.Depth) -> list[Metric]:
    """Jobs per task type and queue state, the oldest ready job's age, paused types."""
    jobs = GaugeMetricFamily(
        "skconsole_queue_jobs",
        "Jobs in the queue per task type and state (ready, scheduled, in_flight).",
        labels=["task_type", "state"],
    )
    oldest = _type_gauge(
        "skconsole_queue_oldest_ready_age_seconds",
        "Age of the oldest ready job per task type (types with a ready job only).",
    )
    paused = GaugeMetricFamily(
        "skconsole_task_type_paused", "1 when the task type is paused.", labels=["task_type"]
    )
    for t in depth.types:
        jobs.add_metric([t.task_type, "ready"], t.ready)
        jobs.add_metric([t.task_type, "scheduled"], t.scheduled)
        jobs.add_metric([t.task_type, "in_flight"], t.in_flight)
        if t.oldest_ready_s is not None:
            oldest.add_metric([t.task_type], t.oldest_ready_s)
        paused.add_metric([t.task_type], float(t.paused))
    estimated = GaugeMetricFamily(
        "skconsole_queue_depth_estimated",
        "1 when ready and scheduled are scaled up from a sample of a big queue.",
        value=float(depth.estimated),
    )
    return [jobs, oldest, paused, estimated]


# -- jobs per status ----------------------------------------------------------------------
def status_families(summary: read.StatusCounts) -> list[Metric]:
    """Jobs per status, every status always present (0 when none), and which are estimated."""
    codes = sorted({int(s) for s in JobStatus} | set(summary.counts))
    jobs = GaugeMetricFamily("skconsole_jobs", "Jobs per status (result rows).", labels=["status"])
    estimated = GaugeMetricFamily(
        "skconsole_jobs_estimated",
        "1 when the status's count comes from the planner's statistics (a big status).",
        labels=["status"],
    )
    for code in codes:
        label = JobStatus.label_of(code)
        jobs.add_metric([label], summary.counts.get(code, 0))
        estimated.add_metric([label], float(code in summary.estimated))
    return [jobs, estimated]


# -- in flight and hung -------------------------------------------------------------------
@dataclass(frozen=True)
class TypeInflight:
    """A task type's jobs being processed, and how many of them are hung."""

    task_type: str
    in_flight: int
    hung: int
    #: of its running attempts, those that reported progress (ctx.progress)
    reporting: int = 0
    #: the least advanced fraction reported (None: none reported a fraction)
    progress_min: float | None = None
    #: seconds since the oldest of their last reports (a stalled job shows here)
    progress_age_max_s: float | None = None


def inflight_counts(conn: Conn, policy: HungPolicy | None = None) -> list[TypeInflight]:
    """Exact counts per type by ``sk_inflight_tasks()``, the one definition of hung.

    Not :func:`skconsole.read.inflight`: that lists job rows (capped), and the
    exporter needs only counts per type.
    """
    return fetch(conn, "exporter_inflight", TypeInflight, (policy or HungPolicy()).params())


def inflight_families(counts: Sequence[TypeInflight]) -> list[Metric]:
    inflight = GaugeMetricFamily(
        "skconsole_inflight_jobs", "Jobs being processed per task type.", labels=["task_type"]
    )
    hung = _type_gauge(
        "skconsole_hung_jobs",
        "Jobs being processed that are hung (their owner's lease lapsed) per task type.",
    )
    reporting = _type_gauge(
        "skconsole_inflight_progress_jobs",
        "Jobs being processed whose handler reported progress (ctx.progress) per task type.",
    )
    least = _type_gauge(
        "skconsole_inflight_progress_min_ratio",
        "The least advanced progress (0 to 1) reported by a job being processed per task type.",
    )
    age = _type_gauge(
        "skconsole_inflight_progress_age_max_seconds",
        "Seconds since the oldest last progress report of a job being processed per task type.",
    )
    for c in counts:
        inflight.add_metric([c.task_type], c.in_flight)
        hung.add_metric([c.task_type], c.hung)
        reporting.add_metric([c.task_type], c.reporting)
        if c.progress_min is not None:
            least.add_metric([c.task_type], c.progress_min)
        if c.progress_age_max_s is not None:
            age.add_metric([c.task_type], max(0.0, c.progress_age_max_s))
    return [inflight, hung, reporting, least, age]


# -- failure groups -----------------------------------------------------------------------
def failure_families(groups: Sequence[read.FailureGroup]) -> list[Metric]:
    """The biggest MAX_FAILURE_GROUPS groups by id; ``groups`` may hold one more,
    which only tells that there were more."""
    jobs = GaugeMetricFamily(
        "skconsole_failure_group_jobs",
        f"Failed jobs per failure group (id: skconsole status failures), the {MAX_FAILURE_GROUPS}"
        " biggest groups only.",
        labels=["group"],
    )
    for g in groups[:MAX_FAILURE_GROUPS]:
        jobs.add_metric([g.id], g.count)
    truncated = GaugeMetricFamily(
        "skconsole_failure_groups_truncated",
        f"1 when there are more than {MAX_FAILURE_GROUPS} failure groups (the rest are not exported).",
        value=float(len(groups) > MAX_FAILURE_GROUPS),
    )
    return [jobs, truncated]


# -- execution times ----------------------------------------------------------------------
def execution_families(times: Sequence[read.TypeTimes]) -> list[Metric]:
    """Lifetime count and sum as a summary; the recent percentiles as gauges of their own.

    The percentiles come from another population (the latest processed jobs,
    see :class:`skconsole.read.TypeTimes`) than the count and sum (every
    execution the workers reported), so they are not the summary's quantiles.
    """
    summary = SummaryMetricFamily(
        "skconsole_job_execution_seconds",
        "Execution time of processed jobs per task type, as the workers reported them.",
        labels=["task_type"],
    )
    recent = GaugeMetricFamily(
        "skconsole_job_execution_recent_seconds",
        "Percentiles of the execution time of the latest processed jobs per task type.",
        labels=["task_type", "quantile"],
    )
    sample = _type_gauge(
        "skconsole_job_execution_recent_jobs",
        "Processed jobs the recent percentiles are computed from, per task type.",
    )
    longest = _type_gauge(
        "skconsole_job_execution_longest_seconds",
        "Longest execution time the workers reported per task type.",
    )
    fastest = _type_gauge(
        "skconsole_job_execution_fastest_seconds",
        "Fastest execution time the workers reported per task type.",
    )
    for t in times:
        summary.add_metric([t.task_type], t.cycles, _seconds(t.total_ms))
        sample.add_metric([t.task_type], t.sample)
        for q, ms in (("0.5", t.p50_ms), ("0.95", t.p95_ms), ("0.99", t.p99_ms)):
            if ms is not None:
                recent.add_metric([t.task_type, q], _seconds(ms))
        if t.longest_ms is not None:
            longest.add_metric([t.task_type], _seconds(t.longest_ms))
        if t.fastest_ms is not None:
            fastest.add_metric([t.task_type], _seconds(t.fastest_ms))
    return [summary, recent, sample, longest, fastest]


# -- workers ------------------------------------------------------------------------------
def worker_families(workers: Sequence[read.WorkerInfo]) -> list[Metric]:
    """Registered workers per liveness state, and the alive ones (always present, maybe 0)."""
    states = Counter(w.state.value for w in workers)
    by_state = GaugeMetricFamily(
        "skconsole_workers",
        "Registered worker processes per liveness state (alive, connection lost, ...).",
        labels=["state"],
    )
    for state, n in sorted(states.items()):
        by_state.add_metric([state], n)
    alive = GaugeMetricFamily(
        "skconsole_workers_alive",
        "Worker processes alive.",
        value=sum(1 for w in workers if w.alive),
    )
    return [by_state, alive]


# -- app metrics --------------------------------------------------------------------------
def app_metric_families(snapshot: read.MetricsSnapshot) -> list[Metric]:
    """The workers' app metrics over processes: the summed ones as counters, each
    process's minimum and maximum (Stakhanovise.NET's) as gauges of the fleet's least
    and greatest, left out while no process has one.

    Workers only ever add to the summed ones (totals per process), so they are
    monotonic; a process's rows deleted by hand read as a counter reset, which
    Prometheus's rate() handles. Ids ending in -time or -duration are
    milliseconds, exported in seconds.
    """
    events = CounterMetricFamily(
        "skconsole_app_events",
        "Worker app metrics counting events, summed over processes.",
        labels=["category", "metric"],
    )
    times = CounterMetricFamily(
        "skconsole_app_time_seconds",
        "Worker app metrics accumulating time, summed over processes.",
        labels=["category", "metric"],
    )
    extremes = GaugeMetricFamily(
        "skconsole_app_extreme",
        "Worker app metrics kept as each process's minimum or maximum: the fleet's.",
        labels=["category", "metric", "kind"],
    )
    time_extremes = GaugeMetricFamily(
        "skconsole_app_time_extreme_seconds",
        "Worker app metrics of time kept as each process's minimum or maximum: the fleet's.",
        labels=["category", "metric", "kind"],
    )
    for m in snapshot.metrics:
        if m.value is None:
            continue
        timed = m.metric_id.endswith(_TIME_SUFFIXES)
        value = _seconds(m.value) if timed else m.value
        if m.kind is read.MetricKind.SUM:
            (times if timed else events).add_metric([m.category, m.metric_id], value)
        else:
            labels = [m.category, m.metric_id, m.kind.value]
            (time_extremes if timed else extremes).add_metric(labels, value)
    return [events, times, extremes, time_extremes]


# -- limits -------------------------------------------------------------------------------
def limit_families(limits: Sequence[read.TypeLimit]) -> list[Metric]:
    """Fleet-wide limits of the task types that have one, and their per-key concurrency
    limits with the keys at them."""
    concurrency = _type_gauge(
        "skconsole_task_type_concurrency_limit",
        "Jobs of the task type that may run at once across the fleet.",
    )
    rate_jobs = _type_gauge(
        "skconsole_task_type_rate_limit_jobs",
        "Jobs of the task type that may start per rate-limit window.",
    )
    rate_window = _type_gauge(
        "skconsole_task_type_rate_limit_window_seconds", "The task type's rate-limit window."
    )
    key_concurrency = _type_gauge(
        "skconsole_task_type_key_concurrency_limit",
        "Jobs of one key of the task type (a payload path's value) that may run at once.",
    )
    keys_at_limit = _type_gauge(
        "skconsole_task_type_keys_at_limit",
        "Keys of the task type with as many jobs running as their per-key limit allows.",
    )
    for t in limits:
        if t.concurrency is not None:
            concurrency.add_metric([t.task_type], t.concurrency)
        if t.rate_count is not None and t.rate_seconds is not None:
            rate_jobs.add_metric([t.task_type], t.rate_count)
            rate_window.add_metric([t.task_type], t.rate_seconds)
        if t.key_concurrency is not None:
            key_concurrency.add_metric([t.task_type], t.key_concurrency)
            keys_at_limit.add_metric([t.task_type], t.keys_at_limit)
    return [concurrency, rate_jobs, rate_window, key_concurrency, keys_at_limit]


def slo_families(depth: read.Depth, slos: dict[str, type_settings.TypeSlo]) -> list[Metric]:
    """Each max wait (``skconsole slo``) and where the type's oldest ready job stands
    against it; each max failure rate."""
    max_wait = _type_gauge(
        "skconsole_slo_max_wait_seconds",
        "The longest a ready job of the task type should wait (its SLO).",
    )
    breach_in = GaugeMetricFamily(
        "skconsole_slo_breach_in_seconds",
        "Seconds until the oldest ready job breaches the SLO; negative once breached"
        " (types with an SLO and a ready job).",
        labels=["task_type"],
    )
    breached = _type_gauge(
        "skconsole_slo_breached",
        "1 when the task type's oldest ready job has waited past its SLO, else 0.",
    )
    max_failure_rate = _type_gauge(
        "skconsole_slo_max_failure_rate",
        "The largest share (0 to 1) of the task type's jobs finished within the flow window"
        " that may fail (its SLO).",
    )
    oldest = {t.task_type: t.oldest_ready_s for t in depth.types}
    for task_type, slo in sorted(slos.items()):
        if slo.max_failure_rate is not None:
            max_failure_rate.add_metric([task_type], slo.max_failure_rate)
        slo_s = slo.max_wait_s
        if slo_s is None:
            continue
        max_wait.add_metric([task_type], slo_s)
        left = flow.breach_in_s(slo_s, oldest.get(task_type))
        if left is not None:
            breach_in.add_metric([task_type], left)
        state = flow.slo_state(slo_s, oldest.get(task_type))
        breached.add_metric([task_type], 1.0 if state is flow.SloState.BREACHED else 0.0)
    return [max_wait, breach_in, breached, max_failure_rate]


def failure_rate_families(counts: dict[str, flow.TypeCounts], window_s: float) -> list[Metric]:
    """Each task type's jobs finished within the flow window by outcome, and the share of
    them that failed (types with a finished job only: no job, no rate)."""
    minutes = format_age(window_s)
    finished = GaugeMetricFamily(
        "skconsole_recent_finished_jobs",
        f"Jobs finished within the last {minutes} per task type and outcome (succeeded;"
        " failed: Faulted or Fatal; cancelled).",
        labels=["task_type", "outcome"],
    )
    rate = _type_gauge(
        "skconsole_failure_rate",
        f"Share (0 to 1) of the jobs finished within the last {minutes} that failed"
        " (Faulted or Fatal) rather than succeeded, per task type (cancelled jobs count"
        " in neither; types with a finished job only).",
    )
    for task_type, c in sorted(counts.items()):
        for outcome, n in (
            ("succeeded", c.succeeded),
            ("failed", c.failed),
            ("cancelled", c.cancelled),
        ):
            finished.add_metric([task_type, outcome], n)
        share = flow.failure_rate(c.failed, c.finished)
        if share is not None:
            rate.add_metric([task_type], share)
    return [finished, rate]


def breaker_families(breakers: Sequence[read.Breaker]) -> list[Metric]:
    """Each circuit breaker's state (0 closed, 1 open, 2 half-open), the jobs it holds back
    and its half-open rounds, labelled by its id, type and signature."""
    labels = ["breaker", "task_type", "signature"]
    state = GaugeMetricFamily(
        "skconsole_breaker_state",
        "A circuit breaker's state: 0 closed, 1 open, 2 half-open (skconsole breaker).",
        labels=labels,
    )
    held = GaugeMetricFamily(
        "skconsole_breaker_held_jobs",
        "Jobs a circuit breaker holds back now (parked, not released as canaries).",
        labels=labels,
    )
    rounds = CounterMetricFamily(
        "skconsole_breaker_rounds",
        "Half-open rounds a circuit breaker has let canaries run in.",
        labels=labels,
    )
    for b in breakers:
        key = [str(b.breaker_id), b.task_type, b.signature]
        state.add_metric(key, float(b.state.value))
        held.add_metric(key, b.held)
        rounds.add_metric(key, b.rounds)
    return [state, held, rounds]


# -- queue-table health -------------------------------------------------------------------
def health_families(h: health.Health) -> list[Metric]:
    """Per hot table its live and dead rows and size; the xmin horizon's age; lock waits.

    Dead rows that keep growing while the horizon's age grows are the signature of a
    forgotten transaction (see :mod:`skconsole.read.health`): both are exported so one alert
    can say so. The horizon's age in seconds is absent when it is unknown (a slot holds
    it, or the holder's times are hidden without pg_read_all_stats): an absent series
    never reads as a healthy 0.
    """
    dead = GaugeMetricFamily(
        "skconsole_table_dead_tuples",
        "Dead rows per queue table (statistics: n_dead_tup); vacuum removes them.",
        labels=["table"],
    )
    live = GaugeMetricFamily(
        "skconsole_table_live_tuples",
        "Live rows per queue table (statistics: n_live_tup).",
        labels=["table"],
    )
    size = GaugeMetricFamily(
        "skconsole_table_bytes",
        "Size of each queue table on disk, without its indexes.",
        labels=["table"],
    )
    for t in h.tables:
        dead.add_metric([t.table], t.dead_rows)
        live.add_metric([t.table], t.live_rows)
        size.add_metric([t.table], t.table_bytes)
    families: list[Metric] = [dead, live, size]
    if h.horizon.age_s is not None:
        families.append(
            GaugeMetricFamily(
                "skconsole_xmin_horizon_age_seconds",
                "How long the oldest holder of this database's xmin horizon has held it.",
                value=h.horizon.age_s,
            )
        )
    families.append(
        GaugeMetricFamily(
            "skconsole_xmin_horizon_age_transactions",
            "How many transactions back this database's xmin horizon is held (0: none held).",
            value=h.horizon.age or 0,
        )
    )
    families.append(
        GaugeMetricFamily(
            "skconsole_lock_waits",
            "Sessions waiting for a lock on a queue table.",
            value=len(h.lock_waits),
        )
    )
    return families + replication_families(h.replication)


def replication_families(r: read.Replication) -> list[Metric]:
    """The replication mode, the timeline, the last failover and how long claims are still
    held after it (an alert on ``skconsole_claims_held_seconds > 0`` says work is held)."""
    mode = GaugeMetricFamily(
        "skconsole_replication_mode",
        "1 for the mode the server replicates in (what a failover can lose).",
        labels=["mode"],
    )
    mode.add_metric([r.mode.name.lower()], 1.0)
    last = r.last_failover
    families: list[Metric] = [
        mode,
        GaugeMetricFamily(
            "skconsole_replication_standbys",
            "WAL senders streaming from this server (standbys, backups).",
            value=r.senders,
        ),
        GaugeMetricFamily(
            "skconsole_claims_held_seconds",
            "How much longer claims are held after a failover (0: not held).",
            value=last.held_for_s if last is not None else 0.0,
        ),
    ]
    if r.timeline is not None:
        families.append(
            GaugeMetricFamily(
                "skconsole_timeline", "The WAL timeline the server is on.", value=r.timeline
            )
        )
    if last is not None:
        families.append(
            GaugeMetricFamily(
                "skconsole_last_failover_timestamp_seconds",
                "When the queue's last failover was first seen (Unix time).",
                value=last.at.timestamp(),
            )
        )
    return families


# -- the sources: one read each, in this order, in one snapshot ----------------------------
def read_depth(conn: Conn) -> list[Metric]:
    depth = read.depth(conn)
    return [*depth_families(depth), *slo_families(depth, type_settings.slos(conn))]


def read_failure_rates(conn: Conn) -> list[Metric]:
    return failure_rate_families(flow.window_counts(conn, flow.WINDOW_S), flow.WINDOW_S)


def read_statuses(conn: Conn) -> list[Metric]:
    return status_families(read.status_summary(conn))


def read_inflight(conn: Conn) -> list[Metric]:
    return inflight_families(inflight_counts(conn))


def read_failures(conn: Conn) -> list[Metric]:
    # one more than exported: it tells whether there are more
    return failure_families(read.failure_groups(conn, limit=MAX_FAILURE_GROUPS + 1))


def read_execution(conn: Conn) -> list[Metric]:
    return execution_families(read.execution_stats(conn))


def read_workers(conn: Conn) -> list[Metric]:
    return worker_families(read.workers(conn))


def read_app_metrics(conn: Conn) -> list[Metric]:
    return app_metric_families(read.metrics(conn))


def read_limits(conn: Conn) -> list[Metric]:
    return limit_families(read.limits(conn))


def read_breakers(conn: Conn) -> list[Metric]:
    return breaker_families(read.breakers(conn))


def read_health(conn: Conn) -> list[Metric]:
    return health_families(health.health(conn))


#: Everything a cycle reads. Add a source here to export more (see the module docstring).
SOURCES: tuple[Source, ...] = (
    read_depth,
    read_failure_rates,
    read_statuses,
    read_inflight,
    read_failures,
    read_execution,
    read_workers,
    read_app_metrics,
    read_limits,
    read_breakers,
    read_health,
)
