"""The always-visible status line: is what I see live, and can I write?

Stale data must never look fresh, so the data age is always shown and turns
amber, then red, as it grows; the connection state says "reconnecting" with
the attempt count; PAUSED and READ-ONLY/WRITE are badges. Colours come from
the classes set here and the .tcss file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Label

from skconsole.tui.formatting import fmt_age_s, fmt_seconds


@dataclass(frozen=True)
class StatusState:
    server: str
    connection: str  # connecting, live, reconnecting, error, setup
    attempt: int
    error: str | None
    age_s: float | None  # since the last good snapshot
    interval_s: float
    paused: bool
    read_only: bool
    engine: str | None  # None: no embedded engine
    engine_state: str | None
    #: Stakhanovise.NET's tables alone (read degraded: no workers, audit, schedules, ...)
    degraded: bool = False

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
        return "● live"
    if state.connection == "connecting":
        return "◌ connecting"
    if state.connection == "setup":
        return "◌ schema missing"
    if state.connection == "reconnecting":
        return f"⟳ reconnecting · attempt {state.attempt}"
    return f"✖ {state.error or 'error'} · attempt {state.attempt}"


class StatusBar(Horizontal):
    """One line at the top of every screen; ``state`` tells it what to show (and is asked
    again every second, so the data age keeps counting)."""

    def __init__(self, state: Callable[[], StatusState]) -> None:
        super().__init__()
        self._state = state

    def compose(self) -> ComposeResult:
        yield Label(" skconsole ", id="sb-brand")
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

    def _tick(self) -> None:
        self.show(self._state())

    def show(self, state: StatusState) -> None:
        self.query_one("#sb-server", Label).update(Content(state.server))
        conn = self.query_one("#sb-conn", Label)
        conn.update(Content(connection_text(state)))
        conn.set_classes(f"-{state.connection}")
        age = self.query_one("#sb-age", Label)
        age.update(
            "no data yet" if state.age_s is None else f"updated {fmt_age_s(state.age_s)} ago"
        )
        age.set_classes(f"-{state.staleness}")
        self.query_one("#sb-interval", Label).update(f"every {fmt_seconds(state.interval_s)}")
        self.query_one("#sb-paused", Label).display = state.paused
        mode = self.query_one("#sb-mode", Label)
        text = " READ-ONLY " if state.read_only else " WRITE "
        mode.update(text + ("· STAKHANOVISE TABLES ONLY " if state.degraded else ""))
        mode.set_classes("-read-only" if state.read_only else "-write")
        engine = self.query_one("#sb-engine", Label)
        engine.display = state.engine is not None
        engine.update(Content(f"engine {state.engine}" if state.engine else ""))
        engine.set_classes(f"-{state.engine_state or 'none'}")
