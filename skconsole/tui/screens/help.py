"""The ? screen: every key, generated from the action registry (given by the app:
a screen sits below :mod:`skconsole.tui.actions`, which opens screens)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from skconsole.tui.action_spec import MAIN, QUEUES, TABLE_SCOPES, ActionSpec
from skconsole.tui.moves import TABLE_MOVES
from skconsole.tui.panels import PANEL_IDS, PANELS

_SCOPE_NAMES = {
    **{p.scope: p.label() for p in PANELS},
    "jobs": "job lists",
    "factors": "group factors",
    "job": "job detail",
    "charts": "charts",
    QUEUES: "queues overview",
}


def where(spec: ActionSpec, several: bool = False) -> str:
    """Where the action applies, in words; with one queue there is no overview to name."""
    scopes = spec.scopes if several else spec.scopes - {QUEUES}
    if not scopes:
        return "everywhere"
    if scopes == MAIN:
        return "main screen"
    if scopes == TABLE_SCOPES:
        return "every table"
    return ", ".join(_SCOPE_NAMES.get(s, s) for s in sorted(scopes, key=_order))


def _order(scope: str) -> int:
    names = [*PANEL_IDS, "jobs", "job", QUEUES]
    return names.index(scope) if scope in names else 99


def notes(spec: ActionSpec, read_only: bool) -> str:
    out = []
    if spec.destructive:
        out.append("confirms")
    if spec.needs_write:
        out.append("hidden: read-only" if read_only else "write")
    if spec.needs_engine:
        out.append("with --tasks")
    if spec.needs_past:
        out.append("with --at or --bundle")
    return ", ".join(out)


def help_rows(
    actions: Sequence[ActionSpec], read_only: bool, several: bool = False
) -> list[tuple[str, str, str, str, str]]:
    """Every key of this console (with one queue, none of the overview's): its key, its
    action, where it applies, its notes and what it does."""
    rows = [
        (spec.shown_key, spec.description, where(spec, several), notes(spec, read_only), spec.help)
        for spec in actions
        if several or not spec.needs_queues
    ]
    rows.append(("ctrl+p", "Commands", "everywhere", "", "Run any action by name."))
    rows.extend((m.shown, m.help, "every table", "", "") for m in TABLE_MOVES if m.shown)
    return rows


def help_text(actions: Sequence[ActionSpec], read_only: bool, several: bool = False) -> str:
    """The keys as plain text, one line each."""
    return "\n".join(
        " · ".join(c for c in row if c) for row in help_rows(actions, read_only, several)
    )


def help_table(actions: Sequence[ActionSpec], read_only: bool, several: bool = False) -> Table:
    """The keys as the screen shows them: the key and the action, then where it applies,
    its notes and what it does, wrapped within their column at any width."""
    table = Table(box=None, pad_edge=False, expand=True, header_style="bold")
    table.add_column("key", no_wrap=True)
    table.add_column("action", no_wrap=True)
    table.add_column("where · notes · what it does", ratio=1, overflow="fold")
    for key, action, at, note, what in help_rows(actions, read_only, several):
        detail = Text(at + (f" · {note}" if note else ""), style="dim")
        if what:
            detail.append("\n" + what, style="")
        table.add_row(Text(key, style="bold"), Text(action), detail)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", show=False),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(
        self, actions: Sequence[ActionSpec], read_only: bool, several: bool = False
    ) -> None:
        super().__init__(classes="dialog-screen")
        self.actions = actions
        self.read_only = read_only
        self.several = several

    def compose(self) -> ComposeResult:
        with Vertical(id="help", classes="dialog"):
            yield Static("Keys and actions", classes="dialog-title")
            with VerticalScroll(id="help-body"):
                yield Static(help_table(self.actions, self.read_only, self.several))
            yield Static(
                Content(
                    "Confirmations default to No; write actions act on the ids shown when "
                    "the confirmation opened. Esc, ? or q closes."
                ),
                classes="dialog-hint",
            )

    def action_close(self) -> None:
        self.dismiss(None)
