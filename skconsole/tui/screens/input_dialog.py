"""A dialog of input fields whose answer is parsed on Enter (purge age, type limits,
retention, requeue).

What the fields hold is checked as the command line checks it: a
:class:`~skconsole.core.errors.ConfigError` is shown on the dialog's error
line and the dialog stays open; an answer that parses closes it. Esc closes it
with None.
"""

from __future__ import annotations

from typing import ClassVar, TypeVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from skconsole.core.errors import ConfigError
from skconsole.core.text import printable

T = TypeVar("T")


class InputDialog(ModalScreen[T | None]):
    """Returns what :meth:`parse` makes of the fields, or None when cancelled."""

    DEFAULT_CLASSES = "dialog-screen"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]
    #: the id of the Static that shows why the fields do not parse
    ERROR_ID: ClassVar[str]

    def parse(self) -> T:
        """The answer the fields give; ConfigError (shown to the user) if they give none."""
        raise NotImplementedError

    def error_and_hint(self, hint: str) -> ComposeResult:
        """The dialog's last lines: why the fields do not parse (empty until they do
        not), and what its keys do."""
        yield Static("", id=self.ERROR_ID, classes="dialog-error")
        yield Static(Content(hint), classes="dialog-hint")

    def show_error(self, text: str) -> None:
        self.query_one(f"#{self.ERROR_ID}", Static).update(Content(printable(text)))

    def action_submit(self) -> None:
        """Close with the answer the fields give, or say why they give none."""
        try:
            answer = self.parse()
        except ConfigError as exc:
            self.show_error(str(exc))
            return
        self.dismiss(answer)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def action_cancel(self) -> None:
        self.dismiss(None)
