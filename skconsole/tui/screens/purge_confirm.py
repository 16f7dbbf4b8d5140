"""Purge, step 2: the operator types the count, so a bulk delete is never one keypress."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from skconsole.core.text import printable


def matches(typed: str, count: int) -> bool:
    return typed.strip().replace(",", "").replace("_", "") == str(count)


class PurgeConfirmScreen(ModalScreen[bool]):
    """True only when the typed number equals the count and the operator confirms."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, question: str, count: int) -> None:
        super().__init__(classes="dialog-screen")
        self.question = printable(question)
        self.count = count

    def compose(self) -> ComposeResult:
        with Vertical(id="purge-confirm", classes="dialog"):
            yield Static("Confirm purge", classes="dialog-title")
            yield Static(Content(self.question), id="confirm-question")
            yield Static(Content(f"Type {self.count:,} to confirm:"))
            yield Input(placeholder=str(self.count), id="purge-count")
            yield Static(
                Content("Deleted results cannot be restored. Esc cancels."), classes="dialog-hint"
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="no", variant="primary")
                yield Button(
                    Content(f"Purge {self.count:,}"), id="yes", variant="error", disabled=True
                )

    def on_mount(self) -> None:
        self.query_one("#purge-count", Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_one("#yes", Button).disabled = not matches(event.value, self.count)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if matches(event.value, self.count):
            self.dismiss(True)
        else:
            self.notify("The number typed does not match the count.", severity="warning")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(
            event.button.id == "yes"
            and matches(self.query_one("#purge-count", Input).value, self.count)
        )

    def action_cancel(self) -> None:
        self.dismiss(False)
