"""Panel 9: the queue tables' health: dead rows and vacuum, who holds the xmin horizon,
who waits for a lock and who blocks them, and the advice that follows.

A delete-heavy queue slows down when vacuum cannot keep up, most often because
one forgotten transaction pins the dead rows (see :mod:`skconsole.read.health`). This
panel puts the symptom (a table mostly dead) beside its cause (the session
holding the horizon, with its pid, application and query) and the key that ends
it: V vacuums the selected table, K cancels the selected session's statement.

Its data is read on a slower cadence of its own (``HEALTH_EVERY_S`` in
:mod:`skconsole.tui.app`), so the title says how old it is. Everything a session
reports about itself (user, application, query) is text from elsewhere: the
tables show it printable, the advice and the notes as ``Content`` (never markup).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Static

from skconsole.core.text import printable
from skconsole.read.health import HORIZON_WARN_S, Advice, Health, LockWait, Session, TableHealth
from skconsole.read.replication import Replication
from skconsole.tui.formatting import fmt_age_s, fmt_ago, fmt_bytes, fmt_int, format_age
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.keyed_table import KeyedTable
from skconsole.tui.widgets.panel import Panel
from skconsole.views.table import Cell, Column, figure_column

T = TypeVar("T")

HIDDEN = "hidden"
#: advice rules about the horizon or a lock: something blocks the queue now
_BAD_RULES = frozenset({"horizon_session", "horizon_prepared", "horizon_slot", "lock_wait"})


@dataclass(frozen=True)
class SessionRow:
    """A session of the sessions list with what it does to the queue: whether it is the
    horizon's oldest holder, and the pids of the lock waits it blocks."""

    session: Session
    holds_horizon: bool
    blocks: tuple[int, ...]


def _text(value: str | None, visible: bool = True) -> Cell:
    if value is None:
        return ("hidden", "muted") if not visible else ("-", "muted")
    return value


def _state(s: Session) -> Cell:
    """ "idle in xact" (in colour: it holds a snapshot and runs nothing), "active"."""
    if s.state is None:
        return _text(None, s.visible)
    if s.state.startswith("idle in transaction"):
        return (s.state.replace("transaction", "xact"), "warn")
    return s.state


def _role(r: SessionRow) -> Cell:
    if r.blocks:
        return ("blocks " + ", ".join(str(p) for p in r.blocks), "bad")
    if r.holds_horizon:
        return ("holds horizon", "bad")
    return ("snapshot", "muted")


def _dead(t: TableHealth) -> Cell:
    share = f"{t.dead_share:.0%}"
    return (share, "warn") if t.dead_share >= 0.2 and t.dead_rows >= 1_000 else share


def _last_vacuum(t: TableHealth, now: float) -> Cell:
    last = t.last_vacuumed
    return ("never", "muted") if last is None else fmt_ago(last, now, suffix=False)


def _vacuum_now(t: TableHealth) -> Cell:
    if t.vacuum_running is None:
        return "-" if t.autovacuum.enabled else ("autovacuum off", "warn")
    who = "auto" if t.vacuum_running == "autovacuum" else t.vacuum_running
    return (f"{who}: {t.vacuum_phase}" if t.vacuum_phase else who, "accent")


def _blocked_by(w: LockWait) -> Cell:
    return (", ".join(str(p) for p in w.blocked_by) or "-", "bad" if w.blocked_by else "")


def replication_text(r: Replication) -> str:
    """ "replication (timeline 2): asynchronous replication to 1 standby: ...", then the last
    failover if there was one."""
    timeline = f" (timeline {r.timeline})" if r.timeline is not None else ""
    said = f"replication{timeline}: {r.brief()}"
    note = r.failover_note()
    if note is not None:
        said += f"\n{note}"
    return said


def advice_class(advice: Advice) -> str:
    """The tone of an advice line: something holds the queue back now (bad), or a table
    needs vacuum or autovacuum is off (warn)."""
    return "-bad" if advice.rule in _BAD_RULES else "-warn"


