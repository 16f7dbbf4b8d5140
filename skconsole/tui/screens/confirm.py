"""Confirmation of a destructive action: states the exact scope, defaults to No.

The scope names task types and error signatures from the database: every text
given is shown printable (control characters as visible escapes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from skconsole.core.text import printable
from skconsole.tui.screens.yes_no import YesNoScreen

JOBS_HINT = (
    "Acts on exactly the jobs counted now; any that change state meanwhile "
    "are left alone. y = yes · n, Esc or Enter = no"
)


class ConfirmScreen(YesNoScreen):
    """Says what the action does and to which jobs (or which table or session: ``hint``
    then says how that target is held to what is shown), and in red what the preview
    found that the operator must know (``alarm``: a reap's jobs no live worker runs),
    and what follows from it at the present flow (``forecast``); Yes runs it.

    On a terminal under 32 rows (class ``-short``) a dialog with a forecast leaves out
    its sample (the question states the scope), so that its buttons stay on screen."""

    DIALOG_ID = "confirm"
    #: (Textual annotates it ``ClassVar[...] | None``, which mypy reads as an instance variable)
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-short"), (32, "-tall")]  # type: ignore[misc]

    def __init__(
        self,
        title: str,
        question: str,
        sample: Sequence[str],
        yes_label: str,
        sample_note: str = "",
        hint: str = JOBS_HINT,
        alarm: str = "",
        forecast: str = "",
    ) -> None:
        super().__init__(title, yes_label)
        self.sample_note = printable(sample_note)
        self.question = printable(question)
        self.sample = tuple(printable(line) for line in sample)
        self.hint = hint
        #: what the operator must know before saying yes, in red ("" : nothing)
        self.alarm = printable(alarm)
        #: what follows from the action at the present flow ("": no forecast)
        self.forecast = printable(forecast)
        if self.forecast:
            self.add_class("-forecast")

    def compose_body(self) -> ComposeResult:
        yield Static(Content(self.question), id="confirm-question")
        if self.alarm:
            yield Static(Content(self.alarm), id="confirm-alarm")
        if self.forecast:
            yield Static(Content(f"Forecast: {self.forecast}"), id="confirm-forecast")
        if self.sample:
            lines = [self.sample_note, *self.sample] if self.sample_note else list(self.sample)
            yield Static(Content("\n".join(lines)), id="confirm-sample")
        yield Static(Content(self.hint), classes="dialog-hint")
