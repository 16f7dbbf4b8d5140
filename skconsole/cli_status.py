"""``skconsole status [VIEW]``: the read models as tables for people and JSON for scripts.

Without a view: the overview (depth, jobs per status, workers), whose JSON
shape is stable. Views: depth, inflight, failures, stats, metrics, workers,
history. Estimated figures are labelled as such.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Annotated, Any

import psycopg
import typer
from rich.markup import escape
from rich.table import Table

from skconsole import stats
from skconsole.cli import MAX_LIST_ROWS, MAX_SAMPLE_S, _opts, app, check_range, check_text, out
from skconsole.durations import format_age, parse_duration
from skconsole.errors import ConfigError
from skconsole.stats import overview
from skconsole.status import JobStatus
from skconsole.text import quoted

Conn = psycopg.Connection[Any]
VIEWS = ("depth", "inflight", "failures", "stats", "metrics", "workers", "history")
#: history --minutes: at most one day back
MAX_MINUTES = 1440


def _ms(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 10 else f"{value:,.1f}"


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


# -- overview ------------------------------------------------------------------------
def _show_overview(doc: dict[str, Any]) -> None:
    estimated = doc.get("estimated", {})
    _show_depth(doc["depth"])
    title = "Jobs by status"
    if estimated.get("statuses"):
        title += f" (estimated: {', '.join(estimated['statuses'])})"
    s = Table(title=title, title_justify="left")
    for name in (s.label for s in JobStatus):
        s.add_column(name, justify="right")
    s.add_row(*(f"{doc['statuses'].get(n, 0):,}" for n in (s.label for s in JobStatus)))
    out.print(s)
    _show_workers(doc["workers"])


def _show_depth(depth: dict[str, Any]) -> None:
    title = "Queue depth" + (
        " (ready and scheduled estimated from a sample)" if depth.get("estimated") else ""
    )
    t = Table(title=title, title_justify="left")
    for col in ("type", "ready", "scheduled", "in flight", "oldest ready", "paused"):
        t.add_column(col, justify="left" if col == "type" else "right")
    for row in depth["types"]:
        t.add_row(
            escape(row["task_type"]),
            f"{row['ready']:,}",
            f"{row['scheduled']:,}",
            f"{row['in_flight']:,}",
            format_age(row["oldest_ready_s"]),
            "yes" if row["paused"] else "",
        )
    tot = depth["totals"]
    t.add_row(
        "total",
        f"{tot['ready']:,}",
        f"{tot['scheduled']:,}",
        f"{tot['in_flight']:,}",
        format_age(tot["oldest_ready_s"]),
        "",
        style="bold",
    )
    out.print(t)


def _show_workers(workers: list[dict[str, Any]], *, started: bool = False) -> None:
    """The workers table; the ``workers`` view adds when each started."""
    w = Table(title="Workers", title_justify="left")
    cols = ["worker", "host", "pid", "state", "heartbeat", "concurrency", "in flight"]
    if started:
        cols.insert(4, "started")
    for col in cols:
        w.add_column(col)
    for wk in workers:
        cells = [
            wk["worker_id"][:8],
            escape(wk["host"]),
            str(wk["pid"]),
            wk["state"],
            format_age(wk["heartbeat_age_s"]),
            str(wk["concurrency"]),
            str(wk["in_flight"]),
        ]
        if started:
            cells.insert(4, wk["started_at"][:19].replace("T", " "))
        w.add_row(*cells)
    out.print(w)


# -- views ---------------------------------------------------------------------------
def _inflight(conn: Conn, limit: int) -> tuple[dict[str, Any], Callable[[], None]]:
    data = stats.inflight(conn, limit=limit)

    def show() -> None:
        t = Table(
            title=f"In flight: {data.total:,} job(s), {data.hung:,} hung"
            + (f" (first {len(data.jobs)} shown)" if data.total > len(data.jobs) else ""),
            title_justify="left",
        )
        for col in ("job", "type", "worker", "attempt", "started", "running", "heartbeat", "state"):
            t.add_column(col)
        for j in data.jobs:
            worker = (
                f"{j.worker_host} pid {j.worker_pid}"
                if j.worker_host
                else ("gone" if j.worker_id else "-")
            )
            t.add_row(
                str(j.task_id),
                escape(j.task_type),
                escape(worker),
                str(j.attempt),
                _when(j.started_at),
                format_age(j.running_s),
                format_age(j.heartbeat_age_s),
                escape(f"{j.state}: {j.note}" if j.note and not j.hung else (j.note or j.state)),
                style="red" if j.hung else ("yellow" if j.state != "running" else None),
            )
        out.print(t)

    return data.as_dict(), show


def _failures(
    conn: Conn, limit: int, group: str | None
) -> tuple[dict[str, Any], Callable[[], None]]:
    if group is not None:
        groups = {g.id: g.signature for g in stats.failure_groups(conn, limit=10_000)}
        jobs = stats.failure_jobs(conn, groups.get(group, group), limit=limit)

        def show_jobs() -> None:
            t = Table(
                title=f"{jobs.total:,} failed job(s) in {escape(jobs.signature)}",
                title_justify="left",
            )
            for col in ("job", "type", "status", "errors", "priority", "failed at", "error"):
                t.add_column(col)
            for j in jobs.jobs:
                t.add_row(
                    str(j.task_id),
                    escape(j.task_type),
                    JobStatus.label_of(j.status),
                    str(j.error_count),
                    str(j.priority),
                    _when(j.failed_at),
                    escape(j.error_line[:120]),
                )
            out.print(t)

        return jobs.as_dict(), show_jobs

    groups_list = stats.failure_groups(conn, limit=limit)

    def show() -> None:
        t = Table(title="Failure groups (4 Error, 5 Faulted, 6 Fatal)", title_justify="left")
        for col in ("id", "jobs", "statuses", "types", "first seen", "last seen", "signature"):
            t.add_column(col, justify="right" if col == "jobs" else "left")
        for g in groups_list:
            t.add_row(
                g.id,
                f"{g.count:,}",
                ", ".join(f"{JobStatus.label_of(s)} {n:,}" for s, n in g.statuses.items() if n),
                escape(", ".join(g.task_types[:3]) + (" ..." if len(g.task_types) > 3 else "")),
                _when(g.first_seen),
                _when(g.last_seen),
                escape(g.signature),
            )
        out.print(t)
        if groups_list:
            out.print("drill into a group: skconsole status failures --group ID", highlight=False)

    return {"groups": [g.as_dict() for g in groups_list]}, show


def _exec_stats(conn: Conn) -> tuple[dict[str, Any], Callable[[], None]]:
    rows = stats.execution_stats(conn)

    def show() -> None:
        t = Table(title="Execution time per type (ms)", title_justify="left")
        for col in (
            "type",
            "runs",
            "avg",
            "p50",
            "p95",
            "p99",
            "fastest",
            "longest",
            "last",
            "sample",
        ):
            t.add_column(col, justify="left" if col == "type" else "right")
        for r in rows:
            t.add_row(
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
            )
        out.print(t)
        out.print(
            f"percentiles: the last {stats.RECENT_LIMIT:,} processed jobs within "
            f"{format_age(stats.RECENT_WINDOW_S)} (column sample)",
            highlight=False,
        )

    return {"types": [r.as_dict() for r in rows]}, show


def _metrics(conn: Conn, sample_s: float) -> tuple[dict[str, Any], Callable[[], None]]:
    first = stats.metrics(conn, taken_at=time.monotonic())
    rates: dict[str, float | None] = {}
    if sample_s > 0:
        time.sleep(sample_s)
        second = stats.metrics(conn, taken_at=time.monotonic())
        rates = stats.metric_rates(first, second, second.taken_at - first.taken_at)
        first = second

    def show() -> None:
        t = Table(title="App metrics (summed over processes)", title_justify="left")
        for col in ("category", "metric", "value", "per second", "processes"):
            t.add_column(
                col, justify="right" if col in ("value", "per second", "processes") else "left"
            )
        for category, ms in first.by_category().items():
            for m in ms:
                rate = rates.get(m.metric_id)
                t.add_row(
                    escape(category),
                    escape(m.metric_id),
                    f"{m.value:,}",
                    f"{rate:,.1f}" if rate is not None else "-",
                    str(m.processes),
                )
        out.print(t)

    doc = first.as_dict(rates)
    doc["rate_window_s"] = sample_s if sample_s > 0 else None
    return doc, show


def _history(conn: Conn, minutes: int) -> tuple[dict[str, Any], Callable[[], None]]:
    h = stats.history(conn, minutes=minutes)

    def show() -> None:
        t = Table(
            title=f"Jobs per minute, last {minutes} min (the last minute is partial)",
            title_justify="left",
        )
        for col in ("minute", "posted", "processed", "failed"):
            t.add_column(col, justify="left" if col == "minute" else "right")
        for m in h.minutes:
            t.add_row(
                m.minute.strftime("%H:%M"), f"{m.posted:,}", f"{m.processed:,}", f"{m.failed:,}"
            )
        out.print(t)

    return h.as_dict(), show


@app.command()
def status(
    ctx: typer.Context,
    view: Annotated[
        str | None,
        typer.Argument(
            metavar="[VIEW]", help=f"One read model: {', '.join(VIEWS)}", show_default=False
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON document (shape in the README)")
    ] = False,
    limit: Annotated[
        int,
        typer.Option(
            "--limit",
            help=f"inflight, failures: at most this many rows (1 to {MAX_LIST_ROWS:,})",
        ),
    ] = 200,
    group: Annotated[
        str | None,
        typer.Option("--group", help="failures: the jobs of this group (id or signature)"),
    ] = None,
    minutes: Annotated[
        int, typer.Option("--minutes", help=f"history: minutes back (1 to {MAX_MINUTES:,})")
    ] = 60,
    sample: Annotated[
        str,
        typer.Option(
            "--sample",
            help="metrics: time between the two reads rates come from (0: none; at most 1h)",
        ),
    ] = "1s",
) -> None:
    """Queue depth per type, counts per status, workers, oldest waiting job; or one VIEW."""
    if view is not None and view not in VIEWS:
        raise ConfigError(f"unknown view {quoted(view)}: choose one of {', '.join(VIEWS)}")
    check_range("--limit", limit, 1, MAX_LIST_ROWS)
    check_range("--minutes", minutes, 1, MAX_MINUTES)
    check_text("--group", group)
    sample_s = parse_duration(sample, option="--sample", maximum=MAX_SAMPLE_S)
    db = _opts(ctx).open("skconsole-status")
    with db.connect() as conn:
        if view is None:
            doc = overview(conn)
            show: Callable[[], None] = lambda: _show_overview(doc)  # noqa: E731
        elif view == "depth":
            doc = stats.depth(conn).as_dict()
            show = lambda: _show_depth(doc)  # noqa: E731
        elif view == "workers":
            doc = {"workers": [w.as_dict() for w in stats.workers(conn)]}
            show = lambda: _show_workers(doc["workers"], started=True)  # noqa: E731
        elif view == "inflight":
            doc, show = _inflight(conn, limit)
        elif view == "failures":
            doc, show = _failures(conn, limit, group)
        elif view == "stats":
            doc, show = _exec_stats(conn)
        elif view == "metrics":
            doc, show = _metrics(conn, sample_s)
        else:
            doc, show = _history(conn, minutes)
    if as_json:
        # ensure_ascii: rich re-encodes the document, and would otherwise write C1 and
        # bidi controls (which json leaves alone) raw
        out.print_json(json.dumps(doc, default=str), ensure_ascii=True)
        return
    show()
