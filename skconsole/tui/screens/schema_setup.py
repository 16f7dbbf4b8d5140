"""Offered at start when the database has no skconsole schema (never in read-only mode)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Static

from skconsole.tui.screens.yes_no import YesNoScreen


class SchemaSetupScreen(YesNoScreen):
    """True: create the schema now. False (the default): quit and say how to do it later."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "answer(False)", "Quit", show=False),
    ]
    DIALOG_ID = "schema-setup"
    NO_LABEL = "No, quit"
    YES_VARIANT = "warning"

    def __init__(self, server: str, missing: Sequence[str]) -> None:
        super().__init__("No skconsole schema here", "Set up the schema")
        self.server = server
        self.missing = tuple(missing)

    def compose_body(self) -> ComposeResult:
        shown = ", ".join(self.missing[:4]) + (" ..." if len(self.missing) > 4 else "")
        yield Static(
            Content(
                f"The database at {self.server} has no skconsole schema (missing: {shown}).\n\n"
                "Set it up now? This only adds tables, indexes and a function; it changes "
                "nothing that exists, so it is safe on a database a Stakhanovise.NET "
                "application already uses. (Later: `skconsole setup`.)"
            )
        )
