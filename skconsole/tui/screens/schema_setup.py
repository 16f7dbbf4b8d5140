"""Offered at start when the database has no skconsole schema (never in read-only mode)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class SchemaSetupScreen(ModalScreen[bool]):
    """True: create the schema now. False (the default): quit and say how to do it later."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "answer(False)", "Quit", show=False),
        Binding("n", "answer(False)", "No", show=False),
        Binding("y", "answer(True)", "Yes", show=False),
    ]

    def __init__(self, server: str, missing: Sequence[str]) -> None:
        super().__init__(classes="dialog-screen")
        self.server = server
        self.missing = tuple(missing)

    def compose(self) -> ComposeResult:
        shown = ", ".join(self.missing[:4]) + (" ..." if len(self.missing) > 4 else "")
        with Vertical(id="schema-setup", classes="dialog"):
            yield Static("No skconsole schema here", classes="dialog-title")
            yield Static(
                Content(
                    f"The database at {self.server} has no skconsole schema (missing: {shown}).\n\n"
                    "Set it up now? This only adds tables, indexes and a function; it changes "
                    "nothing that exists, so it is safe on a database a Stakhanovise.NET "
                    "application already uses. (Later: `skconsole setup`.)"
                )
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("No, quit", id="no", variant="primary")
                yield Button("Set up the schema", id="yes", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
