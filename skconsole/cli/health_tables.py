"""How ``skconsole status health`` draws the queue tables' health: the tables, the xmin
horizon and what holds it, lock waits and their blockers, advice."""

from __future__ import annotations

from datetime import datetime

from rich.markup import escape
from rich.style import StyleType

from skconsole.cli.output import Column, out, print_table
from skconsole.core.durations import format_age
from skconsole.core.text import printable
from skconsole.read import health


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


def show_health(h: health.Health, wide: bool) -> None:
    """The health view: each part only when there is something to say."""
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

    def ago(t: datetime | None) -> str:
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
                _text(f"{t.vacuum_running}: {t.vacuum_phase or '?'}" if t.vacuum_running else None),
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
