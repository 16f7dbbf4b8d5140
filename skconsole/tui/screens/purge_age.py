"""Purge, step 1: how old must a finished result be to be deleted?"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from skconsole.core.durations import parse_duration
from skconsole.core.errors import ConfigError

DEFAULT_AGE = "7d"


class PurgeAgeScreen(ModalScreen[float | None]):
    """Returns the age in seconds, or None when cancelled."""

    DEFAULT_CLASSES = "dialog-screen"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]

    def compose(self) -> ComposeResult:
        with Vertical(id="purge-age", classes="dialog"):
            yield Static("Purge old results", classes="dialog-title")
            yield Static(
                Content("Delete finished results (Processed, Fatal, Cancelled) older than:"),
            )
            yield Input(DEFAULT_AGE, id="purge-age-input")
            yield Static("", id="purge-age-error", classes="dialog-error")
            yield Static(
                Content("Enter counts them first (nothing is deleted yet) · Esc cancels"),
                classes="dialog-hint",
            )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            seconds = parse_duration(event.value)
        except ConfigError as exc:
            self.query_one("#purge-age-error", Static).update(Content(str(exc)))
            return
        self.dismiss(seconds)

    def action_cancel(self) -> None:
        self.dismiss(None)
