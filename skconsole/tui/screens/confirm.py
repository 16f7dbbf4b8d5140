"""Confirmation of a destructive action: states the exact scope, defaults to No.

The scope names task types and error signatures from the database: every text
given is shown printable (control characters as visible escapes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from skconsole.text import printable


class ConfirmScreen(ModalScreen[bool]):
    """Returns True only for an explicit Yes (the y key or the Yes button).

    The No button has the focus, so Enter, Esc and n all answer No.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n", "answer(False)", "No", show=False),
        Binding("escape", "answer(False)", "No", show=False),
    ]

    def __init__(
        self,
        title: str,
        question: str,
        sample: Sequence[str],
        yes_label: str,
        sample_note: str = "",
    ) -> None:
        super().__init__(classes="dialog-screen")
        self.sample_note = printable(sample_note)
        self.title_text = printable(title)
        self.question = printable(question)
        self.sample = tuple(printable(line) for line in sample)
        self.yes_label = printable(yes_label)

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm", classes="dialog"):
            yield Static(Content(self.title_text), classes="dialog-title")
            yield Static(Content(self.question), id="confirm-question")
            if self.sample:
                lines = [self.sample_note, *self.sample] if self.sample_note else list(self.sample)
                yield Static(Content("\n".join(lines)), id="confirm-sample")
            yield Static(
                Content(
                    "Acts on exactly the jobs counted now; any that change state meanwhile "
                    "are left alone. y = yes · n, Esc or Enter = no"
                ),
                classes="dialog-hint",
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("No", id="no", variant="primary")
                yield Button(Content(self.yes_label), id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
