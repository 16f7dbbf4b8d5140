"""Why a job waits (key w in the job detail): the causes of ``skconsole why``, most likely
first, each with what fixes it, read in a worker thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from skconsole.core.text import printable
from skconsole.read import Fix, Why
from skconsole.tui.context import Console
from skconsole.tui.formatting import short_id
from skconsole.tui.off_thread import read_off_thread
from skconsole.tui.reads import WhyRead


def why_text(found: Why | None, offer: Callable[[Fix], str] = Fix.command) -> Content:
    """The causes as the dialog shows them: numbered, the evidence, then the fix, each
    action as ``offer`` says it (the console: its command and its key)."""
    if found is None:
        return Content("The job no longer exists (purged?).")
    lines: list[Content] = []
    for n, cause in enumerate(found.causes, 1):
        lines.append(
            Content.assemble((f"{n}. {cause.code.value}", "bold"), ": ", printable(cause.evidence))
        )
        lines.append(Content.assemble("   fix: ", (printable(cause.fix_text(offer)), "italic")))
    return Content("\n").join(lines)


class WhyScreen(ModalScreen[None]):
    """The causes of one job; Esc, Enter or w closes it."""

    DEFAULT_CLASSES = "dialog-screen"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", show=False),
        Binding("enter", "close", "Close", show=False),
        Binding("w", "close", "Close", show=False),
    ]

    def __init__(
        self, task_id: str, console: Console, offer: Callable[[Fix], str] = Fix.command
    ) -> None:
        super().__init__()
        self.task_id = task_id
        self.console = console
        self.offer = offer
        self.found: Why | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="why-job", classes="dialog"):
            yield Static(Content(f"Why job {short_id(self.task_id)} waits"), classes="dialog-title")
            with VerticalScroll(id="why-body-scroll"):
                yield Static(Content("Reading…"), id="why-body")
            yield Static("esc: close", classes="dialog-hint")

    def on_mount(self) -> None:
        read_off_thread(
            self,
            lambda: self.console.source.read(WhyRead(self.task_id)),
            self._show,
            self._failed,
            group="why",
        )

    def _show(self, found: Why | None) -> None:
        self.found = found
        self.query_one("#why-body", Static).update(why_text(found, self.offer))

    def _failed(self, exc: BaseException) -> None:
        self.query_one("#why-body", Static).update(Content("Could not read why it waits."))
        self.console.report_error("could not read why the job waits", exc)

    def action_close(self) -> None:
        self.dismiss(None)
