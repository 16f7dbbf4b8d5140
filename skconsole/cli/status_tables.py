"""How ``skconsole status`` draws each view that is more than one table (the overview,
depth with its limits, flow, failures, execution times, metrics, history,
schedules, health). A view that is one table (inflight, workers) is drawn from
its own columns (:mod:`skconsole.cli.view_table`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.markup import escape
from rich.style import StyleType

from skconsole import read
from skconsole.cli.health_tables import show_health
from skconsole.cli.output import Column as TextColumn
from skconsole.cli.output import out, print_table
from skconsole.cli.view_table import print_items
from skconsole.core.durations import format_age
from skconsole.core.status import JobStatus
from skconsole.views import failures
from skconsole.views import workers as workers_view


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


def show_failures(f: failures.Failures, wide: bool) -> None:
    if f.jobs is not None:
        title = f"{f.jobs.total:,} failed job(s) in {escape(f.jobs.signature)}"
        print_items(failures.JOB_COLUMNS, f.jobs.jobs, wide=wide, title=title)
        return
    title = "Failure groups (4 Error, 5 Faulted, 6 Fatal)"
    print_items(failures.GROUP_COLUMNS, f.groups, wide=wide, title=title)
    if f.groups:
        out.print("drill into a group: skconsole status failures --group ID", highlight=False)


#: how each view that is not one table is drawn, by name (a unit test checks every
#: view is drawn one way or the other)
SHOW: dict[str, Callable[[Any, bool], None]] = {
    "overview": show_overview,
    "depth": lambda d, wide: show_depth(d.depth, d.limits, wide),
    "failures": show_failures,
    "health": show_health,
}
