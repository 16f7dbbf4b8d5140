"""Set or clear a task type's fleet-wide limits (key L on the depth panel).

Two fields: the most jobs of the type running at once over all workers, and
the most claims per interval (``10/s``, ``600/min``). An empty field clears
that limit. A third, the payload path (``payload.customer``), makes the two
the type's limits per key: per value of that path (empty: the type-wide
limits). The dialog opens on the type-wide limits, or on the per-key ones when
the type has only those. Enter returns the change as
:class:`skconsole.ops.LimitParams` (the operator flow then previews, acts and
audits it); Esc returns None.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, Static

from skconsole.core.errors import ConfigError
from skconsole.core.payload_terms import parse_path
from skconsole.ops import LimitParams, Rate
from skconsole.read import TypeLimit
from skconsole.tui.screens.input_dialog import InputDialog


def params_from(
    text_concurrency: str, text_rate: str, current: TypeLimit | None, text_per: str = ""
) -> LimitParams:
    """The change the fields ask for: a value sets, an empty field clears (ConfigError);
    with a payload path, of the per-key limits."""
    conc, rate = text_concurrency.strip(), text_rate.strip()
    per = parse_path(text_per) if text_per.strip() else None
    if per is not None:  # compared with the per-key limits (of the same path)
        same_path = current is not None and current.key_path is not None
        now_conc = current.key_concurrency if same_path and current else None
        now_rate = current.key_rate if same_path and current else None
    else:
        now_conc = current.concurrency if current is not None else None
        now_rate = current.rate if current is not None else None
    had_conc, had_rate = now_conc is not None, now_rate is not None
    if conc and not conc.lstrip("-").isdigit():
        raise ConfigError(f"concurrency {conc[:20]!r}: expected a whole number, e.g. 2")
    new_conc = int(conc) if conc else None
    new_rate = Rate.parse(rate) if rate else None
    kept_conc = had_conc and new_conc == now_conc
    kept_rate = new_rate is not None and str(new_rate) == now_rate
    clear_conc, clear_rate = not conc and had_conc, not rate and had_rate
    sets = (new_conc is not None and not kept_conc) or (new_rate is not None and not kept_rate)
    if not (sets or clear_conc or clear_rate):
        raise ConfigError("nothing to change: edit a field, or empty it to clear that limit")
    return LimitParams(
        concurrency=None if kept_conc else new_conc,
        rate=None if kept_rate else new_rate,
        clear_concurrency=clear_conc,
        clear_rate=clear_rate,
        per=per,
    )


class LimitTypeScreen(InputDialog[LimitParams]):
    """Returns the change to make, or None when cancelled."""

    ERROR_ID = "limit-error"

    def __init__(self, task_type: str, current: TypeLimit | None) -> None:
        super().__init__()
        self.task_type = task_type
        self.current = current

    def compose(self) -> ComposeResult:
        cur = self.current
        keyed_only = (
            cur is not None and cur.per is not None and cur.concurrency is None and cur.rate is None
        )
        if cur is not None and keyed_only:
            conc_value, rate_value, per = cur.key_concurrency, cur.key_rate, cur.per or ""
        elif cur is not None:
            conc_value, rate_value, per = cur.concurrency, cur.rate, ""
        else:
            conc_value, rate_value, per = None, None, ""
        conc = str(conc_value) if conc_value is not None else ""
        with Vertical(id="limit-type", classes="dialog"):
            yield Static(Content(f"Limit type {self.task_type}"), classes="dialog-title")
            yield Static(Content("Across every worker, at most this many running at once:"))
            yield Input(conc, placeholder="no limit", id="limit-concurrency")
            yield Static(Content("and at most this many claims (N/s or N/min):"))
            yield Input(rate_value or "", placeholder="no limit", id="limit-rate")
            yield Static(
                Content("per payload path (each value on its own, e.g. payload.customer):")
            )
            yield Input(per, placeholder="the whole type", id="limit-per")
            yield from self.error_and_hint(
                "Empty clears a limit · Enter sets it · Tab next field · Esc cancels"
            )

    def parse(self) -> LimitParams:
        return params_from(
            self.query_one("#limit-concurrency", Input).value,
            self.query_one("#limit-rate", Input).value,
            self.current,
            self.query_one("#limit-per", Input).value,
        )
