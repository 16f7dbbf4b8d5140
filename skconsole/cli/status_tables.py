"""How ``skconsole status`` draws each view that is more than one table (the overview,
depth with its limits, flow, failures, execution times, metrics, history,
schedules, health). A view that is one table (inflight, workers) is drawn from
its own columns (:mod:`skconsole.cli.view_table`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

from rich.markup import escape
from rich.style import StyleType

from skconsole import read
from skconsole.cli.health_tables import show_health
from skconsole.cli.output import Column as TextColumn
from skconsole.cli.output import out, print_table
from skconsole.cli.view_table import column, print_items
from skconsole.core.durations import format_age
from skconsole.core.status import JobStatus
from skconsole.read import flow
from skconsole.views import Column, catalog
from skconsole.views import workers as workers_view


def _ms(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 10 else f"{value:,.1f}"


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


def show_overview(o: read.Overview, wide: bool) -> None:
    show_depth(o.depth, [], wide)
    title = "Jobs by status"
    if o.statuses.estimated:
        title += f" (estimated: {', '.join(JobStatus.label_of(s) for s in o.statuses.estimated)})"
    counts = [o.statuses.counts.get(int(s), 0) for s in JobStatus]
    # a status nobody is in goes first, Unknown before the others
    columns = [
        TextColumn(
            s.label,
            priority=(2 if counts[n] else 10) + (1 if s is JobStatus.UNKNOWN else 0),
            justify="right",
        )
        for n, s in enumerate(JobStatus)
    ]
    print_table(columns, [[f"{c:,}" for c in counts]], wide=wide, title=title)
    print_items(workers_view.COLUMNS, o.workers, title="Workers", wide=wide, skip=_OVERVIEW_SKIP)


#: the overview's workers table leaves out what the workers view adds
_OVERVIEW_SKIP = frozenset({"started", "types"})


def show_depth(depth: read.Depth, limits: list[read.TypeLimit], wide: bool) -> None:
    title = "Queue depth" + (
        " (ready and scheduled estimated from a sample)" if depth.estimated else ""
    )
    paused = any(t.paused for t in depth.types)
    columns = [
        TextColumn("type"),
        TextColumn("ready", 1, "right"),
        TextColumn("scheduled", 4, "right"),
        TextColumn("in flight", 2, "right"),
        TextColumn("oldest ready", 3, "right"),
        TextColumn("paused", 1 if paused else 5, "right"),
    ]
    rows = [
        [
            escape(t.task_type),
            f"{t.ready:,}",
            f"{t.scheduled:,}",
            f"{t.in_flight:,}",
            format_age(t.oldest_ready_s),
            "yes" if t.paused else "",
        ]
        for t in depth.types
    ]
    rows.append(
        [
            "total",
            f"{depth.ready:,}",
            f"{depth.scheduled:,}",
            f"{depth.in_flight:,}",
            format_age(depth.oldest_ready_s),
            "",
        ]
    )
    by_type = {t.task_type: t for t in limits}
    if by_type:  # the `depth` view: running/concurrency limit and rate limit
        columns.append(TextColumn("limit", 2, "right"))
        for cells, t in zip(rows, [*depth.types, None], strict=True):
            limit = by_type.get(t.task_type) if t else None
            cells.append(escape(limit.summary()) if limit else "")
    styles: list[StyleType | None] = [None] * (len(rows) - 1)
    styles.append("bold")
    print_table(columns, rows, wide=wide, title=title, styles=styles)


_FLOW_COLUMNS: tuple[Column[flow.TypeFlow], ...] = (
    column("type", lambda r: r.task_type + (" (paused)" if r.paused else "")),
    column("in/min", lambda r: flow.rate_text(r.arrivals_per_min), 2, right=True),
    column("done/min", lambda r: flow.rate_text(r.completions_per_min), 2, right=True),
    column("failed", lambda r: r.failures_text, 1, right=True),
    column("ready", lambda r: ("≈" if r.ready_estimated else "") + f"{r.ready:,}", 1, right=True),
    column("drain", lambda r: r.drain_text, 1, right=True),
    column("oldest ready", lambda r: format_age(r.oldest_ready_s), 3, right=True),
    column("max wait", lambda r: format_age(r.slo_max_wait_s), 4, right=True),
    column("SLO", lambda r: r.slo_text, 1, right=True),
    column("max failed", lambda r: flow.percent_text(r.slo_max_failure_rate), 4, right=True),
)


def show_flow(f: catalog.Flow, wide: bool) -> None:
    estimated = any(r.ready_estimated for r in f.types)
    title = (
        f"Flow per type, rates over the last {format_age(f.window_s)}"
        " (done: succeeded; the drain counts only those)"
        + (" (ready estimated from a sample)" if estimated else "")
    )
    print_items(_FLOW_COLUMNS, f.types, wide=wide, title=title, style=lambda r: r.worst_state.style)


_GROUP_JOB_COLUMNS: tuple[Column[read.FailedJob], ...] = (
    column("job", lambda j: str(j.task_id), ident=True),
    column("type", lambda j: j.task_type, 2),
    column("status", lambda j: JobStatus.label_of(j.status), 1),
    column("errors", lambda j: str(j.error_count), 4),
    column("priority", lambda j: str(j.priority), 5),
    column("failed at", lambda j: _when(j.failed_at), 3),
    column("error", lambda j: j.error_line[:120], flex=True),
)

_GROUP_COLUMNS: tuple[Column[read.FailureGroup], ...] = (
    column("id", lambda g: g.id, ident=True),
    column("jobs", lambda g: f"{g.count:,}", right=True),
    column(
        "statuses",
        lambda g: ", ".join(f"{JobStatus.label_of(s)} {n:,}" for s, n in g.statuses.items() if n),
        4,
    ),
    column(
        "types",
        lambda g: ", ".join(g.task_types[:3]) + (" ..." if len(g.task_types) > 3 else ""),
        2,
    ),
    column("first seen", lambda g: _when(g.first_seen), 5),
    column("last seen", lambda g: _when(g.last_seen), 3),
    column("signature", lambda g: g.signature, flex=True, min_width=30),
)


def show_failures(f: catalog.Failures, wide: bool) -> None:
    if f.jobs is not None:
        title = f"{f.jobs.total:,} failed job(s) in {escape(f.jobs.signature)}"
        print_items(_GROUP_JOB_COLUMNS, f.jobs.jobs, wide=wide, title=title)
        return
    title = "Failure groups (4 Error, 5 Faulted, 6 Fatal)"
    print_items(_GROUP_COLUMNS, f.groups, wide=wide, title=title)
    if f.groups:
        out.print("drill into a group: skconsole status failures --group ID", highlight=False)


#: one population a row: the recent runs (catalog.exec_window); every run the
#: processes reported is in the JSON
_EXEC_COLUMNS: tuple[Column[read.TypeTimes], ...] = (
    column("type", lambda r: r.task_type),
    column("runs", lambda r: f"{r.sample:,}", 1, right=True),
    column("avg", lambda r: _ms(r.recent_avg_ms), 6, right=True),
    column("p50", lambda r: _ms(r.p50_ms), 2, right=True),
    column("p95", lambda r: _ms(r.p95_ms), 3, right=True),
    column("p99", lambda r: _ms(r.p99_ms), 4, right=True),
    column("fastest", lambda r: _ms(r.recent_fastest_ms), 8, right=True),
    column("longest", lambda r: _ms(r.recent_longest_ms), 7, right=True),
    column("last", lambda r: _ms(r.recent_last_ms), 9, right=True),
)


def show_exec_times(e: catalog.ExecTimes, wide: bool) -> None:
    title = f"Execution time per type (ms), runs {e.window}"
    print_items(_EXEC_COLUMNS, e.types, wide=wide, title=title)
    out.print(
        f"every run the processes reported: {sum(r.cycles for r in e.types):,}"
        " (their count, average, fastest and longest: --json)",
        highlight=False,
    )


class _RatedMetric(NamedTuple):
    """A metric and its rate per second (None: not known yet)."""

    metric: read.Metric
    per_second: float | None


_METRIC_COLUMNS: tuple[Column[_RatedMetric], ...] = (
    column("category", lambda m: m.metric.category, 3),
    column("metric", lambda m: m.metric.metric_id, ident=True),
    column(
        "value",
        lambda m: f"{m.metric.value:,}" if m.metric.value is not None else "none yet",
        right=True,
    ),
    column(
        "per second",
        lambda m: f"{m.per_second:,.1f}" if m.per_second is not None else "-",
        1,
        right=True,
    ),
    column("processes", lambda m: str(m.metric.processes), 2, right=True),
)


def show_metrics(m: catalog.RatedMetrics, wide: bool) -> None:
    rows = [
        _RatedMetric(metric, m.rates.get(metric.metric_id))
        for ms in m.snapshot.by_category().values()
        for metric in ms
    ]
    title = "App metrics (over processes: sums, least minimum, greatest maximum)"
    print_items(_METRIC_COLUMNS, rows, wide=wide, title=title)


_MINUTE_COLUMNS: tuple[Column[read.Minute], ...] = (
    column("minute", lambda m: m.minute.strftime("%H:%M")),
    column("posted", lambda m: f"{m.posted:,}", 1, right=True),
    column("processed", lambda m: f"{m.processed:,}", 1, right=True),
    column("failed", lambda m: f"{m.failed:,}", 1, right=True),
)


def show_history(h: read.History, wide: bool) -> None:
    title = f"Jobs per minute, last {len(h.minutes)} min (the last minute is partial)"
    print_items(_MINUTE_COLUMNS, h.minutes, wide=wide, title=title)


def _posted(r: read.ScheduleInfo) -> str:
    posted = r.last_posted_age_s
    return f"{format_age(posted)} ago" if posted is not None else "-"


def _schedule_style(r: read.ScheduleInfo) -> StyleType | None:
    late = r.paused or r.late_s is not None
    return "red" if r.error else ("yellow" if late else None)


_SCHEDULE_COLUMNS: tuple[Column[read.ScheduleInfo], ...] = (
    column("type", lambda r: r.task_type),
    column("schedule", lambda r: r.schedule, flex=True, min_width=30),
    column("next run", lambda r: r.next_run_text, 1, right=True),
    column("last posted", _posted, 3, right=True),
    column("last job", lambda r: r.last_job_text, 2),
    column("job id", lambda r: str(r.last_task_id) if r.last_task_id else "-", 6),
    column(
        "waiting", lambda r: ("≈" if r.waiting_estimated else "") + f"{r.waiting:,}", 4, right=True
    ),
    column("missed", lambda r: r.missed, 5),
)


def show_schedules(s: catalog.Schedules, wide: bool) -> None:
    title = "Periodic task types"
    print_items(_SCHEDULE_COLUMNS, s.schedules, wide=wide, title=title, style=_schedule_style)
    for r in s.schedules:
        if r.error:
            out.print(
                f"[red]{escape(r.task_type)}: cannot read its schedule:[/red] {escape(r.error)}",
                highlight=False,
            )


#: how each view that is not one table is drawn, by name (a unit test checks every
#: view is drawn one way or the other)
SHOW: dict[str, Callable[[Any, bool], None]] = {
    "overview": show_overview,
    "depth": lambda d, wide: show_depth(d.depth, d.limits, wide),
    "flow": show_flow,
    "failures": show_failures,
    "stats": show_exec_times,
    "metrics": show_metrics,
    "history": show_history,
    "schedules": show_schedules,
    "health": show_health,
}
