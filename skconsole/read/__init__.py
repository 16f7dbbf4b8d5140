"""The read layer: what the console shows, ``skconsole status`` prints, check judges and
the exporter exports.

One module per read model (depth, statuses, inflight, failures, job, exec_times,
metrics, workers, schedules, breakers, history, overview, type_settings, flow, health, why, reaped).
Each function takes an open connection and returns dataclasses filled from its
query's columns by name (:mod:`skconsole.read.query`), with an ``as_dict`` for
JSON, so the CLI, the console and scripts share them. Every one stays fast on a
big queue (a million waiting jobs, millions of results): where an exact count
would mean reading a big table, the read model estimates and says so
(``estimated``). Nothing here writes (operator actions are :mod:`skconsole.ops`)
or imports a UI library.

This module is the layer's face: ``from skconsole import read`` and then
``read.depth(conn)``, ``read.WorkerInfo``.
"""

from skconsole.read.after import AfterJob
from skconsole.read.attempts import ATTEMPTS_KEPT, ChildJob, JobAttempt
from skconsole.read.breakers import Breaker, breakers
from skconsole.read.depth import DEPTH_EXACT_LIMIT, Depth, TypeDepth, depth, table_estimates
from skconsole.read.exec_times import RECENT_LIMIT, RECENT_WINDOW_S, TypeTimes, execution_stats
from skconsole.read.failures import (
    FAILURE_SCAN_CAP,
    FailedJob,
    FailureGroup,
    FailureScan,
    GroupJobs,
    failure_groups,
    failure_jobs,
    group_id,
)
from skconsole.read.find import FindIndex, FoundJob, explain, find, find_indexes
from skconsole.read.history import History, Minute, history
from skconsole.read.inflight import Inflight, InflightJob, Progress, inflight
from skconsole.read.job import JobDetail, job
from skconsole.read.job_lookup import JobMatch, JobNotFoundError, jobs_with_prefix, resolve_job
from skconsole.read.metrics import Metric, MetricKind, MetricsSnapshot, metric_rates, metrics
from skconsole.read.overview import Overview, overview, server_version
from skconsole.read.reaped import ReapedAttempt, reaped
from skconsole.read.record import Counts, Record, RecordSource, record
from skconsole.read.replication import LastFailover, Replication, ReplicationMode, replication
from skconsole.read.schedules import SCHEDULE_LATE_AFTER_S, ScheduleInfo, schedules
from skconsole.read.statuses import STATUS_EXACT_LIMIT, StatusCounts, status_counts, status_summary
from skconsole.read.type_settings import TypeLimit, limits, rate_text
from skconsole.read.why import Cause, CauseCode, Fix, Why, why
from skconsole.read.workers import WorkerInfo, served_types, unserved_types, workers

__all__ = [
    "ATTEMPTS_KEPT",
    "DEPTH_EXACT_LIMIT",
    "FAILURE_SCAN_CAP",
    "RECENT_LIMIT",
    "RECENT_WINDOW_S",
    "SCHEDULE_LATE_AFTER_S",
    "STATUS_EXACT_LIMIT",
    "AfterJob",
    "Breaker",
    "Cause",
    "CauseCode",
    "ChildJob",
    "Counts",
    "Depth",
    "FailedJob",
    "FailureGroup",
    "FailureScan",
    "FindIndex",
    "Fix",
    "FoundJob",
    "GroupJobs",
    "History",
    "Inflight",
    "InflightJob",
    "JobAttempt",
    "JobDetail",
    "JobMatch",
    "JobNotFoundError",
    "LastFailover",
    "Metric",
    "MetricKind",
    "MetricsSnapshot",
    "Minute",
    "Overview",
    "Progress",
    "ReapedAttempt",
    "Record",
    "RecordSource",
    "Replication",
    "ReplicationMode",
    "ScheduleInfo",
    "StatusCounts",
    "TypeDepth",
    "TypeLimit",
    "TypeTimes",
    "Why",
    "WorkerInfo",
    "breakers",
    "depth",
    "execution_stats",
    "explain",
    "failure_groups",
    "failure_jobs",
    "find",
    "find_indexes",
    "group_id",
    "history",
    "inflight",
    "job",
    "jobs_with_prefix",
    "limits",
    "metric_rates",
    "metrics",
    "overview",
    "rate_text",
    "reaped",
    "record",
    "replication",
    "resolve_job",
    "schedules",
    "served_types",
    "server_version",
    "status_counts",
    "status_summary",
    "table_estimates",
    "unserved_types",
    "why",
    "workers",
]
