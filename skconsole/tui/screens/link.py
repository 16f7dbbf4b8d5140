"""The link of what is on screen (key l), under ``skconsole serve``: the URL of the job,
the failure group or the search shown, to paste into the incident channel.

It is shown in a field (select it with the mouse, or Ctrl+C copies it) and put on the
clipboard, which textual-serve hands to the browser. The URL is made of a checked
place (:mod:`skconsole.core.places`): percent-encoded ASCII, nothing to escape.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from skconsole.core.places import Place
from skconsole.core.text import printable


class LinkScreen(ModalScreen[None]):
    """The URL of ``at``; Esc or Enter closes it."""

    DEFAULT_CLASSES = "dialog-screen"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", show=False),
    ]

    def __init__(self, url: str, at: Place) -> None:
        super().__init__()
        self.url = url
        self.at = at

    def compose(self) -> ComposeResult:
        with Vertical(id="link", classes="dialog"):
            yield Static(Content(f"Link to {self.at.describe()}"), classes="dialog-title")
            yield Input(printable(self.url), id="link-url", select_on_focus=True)
            yield Static(
                Content("Copied to the clipboard · Enter or Esc closes"),
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        self.query_one("#link-url", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
