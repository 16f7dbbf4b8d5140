"""Every view ``skconsole status`` knows, in the order its help lists them.

A view whose read model is one table (inflight, workers) has a module of its
own with its columns, which the console's panel draws too; the others are
defined here: a reader and a JSON document, which the CLI draws its own way
(several tables, notes). To add a view: its read model in skconsole/read, its
entry here, and how the CLI draws it (skconsole/cli/status_tables.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from skconsole import read
from skconsole.core.durations import format_age
from skconsole.core.json_types import JsonObject
from skconsole.read import flow, health
from skconsole.read.query import Conn
from skconsole.views.inflight import INFLIGHT
from skconsole.views.registry import View, ViewArgs
from skconsole.views.workers import WORKERS


@dataclass(frozen=True)
class DepthAndLimits:
    depth: read.Depth
    limits: list[read.TypeLimit]

    def as_dict(self) -> JsonObject:
        return {**self.depth.as_dict(), "limits": [t.as_dict() for t in self.limits]}


@dataclass(frozen=True)
class Flow:
    window_s: float
    types: list[flow.TypeFlow]

    def as_dict(self) -> JsonObject:
        return {"window_s": self.window_s, "types": [r.as_dict() for r in self.types]}


@dataclass(frozen=True)
class Failures:
    """The failure groups, or (``--group``) the jobs of one."""

    groups: list[read.FailureGroup] = field(default_factory=list)
    jobs: read.GroupJobs | None = None

    def as_dict(self) -> JsonObject:
        if self.jobs is not None:
            return self.jobs.as_dict()
        return {"groups": [g.as_dict() for g in self.groups]}


def exec_window(
    window_s: float = read.RECENT_WINDOW_S, recent_limit: int = read.RECENT_LIMIT
) -> str:
    """Which runs a row of execution times is of, in words (the panel's title, the
    table's): "in the last 1h, the latest 10,000 jobs at most"."""
    whole = int(window_s)
    span = (
        f"{whole // 3600}h"
        if whole % 3600 == 0 and whole
        else (f"{whole // 60} min" if whole % 60 == 0 and whole else format_age(window_s))
    )
    return f"in the last {span}, the latest {recent_limit:,} jobs at most"


@dataclass(frozen=True)
class ExecTimes:
    """Execution times per type. A row of the table is the recent runs alone
    (:func:`exec_window`); the JSON also has every run the processes reported."""

    types: list[read.TypeTimes]
    window_s: float = read.RECENT_WINDOW_S
    recent_limit: int = read.RECENT_LIMIT

    @property
    def window(self) -> str:
        return exec_window(self.window_s, self.recent_limit)

    def as_dict(self) -> JsonObject:
        return {
            "window_s": self.window_s,
            "recent_limit": self.recent_limit,
            "types": [r.as_dict() for r in self.types],
        }


@dataclass(frozen=True)
class RatedMetrics:
    """App metrics, with the rates of two reads ``sample_s`` apart (none when 0)."""

    snapshot: read.MetricsSnapshot
    rates: dict[str, float | None]
    sample_s: float

    def as_dict(self) -> JsonObject:
        doc = self.snapshot.as_dict(self.rates)
        doc["rate_window_s"] = self.sample_s if self.sample_s > 0 else None
        return doc


@dataclass(frozen=True)
class Schedules:
    schedules: list[read.ScheduleInfo]

    def as_dict(self) -> JsonObject:
        return {"schedules": [r.as_dict() for r in self.schedules]}


def _depth(conn: Conn, args: ViewArgs) -> DepthAndLimits:
    return DepthAndLimits(read.depth(conn), read.limits(conn))


def _flow(conn: Conn, args: ViewArgs) -> Flow:
    return Flow(args.window_s, flow.flow(conn, args.window_s))


def _failures(conn: Conn, args: ViewArgs) -> Failures:
    if args.group is None:
        return Failures(groups=read.failure_groups(conn, limit=args.limit))
    ids = {g.id: g.signature for g in read.failure_groups(conn, limit=10_000)}
    return Failures(jobs=read.failure_jobs(conn, ids.get(args.group, args.group), limit=args.limit))


def _metrics(conn: Conn, args: ViewArgs) -> RatedMetrics:
    first = read.metrics(conn, taken_at=time.monotonic())
    if args.sample_s <= 0:
        return RatedMetrics(first, {}, args.sample_s)
    time.sleep(args.sample_s)  # the rates' window: the caller asked for it
    second = read.metrics(conn, taken_at=time.monotonic())
    rates = read.metric_rates(first, second, second.taken_at - first.taken_at)
    return RatedMetrics(second, rates, args.sample_s)


OVERVIEW: View[read.Overview] = View(
    "overview", lambda conn, args: read.overview(conn), read.Overview.as_dict
)
DEPTH: View[DepthAndLimits] = View("depth", _depth, DepthAndLimits.as_dict)
FLOW: View[Flow] = View("flow", _flow, Flow.as_dict)
FAILURES: View[Failures] = View("failures", _failures, Failures.as_dict)
EXEC_TIMES: View[ExecTimes] = View(
    "stats", lambda conn, args: ExecTimes(read.execution_stats(conn)), ExecTimes.as_dict
)
METRICS: View[RatedMetrics] = View("metrics", _metrics, RatedMetrics.as_dict)
HISTORY: View[read.History] = View(
    "history", lambda conn, args: read.history(conn, minutes=args.minutes), read.History.as_dict
)
SCHEDULES: View[Schedules] = View(
    "schedules", lambda conn, args: Schedules(read.schedules(conn)), Schedules.as_dict
)
HEALTH: View[health.Health] = View(
    "health", lambda conn, args: health.health(conn), health.Health.as_dict, replica_ok=False
)

#: every view of ``skconsole status VIEW``, in the order its help lists them
VIEWS: tuple[View[Any], ...] = (
    DEPTH,
    FLOW,
    INFLIGHT,
    FAILURES,
    EXEC_TIMES,
    METRICS,
    WORKERS,
    HISTORY,
    SCHEDULES,
    HEALTH,
)
BY_NAME: dict[str, View[Any]] = {v.name: v for v in VIEWS}
