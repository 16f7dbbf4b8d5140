"""A question answered Yes or No, defaulting to No: the layout and keys the
confirmation dialogs share."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static
from textual.widgets.button import ButtonVariant

from skconsole.core.text import printable


class YesNoScreen(ModalScreen[bool]):
    """Returns True only for an explicit Yes (the y key or the Yes button).

    The No button has the focus, so Enter, Esc and n all answer No. A subclass
    says what it asks (``compose_body``) between the title and the buttons.
    """

    DEFAULT_CLASSES = "dialog-screen"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n", "answer(False)", "No", show=False),
        Binding("escape", "answer(False)", "No", show=False),
    ]
    DIALOG_ID: ClassVar[str] = ""
    NO_LABEL: ClassVar[str] = "No"
    YES_VARIANT: ClassVar[ButtonVariant] = "error"

    def __init__(self, title: str, yes_label: str) -> None:
        super().__init__()
        self.title_text = printable(title)
        self.yes_label = printable(yes_label)

    def compose(self) -> ComposeResult:
        with Vertical(id=self.DIALOG_ID, classes="dialog"):
            yield Static(Content(self.title_text), classes="dialog-title")
            yield from self.compose_body()
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.NO_LABEL, id="no", variant="primary")
                yield Button(Content(self.yes_label), id="yes", variant=self.YES_VARIANT)

    def compose_body(self) -> ComposeResult:
        """What the dialog asks."""
        return iter(())

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
