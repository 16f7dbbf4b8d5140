"""The always-visible status line: is what I see live, and can I write?

Stale data must never look fresh, so the data age is always shown and turns
amber, then red, as it grows; the connection state says "reconnecting" with
the attempt count; PAUSED and READ-ONLY/WRITE are badges. Colours come from
the classes set here and the .tcss file.

With several queues the line names the queue the panels show (a badge before the
server; on the overview, how many queues it lists), and the overview's connection
says how many of them answer ("◐ 2 of 3 connected").

While the refresh is paused nothing is read, so the line says PAUSED, never
"live". On a narrow terminal (80 columns) the line gives way by priority, whole
items at a time and never a counter cut in the middle: the refresh interval
goes first, then the engine's done counter, the word "updated", the brand, the
server's user name; the server itself always keeps a place, shortened last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Label

from skconsole.core.text import printable
from skconsole.read import Replication
from skconsole.tui.formatting import fmt_age_s, fmt_seconds

#: a failover this recent is named on the status line
FAILOVER_SHOWN_S = 86_400.0


def replication_text(r: Replication | None) -> str | None:
    """What the line says of the server's replication: on a standby, how old what it
    shows may be ("as of 1.2s ago on standby"); on a primary, a recent failover
    (:func:`failover_text`); else None."""
    if r is None:
        return None
    return r.standby_note() or failover_text(r)


def failover_text(r: Replication | None) -> str | None:
    """ "failover to timeline 2, no worker there yet"; "claims held 7s · failover to
    timeline 2" while held; "failover 21:13 UTC → timeline 2" for a day after; else None."""
    if r is None:
        return None
    if r.unseen_failover:
        return f"failover to timeline {r.timeline}, no worker there yet"
    last = r.last_failover
    if last is None:
        return None
    if last.held:
        return f"claims held {fmt_seconds(last.held_for_s)} · failover to timeline {last.timeline}"
    if last.age_s < FAILOVER_SHOWN_S:
        return f"failover {last.at:%H:%M} UTC → timeline {last.timeline}"
    return None


@dataclass(frozen=True)
class StatusState:
    server: str
    connection: str  # connecting, live, reconnecting, error, partial
    attempt: int
    error: str | None
    age_s: float | None  # since the last good snapshot
    interval_s: float
    paused: bool
    read_only: bool
    engine: str | None  # None: no embedded engine
    engine_state: str | None
    #: the engine without its done counter, for a narrow line ("running 3/8")
    engine_brief: str | None = None
    #: Stakhanovise.NET's tables alone (read degraded: no workers, audit, schedules, ...)
    degraded: bool = False
    #: several queues: the one shown (None: the console watches one queue)
    queue: str | None = None
    #: a standby's lag, a failover of the last day or claims held after one (None: none)
    replication: str | None = None
    #: the console reads a hot standby
    standby: bool = False
    #: a past minute shown (``--at``, ``--bundle``): "2026-12-06 02:47 UTC" (None: the present)
    past: str | None = None

    @property
    def staleness(self) -> str:
        """fresh, amber or red: amber past 3 intervals (10 s at least), red past 10 (30 s)."""
        if self.age_s is None:
            return "amber"
        if self.age_s > max(10 * self.interval_s, 30.0):
            return "red"
        if self.age_s > max(3 * self.interval_s, 10.0):
            return "amber"
        return "fresh"


def connection_text(state: StatusState) -> str:
    if state.connection == "live":
        return "● live" + (f" · {state.replication}" if state.replication else "")
    if state.connection == "connecting":
        return "◌ connecting"
    if state.connection == "reconnecting":
        return f"⟳ reconnecting · attempt {state.attempt}"
    if state.connection == "partial":  # several queues, some not answering
        return f"◐ {state.error or 'some not connected'}"
    return f"✖ {state.error or 'error'} · attempt {state.attempt}"


#: the least the server's name is cut to before other items give way
SERVER_MIN = 16
BRAND = " skconsole "


@dataclass(frozen=True)
class Line:
    """What each item of the line says; None: not shown."""

    brand: bool
    server: str
    conn: str | None
    age: str
    interval: str | None
    mode: str
    engine: str | None
    queue: str | None = None

    def width(self, paused: bool) -> int:
        """The cells every item but the server takes (each label has one cell of padding
        a side, the mode badge a margin instead)."""
        texts = [
            self.queue,
            self.conn,
            self.age,
            self.interval,
            self.engine,
            "PAUSED" if paused else None,
        ]
        cells = sum(cell_len(t) + 2 for t in texts if t)
        return cells + (cell_len(BRAND) if self.brand else 0) + cell_len(self.mode) + 2


