"""Requeue, step 1 (key R): what becomes of the jobs' attempts, and when they are due.

The dialog states the jobs' error counts and their types' retry limit (read off the UI
thread by ``attempts``, the requeue's own preview) and what a requeue leaves them:
kept, each job has only the tries its count leaves it (a job requeued at 3 errors of
4 attempts runs once more, then is Faulted again); reset, it has them all. It offers
to reset the counts (off unless asked) and to spread the jobs' due times over a
while (empty: all due at once), so a partner that is recovering is not hit by all
of them at once, or to requeue them in canary waves (empty: all at once) behind a gate
(:mod:`skconsole.core.waves`: the first wave now, the workers the next ones while the
gate holds; the audit panel shows each wave and a stop). Enter returns :class:`skconsole.ops.RequeueParams` (the action
runner then previews, asks with the exact target, default No, and audits it); Esc
returns None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Checkbox, Input, Static

from skconsole.core.durations import parse_duration
from skconsole.core.errors import ConfigError
from skconsole.core.text import printable
from skconsole.core.waves import DEFAULT_GATE, parse_gate, parse_waves, percent
from skconsole.ops import RequeueParams
from skconsole.ops.requeue import MAX_SPREAD_S, Attempts, spread_text, waves_text
from skconsole.tui.off_thread import read_off_thread
from skconsole.tui.screens.input_dialog import InputDialog
from skconsole.tui.widgets.checkbox import MarkedCheckbox


def params_from(
    reset: bool, text_spread: str, text_waves: str = "", text_gate: str = ""
) -> RequeueParams:
    """The requeue the fields ask for (ConfigError for a spread that is not a duration,
    waves or a gate that are not percentages, as the command line's options say it)."""
    spread = text_spread.strip()
    seconds = parse_duration(spread, option="spread", maximum=MAX_SPREAD_S) if spread else None
    waves = parse_waves(text_waves, option="waves") if text_waves.strip() else None
    gate = parse_gate(text_gate, option="gate") if waves is not None and text_gate.strip() else None
    return RequeueParams(reset_errors=reset, spread_s=seconds or None, waves=waves, gate=gate)


def attempts_lines(attempts: Attempts | None) -> str:
    """The jobs' attempts as the dialog states them."""
    if attempts is None:
        return "Their error counts could not be read: the confirmation counts the jobs."
    lines = [
        f"Error counts now: {attempts.errors_text()} · retry limit of their type:"
        f" {attempts.limit_text()}."
    ]
    kept, reset = attempts.tries(False), attempts.tries(True)
    if kept is not None and reset is not None:
        lines.append(
            f"Kept, {kept} (a job that fails again is parked as Faulted); reset to 0, {reset}."
        )
    return "\n".join(lines)


class RequeueJobsScreen(InputDialog[RequeueParams]):
    """Returns the requeue's parameters, or None when cancelled."""

    ERROR_ID = "requeue-error"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False),
        # Enter previews from either field (on the checkbox, space toggles it)
        Binding("enter", "submit", "Preview", show=False, priority=True),
    ]

    def __init__(self, target: str, attempts: Callable[[], Attempts | None]) -> None:
        super().__init__()
        self.target = target
        self.read_attempts = attempts
        self.attempts: Attempts | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="requeue-jobs", classes="dialog"):
            yield Static(Content(printable(f"Requeue {self.target}")), classes="dialog-title")
            yield Static(Content("Reading the jobs' error counts…"), id="requeue-attempts")
            yield MarkedCheckbox(
                "Reset error counts to 0 (every try again)", False, id="requeue-reset"
            )
            yield Static(Content("Spread their due times over (e.g. 10m; empty: all at once):"))
            yield Input(placeholder="all at once", id="requeue-spread")
            yield Static(
                Content(
                    "Or in canary waves (e.g. 1%,10%,50%,100%; empty: all at once),"
                    " each next one while this share of the last succeeds:"
                )
            )
            with Horizontal(id="requeue-waves-row"):
                yield Input(placeholder="all at once", id="requeue-waves")
                yield Input(percent(DEFAULT_GATE), id="requeue-gate")
            yield Static("", id="requeue-effect")
            yield from self.error_and_hint(
                "Space toggles the reset · Enter previews (a confirmation shows the jobs"
                " first) · Tab next field · Esc cancels"
            )

    def on_mount(self) -> None:
        self.query_one("#requeue-reset", Checkbox).focus()
        self.show_effect()
        read_off_thread(  # the requeue's preview; if it fails, the counts are not known
            self,
            self.read_attempts,
            self._show_attempts,
            lambda _exc: self._show_attempts(None),
            group="requeue-attempts",
        )

    def _show_attempts(self, attempts: Attempts | None) -> None:
        self.attempts = attempts
        self.query_one("#requeue-attempts", Static).update(Content(attempts_lines(attempts)))
        self.show_effect()

    @property
    def reset(self) -> bool:
        return self.query_one("#requeue-reset", Checkbox).value

    def show_effect(self) -> None:
        """What the requeue will do as the fields stand."""
        attempts = self.attempts
        reset = self.reset
        if attempts is not None:
            words = attempts.outcome(reset)
        else:
            words = "error counts reset to 0" if reset else "error counts kept"
        try:
            spread = self.parse().spread
        except ConfigError:
            spread = 0.0
        try:
            params = self.parse()
        except ConfigError:
            params = None
        if params is not None and params.waves is not None:
            when = waves_text(params.waves, params.gate_value)
        else:
            when = spread_text(spread) if spread else "all due at once"
        self.query_one("#requeue-effect", Static).update(Content(f"→ {words}; {when}."))

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        self.show_effect()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.show_error("")
        self.show_effect()

    def parse(self) -> RequeueParams:
        return params_from(
            self.reset,
            self.query_one("#requeue-spread", Input).value,
            self.query_one("#requeue-waves", Input).value,
            self.query_one("#requeue-gate", Input).value,
        )
