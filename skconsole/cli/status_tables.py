"""How ``skconsole status`` draws each view that is more than one table (the overview,
depth with its limits, flow, failures, execution times, metrics, history,
schedules, health). A view that is one table (inflight, workers) is drawn from
its own columns (:mod:`skconsole.cli.view_table`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from rich.markup import escape
from rich.style import StyleType

from skconsole import read
from skconsole.cli.health_tables import show_health
from skconsole.cli.output import Column, out, print_table
from skconsole.cli.view_table import print_items
from skconsole.core.durations import format_age
from skconsole.core.status import JobStatus
from skconsole.read import flow
from skconsole.views import catalog
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
        Column(
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
        Column("type"),
        Column("ready", 1, "right"),
        Column("scheduled", 4, "right"),
        Column("in flight", 2, "right"),
        Column("oldest ready", 3, "right"),
        Column("paused", 1 if paused else 5, "right"),
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
        columns.append(Column("limit", 2, "right"))
        for cells, t in zip(rows, [*depth.types, None], strict=True):
            limit = by_type.get(t.task_type) if t else None
            cells.append(limit.summary() if limit else "")
    styles: list[StyleType | None] = [None] * (len(rows) - 1)
    styles.append("bold")
    print_table(columns, rows, wide=wide, title=title, styles=styles)


def show_flow(f: catalog.Flow, wide: bool) -> None:
    rows = f.types
    estimated = any(r.ready_estimated for r in rows)
    columns = [
        Column("type"),
        Column("in/min", 2, "right"),
        Column("out/min", 2, "right"),
        Column("ready", 1, "right"),
        Column("drain", 1, "right"),
        Column("oldest ready", 3, "right"),
        Column("max wait", 4, "right"),
        Column("SLO", 1, "right"),
    ]
    cells = [
        [
            escape(r.task_type) + (" (paused)" if r.paused else ""),
            flow.rate_text(r.arrivals_per_min),
            flow.rate_text(r.completions_per_min),
            ("≈" if r.ready_estimated else "") + f"{r.ready:,}",
            r.drain_text,
            format_age(r.oldest_ready_s),
            format_age(r.slo_max_wait_s),
            r.slo_text,
        ]
        for r in rows
    ]
    styles: list[StyleType | None] = [r.slo_state.style for r in rows]
    title = f"Flow per type, rates over the last {format_age(f.window_s)}" + (
        " (ready estimated from a sample)" if estimated else ""
    )
    print_table(columns, cells, wide=wide, title=title, styles=styles)


def _show_group_jobs(jobs: read.GroupJobs, wide: bool) -> None:
    columns = [
        Column("job", key=True),
        Column("type", 2),
        Column("status", 1),
        Column("errors", 4),
        Column("priority", 5),
        Column("failed at", 3),
        Column("error", flexible=True),
    ]
    rows = [
        [
            str(j.task_id),
            escape(j.task_type),
            JobStatus.label_of(j.status),
            str(j.error_count),
            str(j.priority),
            _when(j.failed_at),
            escape(j.error_line[:120]),
        ]
        for j in jobs.jobs
    ]
    title = f"{jobs.total:,} failed job(s) in {escape(jobs.signature)}"
    print_table(columns, rows, wide=wide, title=title)


def show_failures(f: catalog.Failures, wide: bool) -> None:
    if f.jobs is not None:
        _show_group_jobs(f.jobs, wide)
        return
    columns = [
        Column("id", key=True),
        Column("jobs", justify="right"),
        Column("statuses", 4),
        Column("types", 2),
        Column("first seen", 5),
        Column("last seen", 3),
        Column("signature", flexible=True, min_width=30),
    ]
    rows = [
        [
            g.id,
            f"{g.count:,}",
            ", ".join(f"{JobStatus.label_of(s)} {n:,}" for s, n in g.statuses.items() if n),
            escape(", ".join(g.task_types[:3]) + (" ..." if len(g.task_types) > 3 else "")),
            _when(g.first_seen),
            _when(g.last_seen),
            escape(g.signature),
        ]
        for g in f.groups
    ]
    print_table(columns, rows, wide=wide, title="Failure groups (4 Error, 5 Faulted, 6 Fatal)")
    if f.groups:
        out.print("drill into a group: skconsole status failures --group ID", highlight=False)


def show_exec_times(e: catalog.ExecTimes, wide: bool) -> None:
    columns = [
        Column("type"),
        Column("runs", 1, "right"),
        Column("avg", 6, "right"),
        Column("p50", 2, "right"),
        Column("p95", 3, "right"),
        Column("p99", 4, "right"),
        Column("fastest", 8, "right"),
        Column("longest", 7, "right"),
        Column("last", 9, "right"),
        Column("sample", 5, "right"),  # the note below the table refers to it
    ]
    cells = [
        [
            escape(r.task_type),
            f"{r.cycles:,}",
            _ms(r.avg_ms),
            _ms(r.p50_ms),
            _ms(r.p95_ms),
            _ms(r.p99_ms),
            _ms(r.fastest_ms),
            _ms(r.longest_ms),
            _ms(r.last_ms),
            f"{r.sample:,}",
        ]
        for r in e.types
    ]
    print_table(columns, cells, wide=wide, title="Execution time per type (ms)")
    out.print(
        f"percentiles: the last {read.RECENT_LIMIT:,} processed jobs within "
        f"{format_age(read.RECENT_WINDOW_S)} (column sample)",
        highlight=False,
    )


def show_metrics(m: catalog.RatedMetrics, wide: bool) -> None:
    columns = [
        Column("category", 3),
        Column("metric", key=True),
        Column("value", justify="right"),
        Column("per second", 1, "right"),
        Column("processes", 2, "right"),
    ]
    rows = []
    for category, ms in m.snapshot.by_category().items():
        for metric in ms:
            rate = m.rates.get(metric.metric_id)
            rows.append(
                [
                    escape(category),
                    escape(metric.metric_id),
                    f"{metric.value:,}" if metric.value is not None else "none yet",
                    f"{rate:,.1f}" if rate is not None else "-",
                    str(metric.processes),
                ]
            )
    print_table(
        columns,
        rows,
        wide=wide,
        title="App metrics (over processes: sums, least minimum, greatest maximum)",
    )


def show_history(h: read.History, wide: bool) -> None:
    columns = [
        Column("minute"),
        Column("posted", 1, "right"),
        Column("processed", 1, "right"),
        Column("failed", 1, "right"),
    ]
    rows = [
        [m.minute.strftime("%H:%M"), f"{m.posted:,}", f"{m.processed:,}", f"{m.failed:,}"]
        for m in h.minutes
    ]
    title = f"Jobs per minute, last {len(h.minutes)} min (the last minute is partial)"
    print_table(columns, rows, wide=wide, title=title)


def show_schedules(s: catalog.Schedules, wide: bool) -> None:
    columns = [
        Column("type"),
        Column("schedule", flexible=True, min_width=30),
        Column("next run", 1, "right"),
        Column("last posted", 3, "right"),
        Column("last job", 2),
        Column("job id", 6),
        Column("waiting", 4, "right"),
        Column("missed", 5),
    ]
    cells = []
    styles: list[StyleType | None] = []
    for r in s.schedules:
        posted = r.last_posted_age_s
        cells.append(
            [
                escape(r.task_type),
                escape(r.schedule),
                r.next_run_text,
                f"{format_age(posted)} ago" if posted is not None else "-",
                r.last_job_text,
                str(r.last_task_id) if r.last_task_id else "-",
                ("≈" if r.waiting_estimated else "") + f"{r.waiting:,}",
                escape(r.missed),
            ]
        )
        late = r.paused or r.late_s is not None
        styles.append("red" if r.error else ("yellow" if late else None))
    print_table(columns, cells, wide=wide, title="Periodic task types", styles=styles)
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
