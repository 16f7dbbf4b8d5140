"""``skconsole status [VIEW]``: the read models as tables for people and JSON for scripts.

Without a view: the overview (depth, jobs per status, workers), whose JSON
shape is stable. Views: depth, flow, inflight, failures, stats, metrics, workers,
history, schedules, health. Estimated figures are labelled as such. Tables fit the terminal
(``--wide``: every column at full width).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Annotated, Any

import psycopg
import typer
from rich.markup import escape
from rich.style import StyleType

from skconsole.cli.app import app
from skconsole.cli.options import (
    MAX_LIST_ROWS,
    MAX_SAMPLE_S,
    GroupOpt,
    JsonOpt,
    LimitOpt,
    WideOpt,
    check_range,
    check_text,
    options_of,
)
from skconsole.cli.output import Column, err, out, print_table
from skconsole.core.durations import format_age, format_limit, parse_duration
from skconsole.core.errors import ConfigError
from skconsole.core.status import JobStatus
from skconsole.core.text import printable, quoted
from skconsole.db.layout import DEGRADED_NOTES, has_skconsole_objects
from skconsole.read import flow, health, stats
from skconsole.read.stats import overview

Conn = psycopg.Connection[Any]
VIEWS = (
    "depth",
    "flow",
    "inflight",
    "failures",
    "stats",
    "metrics",
    "workers",
    "history",
    "schedules",
    "health",
)
#: history --minutes: at most one day back
MAX_MINUTES = 1440
#: flow --window: the rates' sliding window, 10 s to one day
WINDOW_BOUNDS_S = (10.0, 86_400.0)


def _ms(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 10 else f"{value:,.1f}"


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


# -- overview ------------------------------------------------------------------------
def _show_overview(doc: dict[str, Any], wide: bool) -> None:
    estimated = doc.get("estimated", {})
    _show_depth(doc["depth"], wide)
    title = "Jobs by status"
    if estimated.get("statuses"):
        title += f" (estimated: {', '.join(estimated['statuses'])})"
    counts = [doc["statuses"].get(s.label, 0) for s in JobStatus]
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
    _show_workers(doc["workers"], wide)


def _show_depth(depth: dict[str, Any], wide: bool) -> None:
    title = "Queue depth" + (
        " (ready and scheduled estimated from a sample)" if depth.get("estimated") else ""
    )
    paused = any(row["paused"] for row in depth["types"])
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
            escape(row["task_type"]),
            f"{row['ready']:,}",
            f"{row['scheduled']:,}",
            f"{row['in_flight']:,}",
            format_age(row["oldest_ready_s"]),
            "yes" if row["paused"] else "",
        ]
        for row in depth["types"]
    ]
    tot = depth["totals"]
    rows.append(
        [
            "total",
            f"{tot['ready']:,}",
            f"{tot['scheduled']:,}",
            f"{tot['in_flight']:,}",
            format_age(tot["oldest_ready_s"]),
            "",
        ]
    )
    limits = {t["task_type"]: t for t in depth.get("limits", ())}
    if limits:  # the `depth` view: running/concurrency limit and rate limit
        columns.append(Column("limit", 2, "right"))
        for cells, row in zip(rows, [*depth["types"], None], strict=True):
            t = limits.get(row["task_type"]) if row else None
            cells.append(_limit_text(t) if t else "")
    styles: list[StyleType | None] = [None] * (len(rows) - 1)
    styles.append("bold")
    print_table(columns, rows, wide=wide, title=title, styles=styles)


def _limit_text(limit: dict[str, Any]) -> str:
    """ "2/5 · 10/min": running/concurrency limit, then the rate limit (as `limit` shows it)."""
    parts = [f"{limit['running']}/{limit['concurrency']}"] if limit["concurrency"] else []
    return " · ".join([*parts, *([limit["rate"]] if limit["rate"] else [])])


def _show_workers(workers: list[dict[str, Any]], wide: bool, *, started: bool = False) -> None:
    """The workers table; the ``workers`` view adds when each started."""
    columns = [
        Column("worker", key=True),
        Column("host", 4, flexible=True, min_width=12),
        Column("pid", 5),
        Column("state", 1),
        Column("heartbeat", 2),
        Column("concurrency", 6),
        Column("in flight", 3),
    ]
    if started:
        columns.insert(4, Column("started", 7))
    rows = []
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
        rows.append(cells)
    print_table(columns, rows, wide=wide, title="Workers")


# -- views ---------------------------------------------------------------------------
def _flow(conn: Conn, window_s: float, wide: bool) -> tuple[dict[str, Any], Callable[[], None]]:
    rows = flow.flow(conn, window_s)

    def show() -> None:
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
        title = f"Flow per type, rates over the last {format_age(window_s)}" + (
            " (ready estimated from a sample)" if estimated else ""
        )
        print_table(columns, cells, wide=wide, title=title, styles=styles)

    return {"window_s": window_s, "types": [r.as_dict() for r in rows]}, show


def _inflight(conn: Conn, limit: int, wide: bool) -> tuple[dict[str, Any], Callable[[], None]]:
    data = stats.inflight(conn, limit=limit)

    def show() -> None:
        title = f"In flight: {data.total:,} job(s), {data.hung:,} hung" + (
            f" (first {len(data.jobs)} shown)" if data.total > len(data.jobs) else ""
        )
        columns = [
            Column("job", key=True),
            Column("type", 1),
            Column("worker", 4),
            Column("attempt", 5),
            Column("started", 6),
            Column("running", 2),
            Column("heartbeat", 3),
            Column("state", flexible=True),
        ]
        rows = []
        styles: list[StyleType | None] = []
        for j in data.jobs:
            worker = (
                f"{j.worker_host} pid {j.worker_pid}"
                if j.worker_host
                else ("gone" if j.worker_id else "-")
            )
            rows.append(
                [
                    str(j.task_id),
                    escape(j.task_type),
                    escape(worker),
                    str(j.attempt),
                    _when(j.started_at),
                    format_age(j.running_s),
                    format_age(j.heartbeat_age_s),
                    escape(
                        f"{j.state}: {j.note}" if j.note and not j.hung else (j.note or j.state)
                    ),
                ]
            )
            styles.append("red" if j.hung else ("yellow" if j.state != "running" else None))
        print_table(columns, rows, wide=wide, title=title, styles=styles)

    return data.as_dict(), show


def _failures(
    conn: Conn, limit: int, group: str | None, wide: bool
) -> tuple[dict[str, Any], Callable[[], None]]:
    if group is not None:
        groups = {g.id: g.signature for g in stats.failure_groups(conn, limit=10_000)}
        jobs = stats.failure_jobs(conn, groups.get(group, group), limit=limit)

        def show_jobs() -> None:
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

        return jobs.as_dict(), show_jobs

    groups_list = stats.failure_groups(conn, limit=limit)

    def show() -> None:
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
            for g in groups_list
        ]
        print_table(columns, rows, wide=wide, title="Failure groups (4 Error, 5 Faulted, 6 Fatal)")
        if groups_list:
            out.print("drill into a group: skconsole status failures --group ID", highlight=False)

    return {"groups": [g.as_dict() for g in groups_list]}, show


def _exec_stats(conn: Conn, wide: bool) -> tuple[dict[str, Any], Callable[[], None]]:
    rows = stats.execution_stats(conn)

    def show() -> None:
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
            for r in rows
        ]
        print_table(columns, cells, wide=wide, title="Execution time per type (ms)")
        out.print(
            f"percentiles: the last {stats.RECENT_LIMIT:,} processed jobs within "
            f"{format_age(stats.RECENT_WINDOW_S)} (column sample)",
            highlight=False,
        )

    return {"types": [r.as_dict() for r in rows]}, show


def _metrics(conn: Conn, sample_s: float, wide: bool) -> tuple[dict[str, Any], Callable[[], None]]:
    first = stats.metrics(conn, taken_at=time.monotonic())
    rates: dict[str, float | None] = {}
    if sample_s > 0:
        time.sleep(sample_s)
        second = stats.metrics(conn, taken_at=time.monotonic())
        rates = stats.metric_rates(first, second, second.taken_at - first.taken_at)
        first = second

    def show() -> None:
        columns = [
            Column("category", 3),
            Column("metric", key=True),
            Column("value", justify="right"),
            Column("per second", 1, "right"),
            Column("processes", 2, "right"),
        ]
        rows = []
        for category, ms in first.by_category().items():
            for m in ms:
                rate = rates.get(m.metric_id)
                rows.append(
                    [
                        escape(category),
                        escape(m.metric_id),
                        f"{m.value:,}" if m.value is not None else "none yet",
                        f"{rate:,.1f}" if rate is not None else "-",
                        str(m.processes),
                    ]
                )
        print_table(
            columns,
            rows,
            wide=wide,
            title="App metrics (over processes: sums, least minimum, greatest maximum)",
        )

    doc = first.as_dict(rates)
    doc["rate_window_s"] = sample_s if sample_s > 0 else None
    return doc, show


def _history(conn: Conn, minutes: int, wide: bool) -> tuple[dict[str, Any], Callable[[], None]]:
    h = stats.history(conn, minutes=minutes)

    def show() -> None:
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
        title = f"Jobs per minute, last {minutes} min (the last minute is partial)"
        print_table(columns, rows, wide=wide, title=title)

    return h.as_dict(), show


def _schedules(conn: Conn, wide: bool) -> tuple[dict[str, Any], Callable[[], None]]:
    rows = stats.schedules(conn)

    def show() -> None:
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
        for r in rows:
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
        for r in rows:
            if r.error:
                out.print(
                    f"[red]{escape(r.task_type)}: cannot read its schedule:[/red] {escape(r.error)}",
                    highlight=False,
                )

    return {"schedules": [r.as_dict() for r in rows]}, show


def _text(value: str | None) -> str:
    """Text from the database (an application name, a query), made safe for a table cell."""
    return escape(printable(value)) if value else "-"


def _bytes(n: int) -> str:
    """A size as people read it: 8,192 B, 1.5 MB."""
    size = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1024:
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} TB"


def _sessions_table(sessions: list[health.Session], wide: bool, title: str) -> None:
    columns = [
        Column("pid", key=True),
        Column("user", 5),
        Column("application", 2),
        Column("client", 7),
        Column("state", 1),
        Column("in xact", 1, "right"),
        Column("xmin age", 3, "right"),
        Column("waits on", 6),
        Column("query", flexible=True),
    ]
    rows = [
        [
            str(s.pid),
            _text(s.user),
            _text(s.application),
            _text(s.client),
            _text(s.state),
            format_age(s.xact_age_s),
            f"{s.horizon_age:,}" if s.horizon_age is not None else "-",
            _text(s.wait_event),
            _text(s.query) if s.visible else "(hidden: needs pg_read_all_stats)",
        ]
        for s in sessions
    ]
    print_table(columns, rows, wide=wide, title=title)


def _health(conn: Conn, wide: bool) -> tuple[dict[str, Any], Callable[[], None]]:
    h = health.health(conn)

    def show() -> None:
        columns = [
            Column("table", key=True),
            Column("live", 1, "right"),
            Column("dead", 0, "right"),
            Column("dead %", 0, "right"),
            Column("size", 2, "right"),
            Column("indexes", 3, "right"),
            Column("bloat (est.)", 4, "right"),
            Column("last vacuum", 5, "right"),
            Column("last analyze", 7, "right"),
            Column("vacuum now", 6),
            Column("autovacuum", 8, flexible=True, min_width=12),
        ]
        now = h.taken_at

        def ago(t: Any) -> str:
            return f"{format_age((now - t).total_seconds())} ago" if t is not None else "never"

        rows = []
        styles: list[StyleType | None] = []
        for t in h.tables:
            av = t.autovacuum
            analyzed = [x for x in (t.last_analyze, t.last_autoanalyze) if x is not None]
            rows.append(
                [
                    t.table,
                    f"{t.live_rows:,}",
                    f"{t.dead_rows:,}",
                    f"{t.dead_share:.0%}",
                    _bytes(t.table_bytes),
                    _bytes(t.index_bytes),
                    "≈" + _bytes(t.bloat_bytes_estimate),
                    ago(t.last_vacuumed),
                    ago(max(analyzed) if analyzed else None),
                    _text(
                        f"{t.vacuum_running}: {t.vacuum_phase or '?'}" if t.vacuum_running else None
                    ),
                    (
                        f"after {av.vacuum_after(t.live_rows):,} dead"
                        f" ({av.vacuum_threshold:,} + {av.vacuum_scale_factor:g} x rows)"
                        + (" per table" if av.from_table else "")
                        if av.enabled
                        else "off"
                    ),
                ]
            )
            styles.append("yellow" if not av.enabled else None)
        print_table(
            columns,
            rows,
            wide=wide,
            title="Queue tables (rows from statistics; bloat: dead share x size, an estimate)",
            styles=styles,
        )
        hz = h.horizon
        if hz.age is None:
            out.print("xmin horizon: nothing holds it back", highlight=False)
        else:
            held = f", {format_age(hz.age_s)}" if hz.age_s is not None else ""
            out.print(
                f"xmin horizon: {hz.age:,} transactions back{held}, held by {_text(hz.holder)}",
                highlight=False,
            )
        if hz.sessions:
            _sessions_table(hz.sessions, wide, "Open transactions (oldest first)")
        for slot in hz.slots:
            out.print(
                f"replication slot {_text(slot.name)} ({slot.slot_type},"
                f" {'active' if slot.active else 'inactive'}): xmin age"
                f" {slot.xmin_age if slot.xmin_age is not None else '-'}, catalog_xmin age"
                f" {slot.catalog_xmin_age if slot.catalog_xmin_age is not None else '-'}",
                highlight=False,
            )
        for p in hz.prepared:
            out.print(
                f"prepared transaction {_text(p.gid)} (owner {_text(p.owner)}):"
                f" {format_age(p.age_s)} old, {p.xid_age:,} transactions back",
                highlight=False,
            )
        if h.lock_waits:
            wait_columns = [
                Column("pid", key=True),
                Column("application", 3),
                Column("table", 1),
                Column("mode", 2),
                Column("waiting", 0, "right"),
                Column("blocked by", 0),
                Column("query", flexible=True),
            ]
            wait_rows = [
                [
                    str(w.pid),
                    _text(w.application),
                    w.table,
                    f"{w.mode} ({w.lock_type})",
                    format_age(w.waited_s),
                    ", ".join(str(p) for p in w.blocked_by) or "-",
                    _text(w.query),
                ]
                for w in h.lock_waits
            ]
            print_table(wait_columns, wait_rows, wide=wide, title="Lock waits on the queue tables")
            _sessions_table(h.blockers, wide, "Blocking sessions")
        for a in h.advice:
            out.print(f"[yellow]advice:[/yellow] {_text(a.text)}", highlight=False)
        for note in h.hidden:
            out.print(f"hidden: {_text(note)}", highlight=False)

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
    as_json: JsonOpt = False,
    limit: LimitOpt = 200,
    group: GroupOpt = None,
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
    window: Annotated[
        str,
        typer.Option("--window", help="flow: the rates' sliding window (10s to 1d)"),
    ] = format_limit(flow.WINDOW_S),
    wide: WideOpt = False,
) -> None:
    """Queue depth per type, counts per status, workers, oldest waiting job; or one VIEW.

    --limit: the rows of inflight and failures; --group: the jobs of one failure group;
    --window: the rates of flow.
    """
    if view is not None and view not in VIEWS:
        raise ConfigError(f"unknown view {quoted(view)}: choose one of {', '.join(VIEWS)}")
    check_range("--limit", limit, 1, MAX_LIST_ROWS)
    check_range("--minutes", minutes, 1, MAX_MINUTES)
    check_text("--group", group)
    sample_s = parse_duration(sample, option="--sample", maximum=MAX_SAMPLE_S)
    low, high = WINDOW_BOUNDS_S
    window_s = parse_duration(window, option="--window", minimum=low, maximum=high)
    db = options_of(ctx).open("skconsole-status", degraded_ok=True)
    with db.connect() as conn:
        if view is None:
            doc = overview(conn)
            show: Callable[[], None] = lambda: _show_overview(doc, wide)  # noqa: E731
        elif view == "depth":
            doc = {
                **stats.depth(conn).as_dict(),
                "limits": [t.as_dict() for t in stats.limits(conn)],
            }
            show = lambda: _show_depth(doc, wide)  # noqa: E731
        elif view == "flow":
            doc, show = _flow(conn, window_s, wide)
        elif view == "workers":
            doc = {"workers": [w.as_dict() for w in stats.workers(conn)]}
            show = lambda: _show_workers(doc["workers"], wide, started=True)  # noqa: E731
        elif view == "inflight":
            doc, show = _inflight(conn, limit, wide)
        elif view == "failures":
            doc, show = _failures(conn, limit, group, wide)
        elif view == "stats":
            doc, show = _exec_stats(conn, wide)
        elif view == "metrics":
            doc, show = _metrics(conn, sample_s, wide)
        elif view == "schedules":
            doc, show = _schedules(conn, wide)
        elif view == "health":
            doc, show = _health(conn, wide)
        else:
            doc, show = _history(conn, minutes, wide)
        degraded = not has_skconsole_objects(conn)
    if degraded:  # Stakhanovise.NET's tables alone: say what the views leave out
        doc = {**doc, "degraded": list(DEGRADED_NOTES)}
        if not as_json:
            err.print(escape(" ".join(DEGRADED_NOTES)), style="yellow", highlight=False)
    if as_json:
        # ensure_ascii: rich re-encodes the document, and would otherwise write C1 and
        # bidi controls (which json leaves alone) raw
        out.print_json(json.dumps(doc, default=str), ensure_ascii=True)
        return
    show()