class HealthPanel(Panel):
    scope = "health"
    title = "Queue health"
    short_title = "Health"
    COLUMNS: ClassVar[tuple[Column[TableHealth], ...]] = (
        Column("table", "table", 30, cell=lambda t, _: t.table),
        figure_column("live", 9, lambda t, _: fmt_int(t.live_rows)),
        figure_column("dead", 9, lambda t, _: fmt_int(t.dead_rows)),
        figure_column("share", 5, lambda t, _: _dead(t), label="dead%"),
        figure_column("size", 7, lambda t, _: fmt_bytes(t.table_bytes)),
        figure_column("bloat", 7, lambda t, _: fmt_bytes(t.bloat_bytes_estimate), label="≈bloat"),
        figure_column("vacuumed", 9, _last_vacuum),
        Column("now", "vacuum now", 12, flex=True, cell=lambda t, _: _vacuum_now(t)),
    )
    SESSION_COLUMNS: ClassVar[tuple[Column[SessionRow], ...]] = (
        figure_column("pid", 7, lambda r, _: str(r.session.pid)),
        Column("user", "user", 10, cell=lambda r, _: _text(r.session.user)),
        Column("application", "application", 12, cell=lambda r, _: _text(r.session.application)),
        Column("state", "state", 12, cell=lambda r, _: _state(r.session)),
        figure_column(
            "age",
            8,
            lambda r, _: _text(
                None if r.session.xact_age_s is None else format_age(r.session.xact_age_s),
                r.session.visible,
            ),
            label="xact age",
        ),
        figure_column(
            "horizon", 10, lambda r, _: fmt_int(r.session.horizon_age), label="xacts back"
        ),
        Column("role", "holds", 13, cell=lambda r, _: _role(r)),
        Column(
            "query",
            "query",
            16,
            flex=True,
            cell=lambda r, _: _text(r.session.query, r.session.visible),
        ),
    )
    WAIT_COLUMNS: ClassVar[tuple[Column[LockWait], ...]] = (
        figure_column("pid", 7, lambda w, _: str(w.pid), label="waits"),
        Column("application", "application", 16, cell=lambda w, _: _text(w.application)),
        figure_column(
            "waited",
            7,
            lambda w, _: "-" if w.waited_s is None else (format_age(w.waited_s), "warn"),
            label="for",
        ),
        Column("table", "table", 17, cell=lambda w, _: w.table),
        Column("lock", "lock", 23, cell=lambda w, _: f"{w.mode} {w.lock_type}"),
        Column("blocked_by", "blocked by", 10, cell=lambda w, _: _blocked_by(w)),
        Column("query", "query", 12, flex=True, cell=lambda w, _: _text(w.query)),
    )

    def __init__(self, *, number: int | None = None, id: str | None = None) -> None:
        super().__init__(number=number, id=id)
        self._advice_shown: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter tables (esc clears)", classes="panel-filter")
        with VerticalScroll(id="health-body"):
            yield Vertical(id="health-advice")
            yield KeyedTable(self.COLUMNS, id=f"table-{self.scope}")
            yield Static(id="health-horizon")
            yield Static(id="health-replication")
            yield KeyedTable(self.SESSION_COLUMNS, id="health-sessions")
            yield KeyedTable(self.WAIT_COLUMNS, id="health-waits")
            yield Static(id="health-hidden")

    @property
    def table(self) -> KeyedTable:
        """The hot tables (what the filter and V act on)."""
        return self.query_one(f"#table-{self.scope}", KeyedTable)

    @property
    def sessions(self) -> KeyedTable:
        """The sessions that hold the horizon or block a lock wait (what K acts on)."""
        return self.query_one("#health-sessions", KeyedTable)

    @property
    def waits(self) -> KeyedTable:
        return self.query_one("#health-waits", KeyedTable)

    # -- data ------------------------------------------------------------------------
    def items(self, snapshot: Snapshot) -> Sequence[TableHealth]:
        return snapshot.health.health.tables if snapshot.health is not None else ()

    def row_key(self, item: TableHealth) -> str:
        return item.table

    def rows(self, snapshot: Snapshot) -> list[tuple[str, tuple[Cell, ...]]]:
        """Ages count from the server's clock at the read (``taken_at`` of the model)."""
        if snapshot.health is None:
            return []
        h = snapshot.health.health
        return self.rows_of(h.tables, h.taken_at.timestamp())

    def has_data(self, snapshot: Snapshot) -> bool:
        return snapshot.health is not None

    def tab_note(self, snapshot: Snapshot) -> str | None:
        """ "⚠ 2h" (the horizon's age, coarse: the tab bar is narrow) while a transaction
        holds it this long, "⚠ 2" (advice lines) for any other trouble, nothing when all
        is well."""
        if snapshot.health is None:
            return None
        h = snapshot.health.health
        age_s = h.horizon.age_s
        if age_s is not None and age_s >= HORIZON_WARN_S:
            return f"⚠ {format_age(age_s).split()[0]}"
        return f"⚠ {len(h.advice)}" if h.advice else ""

    def alarm(self, snapshot: Snapshot) -> bool:
        return snapshot.health is not None and bool(snapshot.health.health.advice)

    def summarize(self, snapshot: Snapshot) -> str:
        read = snapshot.health
        if read is None:
            return "reading…"
        h = read.health
        parts = [f"{len(h.advice)} advice" if h.advice else "no advice"]
        if h.lock_waits:
            n = len(h.lock_waits)
            parts.append(f"{n} lock wait{'' if n == 1 else 's'}")
        parts.append(f"as of {fmt_age_s(max(snapshot.taken_at - read.taken_at, 0.0))} ago")
        return " · ".join(parts)

    def show_snapshot(self, snapshot: Snapshot) -> None:
        super().show_snapshot(snapshot)
        read = snapshot.health
        if read is None:
            return
        h = read.health
        self._show_advice(h.advice)
        self.query_one("#health-horizon", Static).update(Content(horizon_text(h)))
        self.query_one("#health-replication", Static).update(
            Content(printable(replication_text(h.replication)))
        )
        now = h.taken_at.timestamp()
        self.sessions.set_rows(
            _rows(self.SESSION_COLUMNS, session_rows(h), lambda r: str(r.session.pid), now)
        )
        self.waits.set_rows(_rows(self.WAIT_COLUMNS, h.lock_waits, lambda w: str(w.pid), now))
        self.waits.display = bool(h.lock_waits)
        hidden = self.query_one("#health-hidden", Static)
        hidden.update(Content(printable(f"{HIDDEN}: " + "; ".join(h.hidden))))
        hidden.display = bool(h.hidden)

    def _show_advice(self, advice: Sequence[Advice]) -> None:
        """One line per advice, coloured by its tone; rebuilt only when the advice changed."""
        box = self.query_one("#health-advice", Vertical)
        wanted = [(printable(a.text), advice_class(a)) for a in advice]
        if wanted == self._advice_shown:
            return
        self._advice_shown = wanted
        box.remove_children()
        box.mount_all(Static(Content(text), classes=f"advice {tone}") for text, tone in wanted)
        box.display = bool(wanted)

    # -- selection ---------------------------------------------------------------------
    def selected_table(self, snapshot: Snapshot | None) -> TableHealth | None:
        """The table under the cursor of the tables list."""
        key = self.table.selected_key
        if snapshot is None or snapshot.health is None or key is None:
            return None
        return next((t for t in snapshot.health.health.tables if t.table == key), None)

    def selected_session(self, snapshot: Snapshot | None) -> Session | None:
        """The session under the cursor of the sessions list; with the lock waits focused,
        the first session blocking the selected wait."""
        if snapshot is None or snapshot.health is None:
            return None
        h = snapshot.health.health
        pid: int | None = None
        if self.waits.has_focus:
            wait = next((w for w in h.lock_waits if str(w.pid) == self.waits.selected_key), None)
            pid = wait.blocked_by[0] if wait is not None and wait.blocked_by else None
        elif self.sessions.selected_key is not None:
            pid = int(self.sessions.selected_key)
        return next((r.session for r in session_rows(h) if r.session.pid == pid), None)


