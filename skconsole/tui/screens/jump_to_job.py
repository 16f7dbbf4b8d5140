"""Jump to a job (key J): an id or a unique prefix of it, as a ticket or a log
line gives it. The lookup runs in a worker thread (never on the UI thread); a
prefix several jobs share, or none, is answered in the dialog itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from skconsole.core.text import printable
from skconsole.read import JobMatch
from skconsole.read.job_lookup import CANDIDATES
from skconsole.tui.off_thread import read_off_thread


def verdict(text: str, found: list[JobMatch]) -> str | None:
    """What the dialog says when ``found`` is not exactly one job (None: it is)."""
    if len(found) == 1:
        return None
    if not found:
        return f"No job id starts with {text.strip()!r}."
    shown = "\n".join(f"{m.task_id}  {m.task_type}  {m.status.label}" for m in found[:CANDIDATES])
    more = "\n..." if len(found) > CANDIDATES else ""
    return f"Several jobs start with {text.strip()!r}; type more of the id:\n{shown}{more}"


class JumpToJobScreen(ModalScreen[str | None]):
    """Returns the id of the one job the text names, or None when cancelled.

    ``lookup`` reads the candidates (the data source's ``jobs_by_prefix``): called in a
    worker thread."""

    DEFAULT_CLASSES = "dialog-screen"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, lookup: Callable[[str], list[JobMatch]]) -> None:
        super().__init__()
        self.lookup = lookup

    def compose(self) -> ComposeResult:
        with Vertical(id="jump-job", classes="dialog"):
            yield Static("Open a job", classes="dialog-title")
            yield Static(Content("Its id, or enough of its start to name one job:"))
            yield Input("", id="jump-job-input", placeholder="e.g. 3f2a9c")
            yield Static("", id="jump-job-error", classes="dialog-error")
            yield Static(Content("Enter opens it · Esc cancels"), classes="dialog-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self._find(event.value)

    def _find(self, text: str) -> None:
        read_off_thread(
            self,
            lambda: self.lookup(text),
            lambda found: self._found(text, found),
            # a bad id (a ConfigError), or the database
            lambda exc: self._say(str(exc) or type(exc).__name__),
            group="jump",
        )

    def _found(self, text: str, found: list[JobMatch]) -> None:
        message = verdict(text, found)
        if message is None:
            self.dismiss(str(found[0].task_id))
        else:
            self._say(message)

    def _say(self, message: str) -> None:
        self.query_one("#jump-job-error", Static).update(
            Content(printable(message, keep_newlines=True))
        )

    def action_cancel(self) -> None:
        self.dismiss(None)
