"""Edit, step 1: the job's payload in an editor, its priority, and whether to run it again.

The payload is shown pretty-printed with every character a terminal could act
on written as a JSON escape (:func:`skconsole.ops.edit.editable_json`), so the
editor never holds raw control text. It is checked as it is typed, as a
producer checks a payload; Save stays disabled while it is not valid.

Tab moves on to the priority (the editor types no indentation); ctrl+s saves from any
field. On a short terminal the editor takes at most 40% of the rows and the fields
above the buttons scroll (app.tcss). The key that opened it (``opener``), pressed again
or repeating within ``guard_s`` of its opening, is dropped rather than typed into the
payload; any other key typed at once is kept.
"""

from __future__ import annotations

import time
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Static, TextArea

from skconsole.core.errors import ConfigError
from skconsole.core.status import JobStatus
from skconsole.core.text import printable
from skconsole.ops.edit import REQUEUABLE, EditParams, editable_json, same_payload
from skconsole.read import JobDetail
from skconsole.tui.formatting import short_id
from skconsole.tui.widgets.checkbox import MarkedCheckbox


class PayloadEditor(TextArea):
    """The payload's editor: ``opener`` typed before ``open_until`` (monotonic) is dropped."""

    open_until = 0.0
    opener: str | None = None

    async def _on_key(self, event: events.Key) -> None:
        if event.character == self.opener and time.monotonic() < self.open_until:
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)


class EditJobScreen(ModalScreen[EditParams | None]):
    """Returns the edit's parameters (Save, or ctrl+s), or None when cancelled (Esc)."""

    DEFAULT_CLASSES = "dialog-screen"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("ctrl+s", "save", "Save", show=False, priority=True),
    ]

    def __init__(self, job: JobDetail, *, guard_s: float = 0.0, opener: str | None = None) -> None:
        super().__init__()
        self.job = job
        self.guard_s = guard_s
        self.opener = opener
        self.original = editable_json(job.payload)
        self.can_requeue = job.status in REQUEUABLE
        self.params: EditParams | None = None
        self.problem = ""

    def compose(self) -> ComposeResult:
        job = self.job
        title = (
            f"Edit job {short_id(str(job.task_id))} ({job.task_type}, "
            f"{JobStatus.label_of(job.status)})"
        )
        with Vertical(id="edit-job", classes="dialog"):
            yield Static(Content(printable(title)), classes="dialog-title")
            with VerticalScroll(id="edit-body"):
                yield Static(Content("Payload (JSON):"))
                yield PayloadEditor(
                    self.original,
                    id="edit-payload",
                    language=None,
                    soft_wrap=True,
                    show_line_numbers=True,
                    tab_behavior="focus",
                )
                yield Static("", id="edit-error", classes="dialog-error")
                with Horizontal(id="edit-options"):
                    yield Static(Content("Priority (0 first):"), id="edit-priority-label")
                    yield Input(str(job.priority), id="edit-priority", type="integer")
                    if self.can_requeue:
                        yield MarkedCheckbox("Run it again now (requeue)", True, id="edit-requeue")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel", variant="default")
                yield Button("Save…", id="save", variant="warning")
            yield Static(
                Content("ctrl+s saves (the change is shown first) · Tab: next field · Esc cancels"),
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        editor = self.query_one(PayloadEditor)
        editor.open_until = time.monotonic() + self.guard_s
        editor.opener = self.opener
        editor.focus()
        self.check()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self.check()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.check()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        self.check()

    def _priority(self) -> int | None:
        text = self.query_one("#edit-priority", Input).value.strip()
        if not text:
            raise ConfigError("priority: give a whole number (0 runs first)")
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"priority must be a whole number, got {text!r}") from None

    @property
    def requeue(self) -> bool:
        return self.can_requeue and self.query_one("#edit-requeue", Checkbox).value

    def check(self) -> None:
        """Validate what is typed; show the first problem under the editor; enable Save."""
        payload = self.query_one(TextArea).text
        params: EditParams | None = None
        try:
            priority = self._priority()
            params = EditParams(
                payload=payload,
                priority=None if priority == self.job.priority else priority,
                requeue=self.requeue,
            )
            problem = ""
            if (
                not params.requeue
                and params.priority is None
                and same_payload(self.job.payload, payload)
            ):
                problem = "No change yet: edit the payload or the priority."
                params = None
        except ConfigError as exc:
            problem = str(exc).removeprefix("--payload: ").removeprefix("--")
        self.params = params
        self.problem = printable(problem)
        self.query_one("#edit-error", Static).update(Content(self.problem))
        self.query_one("#save", Button).disabled = params is None

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "save":
            self.action_save()
        else:
            self.action_cancel()

    def action_save(self) -> None:
        self.check()
        if self.params is not None:
            self.dismiss(self.params)

    def action_cancel(self) -> None:
        self.dismiss(None)