def _rows(
    columns: Sequence[Column[T]], items: Sequence[T], key: Callable[[T], str], now: float
) -> list[tuple[str, tuple[Cell, ...]]]:
    """Rows of the lists beside the tables' (keyed by pid)."""
    return [(key(i), tuple(c.cell(i, now) for c in columns)) for i in items]


def session_rows(h: Health) -> list[SessionRow]:
    """The horizon's sessions (oldest first), then the lock waits' blockers not among them."""
    blocks: dict[int, list[int]] = {}
    for w in h.lock_waits:
        for pid in w.blocked_by:
            blocks.setdefault(pid, []).append(w.pid)
    listed = {s.pid for s in h.horizon.sessions}
    sessions = [*h.horizon.sessions, *(b for b in h.blockers if b.pid not in listed)]
    return [
        SessionRow(
            s,
            s.horizon_age is not None and s.horizon_age == h.horizon.age,
            tuple(blocks.get(s.pid, ())),
        )
        for s in sessions
    ]


def horizon_text(h: Health) -> str:
    """ "xmin horizon: 1,843,211 transactions back, held 2h 03m by pid 4242, psql"."""
    hz = h.horizon
    if hz.age is None:
        return "xmin horizon: not held back (no open snapshot, slot or prepared transaction)"
    held = f" {format_age(hz.age_s)}" if hz.age_s is not None else ""
    extra = []
    if hz.slots:
        extra.append(f"{len(hz.slots)} replication slot(s)")
    if hz.prepared:
        extra.append(f"{len(hz.prepared)} prepared transaction(s)")
    tail = f" · also {', '.join(extra)}" if extra else ""
    return printable(f"xmin horizon: {hz.age:,} transactions back, held{held} by {hz.holder}{tail}")
