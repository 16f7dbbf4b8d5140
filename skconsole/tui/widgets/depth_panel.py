"""Panel 1: queue depth per task type, with a trend of the waiting count.

On a big queue ready and scheduled are estimated from a sample (the read
model says so): they show as "≈45.4k", never as exact-looking numbers. The
state column says "paused", or shows a limited type's limits (``skconsole
limit``, key L): running/limit, "limited 2/2" when full, and its rate ("10/min").
The SLO column (``skconsole slo``) says when the oldest ready job breaches it,
coloured as the oldest column is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from skconsole.read.flow import SloState, breach_in_s, slo_state
from skconsole.tui.formatting import fmt_count, fmt_int, format_age, spark
from skconsole.tui.model import DepthRow, Snapshot
from skconsole.tui.opening import Opening, waiting_of
from skconsole.tui.widgets.panel import Panel
from skconsole.views.table import Cell, Column, Tone


def _state(d: DepthRow) -> Cell:
    """Paused, or the type's limits: "limited 2/2" (at its concurrency limit), "1/2"
    (running/limit), "10/min" (its rate limit); amber when claims wait."""
    if d.paused:
        return ("paused", "warn")
    if d.limit is None:
        return ""
    if d.limit.saturated:
        return (f"limited {d.limit.slots}", "warn")
    return d.limit.summary(" ")


_SLO_TONES: dict[SloState, Tone] = {
    SloState.OK: "good",
    SloState.WARNING: "warn",
    SloState.BREACHED: "bad",
}


def _oldest(d: DepthRow) -> Cell:
    """The age of the type's oldest ready job: coloured by its SLO when it has one
    (green, amber within 20% of it, red past it), else amber past five minutes."""
    age = format_age(d.oldest_ready_s)
    state = slo_state(d.slo_s, d.oldest_ready_s)
    if state is not SloState.NONE:
        return (age, _SLO_TONES[state])
    stale = d.oldest_ready_s is not None and d.oldest_ready_s > 300
    return (age, "warn") if stale else age


def _slo(d: DepthRow) -> Cell:
    """ "12s left" / "late 1m 20s" (the oldest ready job against the SLO), in the SLO's
    colour; "" without one."""
    state = slo_state(d.slo_s, d.oldest_ready_s)
    left = breach_in_s(d.slo_s, d.oldest_ready_s)
    if state is SloState.NONE:
        return ""
    if left is None:
        return ("met", _SLO_TONES[state])
    text = f"{format_age(left)} left" if left >= 0 else f"late {format_age(-left)}"
    return (text, _SLO_TONES[state])


class DepthPanel(Panel):
    scope = "depth"
    title = "Queue depth"
    tabbed = False
    COLUMNS: ClassVar[tuple[Column[DepthRow], ...]] = (
        Column("type", "type", 17, flex=True, cell=lambda d, _: d.task_type),
        Column("ready", "ready", 7, right=True, cell=lambda d, _: fmt_count(d.ready, d.estimated)),
        Column(
            "scheduled",
            "scheduled",
            9,
            right=True,
            cell=lambda d, _: fmt_count(d.scheduled, d.estimated),
        ),
        Column("in_flight", "in flight", 9, right=True, cell=lambda d, _: fmt_int(d.in_flight)),
        Column("oldest", "oldest", 7, right=True, cell=lambda d, _: _oldest(d)),
        Column("state", "state", 11, cell=lambda d, _: _state(d)),
        Column("slo", "SLO", 11, cell=lambda d, _: _slo(d)),
        Column("trend", "trend", 12, cell=lambda d, _: (spark(d.trend, 12), "accent")),
    )
    opens = "the type's waiting jobs (a search)"

    def items(self, snapshot: Snapshot) -> Sequence[DepthRow]:
        return snapshot.depth

    def row_key(self, item: DepthRow) -> str:
        return item.task_type

    def opening(self, key: str, snapshot: Snapshot) -> Opening | None:
        return waiting_of(key)

    def summarize(self, snapshot: Snapshot) -> str:
        ready = sum(d.ready for d in snapshot.depth)
        scheduled = sum(d.scheduled for d in snapshot.depth)
        flight = sum(d.in_flight for d in snapshot.depth)
        sampled = snapshot.depth_estimated
        return (
            f"{fmt_count(ready, sampled)} ready · {fmt_count(scheduled, sampled)} scheduled"
            f" · {flight:,} in flight" + (" · sampled" if sampled else "")
        )
