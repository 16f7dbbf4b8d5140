"""Open or close a circuit breaker on the selected failure group (key Z on panel 3 or in
a group's drill-down).

The fields: the task type it holds back (the group's first type to start with), the
payload term its jobs share (``payload.partner=acme``, as ``F`` shows the group's
factors; empty: every job of the type), whether to open or close it, its cool-down and
its canaries. Enter returns the type and :class:`skconsole.ops.BreakerParams` (the
action runner then previews how many waiting jobs it holds back, asks, and audits it);
Esc returns None.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, Static

from skconsole.core.durations import parse_duration
from skconsole.core.errors import ConfigError
from skconsole.core.payload_terms import parse_term
from skconsole.ops import BreakerCommand, BreakerParams
from skconsole.ops.breaker import DEFAULT_CANARIES, DEFAULT_COOL_DOWN_S, MAX_COOL_DOWN_S
from skconsole.tui.screens.input_dialog import InputDialog

COMMANDS = {"open": BreakerCommand.OPEN, "close": BreakerCommand.CLOSE}


@dataclass(frozen=True)
class BreakerAnswer:
    """What the dialog asks for: the type, and what to do to its breaker."""

    task_type: str
    params: BreakerParams


def answer_from(
    signature: str, task_type: str, where: str, command: str, cool_down: str, canaries: str
) -> BreakerAnswer:
    """The change the fields ask for (ConfigError for fields that do not parse)."""
    kind = task_type.strip()
    if not kind:
        raise ConfigError("a breaker holds back one task type: name it")
    verb = command.strip().casefold()
    if verb not in COMMANDS:
        raise ConfigError(f"open or close? {verb[:20]!r}: type open or close")
    try:
        count = int(canaries.strip())
    except ValueError:
        raise ConfigError(f"canaries: a number of jobs, not {canaries[:20]!r}") from None
    params = BreakerParams(
        COMMANDS[verb],
        signature=signature,
        term=parse_term(where.strip()) if where.strip() else None,
        cool_down_s=parse_duration(cool_down.strip(), option="cool-down", maximum=MAX_COOL_DOWN_S),
        canaries=count,
    )
    return BreakerAnswer(kind, params)


class BreakerScreen(InputDialog[BreakerAnswer]):
    """Returns the breaker change to make, or None when cancelled."""

    ERROR_ID = "breaker-error"

    def __init__(self, signature: str, task_type: str) -> None:
        super().__init__()
        self.signature = signature
        self.task_type = task_type

    def compose(self) -> ComposeResult:
        with Vertical(id="breaker-dialog", classes="dialog"):
            yield Static(Content(f"Breaker on {self.signature}"), classes="dialog-title")
            yield Static(Content("Task type it holds back:"))
            yield Input(self.task_type, id="breaker-type")
            yield Static(Content("Only jobs sharing (payload.PATH=VALUE; empty: all):"))
            yield Input(placeholder="e.g. payload.partner=acme (F shows them)", id="breaker-where")
            yield Static(Content("open or close:"))
            yield Input("open", id="breaker-command")
            yield Static(Content("Cool-down before canaries, and how many:"))
            yield Input(f"{DEFAULT_COOL_DOWN_S:g}s", id="breaker-cool-down")
            yield Input(str(DEFAULT_CANARIES), id="breaker-canaries")
            yield from self.error_and_hint(
                "Enter previews how many waiting jobs it holds back · Tab next field · Esc cancels"
            )

    def parse(self) -> BreakerAnswer:
        def field(name: str) -> str:
            return self.query_one(f"#breaker-{name}", Input).value

        return answer_from(
            self.signature,
            field("type"),
            field("where"),
            field("command"),
            field("cool-down"),
            field("canaries"),
        )
