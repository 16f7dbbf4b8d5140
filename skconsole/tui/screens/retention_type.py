"""Set or clear a task type's retention (key T on the depth panel).

One field: how long finished results of the type are kept before the workers
purge them (``30d``, ``12h``); empty clears the type's own policy (the default
policy, if any, applies again). A second field says whether 5 Faulted results
are purged too. Enter returns :class:`skconsole.ops.RetentionParams` (the
action runner then previews what the change makes eligible now, asks, and
audits it); Esc returns None.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, Static

from skconsole.core.durations import parse_duration
from skconsole.core.errors import ConfigError
from skconsole.ops import RetentionParams
from skconsole.tui.screens.input_dialog import InputDialog

YES = frozenset({"y", "yes"})
NO = frozenset({"", "n", "no"})


def params_from(text_keep: str, text_faulted: str) -> RetentionParams:
    """The change the two fields ask for (ConfigError for text that says neither)."""
    keep, faulted = text_keep.strip(), text_faulted.strip().casefold()
    if faulted not in YES | NO:
        raise ConfigError(f"purge Faulted too? {faulted[:20]!r}: answer y or n")
    if not keep:
        return RetentionParams(clear=True)
    return RetentionParams(older_than_s=parse_duration(keep), include_faulted=faulted in YES)


class RetentionTypeScreen(InputDialog[RetentionParams]):
    """Returns the change to make, or None when cancelled."""

    ERROR_ID = "retention-error"

    def __init__(self, task_type: str) -> None:
        super().__init__()
        self.task_type = task_type

    def compose(self) -> ComposeResult:
        with Vertical(id="retention-type", classes="dialog"):
            yield Static(Content(f"Retention of {self.task_type}"), classes="dialog-title")
            yield Static(Content("Keep finished results (Processed, Fatal, Cancelled) for:"))
            yield Input(placeholder="empty: clear the type's policy", id="retention-keep")
            yield Static(Content("Purge 5 Faulted results too (y/n):"))
            yield Input("n", id="retention-faulted")
            yield from self.error_and_hint(
                "Enter previews the change (the current policy and what it makes"
                " eligible now) · Tab next field · Esc cancels"
            )

    def parse(self) -> RetentionParams:
        return params_from(
            self.query_one("#retention-keep", Input).value,
            self.query_one("#retention-faulted", Input).value,
        )
