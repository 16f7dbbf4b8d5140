"""Edit, step 2: the change as a diff, the exact scope, Yes or No (No by default).

Each line of the diff is shown printable (the payloads are the database's
text): removed lines in the error colour, added ones in the success colour.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from skconsole.core.text import printable
from skconsole.tui.screens.yes_no import YesNoScreen

#: The diff line classes, by first character (colours in app.tcss).
LINE_CLASSES = {"+": "diff-added", "-": "diff-removed", "@": "diff-hunk"}


class EditConfirmScreen(YesNoScreen):
    """Shows old vs new payload (a unified diff) and any priority change; Yes saves."""

    DIALOG_ID = "edit-confirm"

    def __init__(self, question: str, diff: Sequence[str], notes: Sequence[str], yes: str) -> None:
        super().__init__("Confirm edit", yes)
        self.question = printable(question)
        # the two file headers say nothing a person needs
        self.diff = tuple(printable(line) for line in diff[2:])
        self.notes = tuple(printable(n) for n in notes)

    def compose_body(self) -> ComposeResult:
        yield Static(Content(self.question), id="confirm-question")
        with VerticalScroll(id="edit-diff"):
            for line in self.diff or ("(the payload is unchanged)",):
                yield Static(
                    Content(line), classes=f"diff-line {LINE_CLASSES.get(line[:1], 'diff-same')}"
                )
        for note in self.notes:
            yield Static(Content(note), classes="edit-note")
        yield Static(
            Content(
                "Saved only if the job still waits or has failed; if a worker claimed it "
                "meanwhile it is left alone. y = yes · n, Esc or Enter = no"
            ),
            classes="dialog-hint",
        )