def without_user(server: str) -> str:
    """ "db.example:5432/queue" for "ops@db.example:5432/queue"."""
    return server.rpartition("@")[2]


def fit_line(state: StatusState, width: int) -> Line:
    """The items shown in ``width`` cells: the full line, or the first of its shorter
    forms in which the server keeps :data:`SERVER_MIN` cells; one form further when
    that one shows the server whole."""
    age = "no data yet" if state.age_s is None else fmt_age_s(state.age_s)
    mode = " READ-ONLY " if state.read_only else " WRITE "
    if state.past is not None:
        mode = " PAST · READ-ONLY "
    elif state.read_only and state.standby:
        mode = " READ-ONLY · STANDBY "
    if state.degraded:
        mode += "· STAKHANOVISE TABLES ONLY "
    past = state.past
    line = Line(
        brand=True,
        server=state.server,
        conn=None
        if past is not None or (state.paused and state.connection == "live")
        else connection_text(state),
        age=f"◷ at {past}"
        if past is not None
        else age
        if state.age_s is None
        else f"updated {age} ago",
        interval=None if past is not None else f"every {fmt_seconds(state.interval_s)}",
        mode=mode,
        engine=f"engine {state.engine}" if state.engine else None,
        queue=printable(state.queue) if state.queue is not None else None,
    )
    brief = f"engine {state.engine_brief}" if state.engine_brief else line.engine
    forms = [
        line,
        line := replace_line(line, interval=None),
        line := replace_line(line, engine=brief),
        line := replace_line(
            line, age=line.age if past is not None or state.age_s is None else f"{age} ago"
        ),
        line := replace_line(line, brand=False),
        line := replace_line(line, server=without_user(state.server)),
    ]

    def room(form: Line) -> int:
        return width - form.width(state.paused) - 2  # the server's padding

    whole = next((f for f in forms if room(f) >= cell_len(f.server)), None)
    cut = next((f for f in forms if room(f) >= min(SERVER_MIN, cell_len(f.server))), forms[-1])
    return whole if whole is not None and forms.index(whole) <= forms.index(cut) + 1 else cut


def replace_line(line: Line, **changes: object) -> Line:
    return replace(line, **changes)  # type: ignore[arg-type]


class StatusBar(Horizontal):
    """One line at the top of every screen; ``state`` tells it what to show (and is asked
    again every second, so the data age keeps counting)."""

    def __init__(self, state: Callable[[], StatusState]) -> None:
        super().__init__()
        self._state = state
        self._shown: StatusState | None = None
        #: what each label shows now, by its id
        self._texts: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Label(BRAND, id="sb-brand")
        yield Label("", id="sb-queue")
        yield Label("", id="sb-server")
        yield Label("", id="sb-conn")
        yield Label("", id="sb-age")
        yield Label("", id="sb-interval")
        yield Label("PAUSED", id="sb-paused")
        yield Label("", id="sb-mode")
        yield Label("", id="sb-engine")

    def on_mount(self) -> None:
        self.show(self._state())
        self.set_interval(1.0, self._tick)

    def on_resize(self, _event: events.Resize) -> None:
        if self._shown is not None:
            self.show(self._shown)

    def _tick(self) -> None:
        self.show(self._state())

    def show_latest(self) -> None:
        """Show what its state says now (the App calls it when the state changed)."""
        self.show(self._state())

    def show(self, state: StatusState) -> None:
        self._shown = state
        line = fit_line(state, self.size.width or 1000)
        self.query_one("#sb-brand", Label).display = line.brand
        self._put("sb-queue", line.queue)
        self._put("sb-server", line.server)
        self._put("sb-conn", line.conn, f"-{state.connection}")
        self._put("sb-age", line.age, "-past" if state.past is not None else f"-{state.staleness}")
        self._put("sb-interval", line.interval)
        self.query_one("#sb-paused", Label).display = state.paused
        self._put("sb-mode", line.mode, "-read-only" if state.read_only else "-write")
        self._put("sb-engine", line.engine, f"-{state.engine_state or 'none'}")

    def _put(self, label_id: str, text: str | None, classes: str | None = None) -> None:
        """One label's text (None: hidden) and classes, changed only if they differ: this
        runs every second, and a label's update lays out the whole screen unless its width
        stays the same (which the console under ``skconsole serve`` felt as slow keys)."""
        label = self.query_one(f"#{label_id}", Label)
        shown = text is not None
        if label.display != shown:
            label.display = shown
        before = self._texts.get(label_id)
        now = text or ""
        if before != now:
            self._texts[label_id] = now
            label.update(Content(now), layout=before is None or cell_len(before) != cell_len(now))
        if classes is not None and not label.has_class(classes):
            label.set_classes(classes)
