"""Purge, step 1: how old must a finished result be to be deleted?"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, Static

from skconsole.core.durations import parse_duration
from skconsole.tui.screens.input_dialog import InputDialog

DEFAULT_AGE = "7d"


class PurgeAgeScreen(InputDialog[float]):
    """Returns the age in seconds, or None when cancelled."""

    ERROR_ID = "purge-age-error"

    def compose(self) -> ComposeResult:
        with Vertical(id="purge-age", classes="dialog"):
            yield Static("Purge old results", classes="dialog-title")
            yield Static(
                Content("Delete finished results (Processed, Fatal, Cancelled) older than:"),
            )
            yield Input(DEFAULT_AGE, id="purge-age-input")
            yield from self.error_and_hint(
                "Enter counts them first (nothing is deleted yet) · Esc cancels"
            )

    def parse(self) -> float:
        return parse_duration(self.query_one("#purge-age-input", Input).value)
