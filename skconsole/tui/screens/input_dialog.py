"""A dialog of input fields whose answer is parsed on Enter (purge age, type limits).

What the fields hold is checked as the command line checks it: a
:class:`~skconsole.core.errors.ConfigError` is shown on the dialog's error
line and the dialog stays open; an answer that parses closes it. Esc closes it
with None.
"""

from __future__ import annotations

from typing import ClassVar, TypeVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from skconsole.core.errors import ConfigError

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

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            answer = self.parse()
        except ConfigError as exc:
            self.query_one(f"#{self.ERROR_ID}", Static).update(Content(str(exc)))
            return
        self.dismiss(answer)

    def action_cancel(self) -> None:
        self.dismiss(None)
