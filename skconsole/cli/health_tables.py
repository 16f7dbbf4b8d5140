"""How ``skconsole status health`` draws the queue tables' health: the tables, the xmin
horizon and what holds it, lock waits and their blockers, advice."""

from __future__ import annotations

from datetime import datetime

from rich.markup import escape

from skconsole.cli.output import out
from skconsole.cli.view_table import column, print_items
from skconsole.core.durations import format_age
from skconsole.core.text import printable
from skconsole.read import health
from skconsole.views import Column


def _plain(value: str | None) -> str:
    """Text from the database (an application name, a query), made safe for a table cell
    (which escapes it)."""
    return printable(value) if value else "-"


def _text(value: str | None) -> str:
    """:func:`_plain`, escaped for a line printed with markup."""
    return escape(_plain(value))


def _bytes(n: int) -> str:
    """A size as people read it: 8,192 B, 1.5 MB."""
    size = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1024:
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} TB"


_SESSION_COLUMNS: tuple[Column[health.Session], ...] = (
    column("pid", lambda s: str(s.pid), ident=True),
    column("user", lambda s: _plain(s.user), 5),
    column("application", lambda s: _plain(s.application), 2),
    column("client", lambda s: _plain(s.client), 7),
    column("state", lambda s: _plain(s.state), 1),
    column("in xact", lambda s: format_age(s.xact_age_s), 1, right=True),
    column(
        "xmin age",
        lambda s: f"{s.horizon_age:,}" if s.horizon_age is not None else "-",
        3,
        right=True,
    ),
    column("waits on", lambda s: _plain(s.wait_event), 6),
    column(
        "query",
        lambda s: _plain(s.query) if s.visible else "(hidden: needs pg_read_all_stats)",
        flex=True,
    ),
)


def _autovacuum(t: health.TableHealth) -> str:
    """When autovacuum picks the table, in words."""
    av = t.autovacuum
    if not av.enabled:
        return "off"
    return (
        f"after {av.vacuum_after(t.live_rows):,} dead"
        f" ({av.vacuum_threshold:,} + {av.vacuum_scale_factor:g} x rows)"
        + (" per table" if av.from_table else "")
    )


def _table_columns(now: datetime) -> tuple[Column[health.TableHealth], ...]:
    """The queue tables' columns, ages counted back from ``now`` (when they were read)."""

    def ago(t: datetime | None) -> str:
        return f"{format_age((now - t).total_seconds())} ago" if t is not None else "never"

    def analyzed(t: health.TableHealth) -> str:
        times = [x for x in (t.last_analyze, t.last_autoanalyze) if x is not None]
        return ago(max(times) if times else None)

    def vacuum_now(t: health.TableHealth) -> str:
        return _plain(f"{t.vacuum_running}: {t.vacuum_phase or '?'}" if t.vacuum_running else None)

    return (
        column("table", lambda t: t.table, ident=True),
        column("live", lambda t: f"{t.live_rows:,}", 1, right=True),
        column("dead", lambda t: f"{t.dead_rows:,}", right=True),
        column("dead %", lambda t: f"{t.dead_share:.0%}", right=True),
        column("size", lambda t: _bytes(t.table_bytes), 2, right=True),
        column("indexes", lambda t: _bytes(t.index_bytes), 3, right=True),
        column("bloat (est.)", lambda t: "≈" + _bytes(t.bloat_bytes_estimate), 4, right=True),
        column("last vacuum", lambda t: ago(t.last_vacuumed), 5, right=True),
        column("last analyze", analyzed, 7, right=True),
        column("vacuum now", vacuum_now, 6),
        column("autovacuum", _autovacuum, 8, flex=True, min_width=12),
    )


_LOCK_WAIT_COLUMNS: tuple[Column[health.LockWait], ...] = (
    column("pid", lambda w: str(w.pid), ident=True),
    column("application", lambda w: _plain(w.application), 3),
    column("table", lambda w: w.table, 1),
    column("mode", lambda w: f"{w.mode} ({w.lock_type})", 2),
    column("waiting", lambda w: format_age(w.waited_s), right=True),
    column("blocked by", lambda w: ", ".join(str(p) for p in w.blocked_by) or "-"),
    column("query", lambda w: _plain(w.query), flex=True),
)


def _sessions_table(sessions: list[health.Session], wide: bool, title: str) -> None:
    print_items(_SESSION_COLUMNS, sessions, wide=wide, title=title)


def show_health(h: health.Health, wide: bool) -> None:
    """The health view: each part only when there is something to say."""
    print_items(
        _table_columns(h.taken_at),
        h.tables,
        wide=wide,
        title="Queue tables (rows from statistics; bloat: dead share x size, an estimate)",
        style=lambda t: "yellow" if not t.autovacuum.enabled else None,
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
        title = "Lock waits on the queue tables"
        print_items(_LOCK_WAIT_COLUMNS, h.lock_waits, wide=wide, title=title)
        _sessions_table(h.blockers, wide, "Blocking sessions")
    r = h.replication
    timeline = f" (timeline {r.timeline})" if r.timeline is not None else ""
    out.print(f"replication{timeline}: {_text(r.says())}", highlight=False)
    note = r.failover_note()
    if note is not None:
        colour = "yellow" if r.failover_pending else "default"
        out.print(f"[{colour}]{_text(note)}[/{colour}]", highlight=False)
    for a in h.advice:
        out.print(f"[yellow]advice:[/yellow] {_text(a.text)}", highlight=False)
    for note in h.hidden:
        out.print(f"hidden: {_text(note)}", highlight=False)
