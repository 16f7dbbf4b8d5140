"""Panel 1: queue depth per task type, with a trend of the waiting count.

On a big queue ready and scheduled are estimated from a sample (the read
model says so): they show as "≈45.4k", never as exact-looking numbers. The
state column says "paused"; "no worker" in red for a type with ready jobs that no
live worker runs (what ``skconsole check`` warns of: :attr:`Snapshot.unserved`; the
title counts them); or shows a limited type's limits (``skconsole
limit``, key L): running/limit, "limited 2/2" when full, and its rate ("10/min").
The SLO column (``skconsole slo``) says when the oldest ready job breaches it,
coloured as the oldest column is. The "fail 5m" column is the share of the
type's jobs finished in the last 5 minutes that failed (Faulted or Fatal),
coloured by its max failure rate when it has one (amber over it, red over
twice it), else amber from half and red when every one failed.

Every known type has a row (the read model's): the types with nothing ready,
scheduled or in flight come last and dimmed (the "muted" tone of app.tcss),
but what still calls for attention in them (a failure rate, a pause, a limit
that is full) keeps its colour.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import ClassVar

from skconsole.read.flow import (
    SloState,
    breach_in_s,
    slo_state,
)
from skconsole.tui.formatting import fmt_count, fmt_int, format_age, spark
from skconsole.tui.model import DepthRow, Snapshot
from skconsole.tui.opening import Opening, waiting_of
from skconsole.tui.widgets.keyed_table import Row
from skconsole.tui.widgets.panel import TypesPanel
from skconsole.views.flow import failure_share
from skconsole.views.table import (
    Cell,
    Column,
    Tone,
    cell_text,
    cell_tone,
    figure_column,
    type_column,
)


def _state(d: DepthRow) -> Cell:
    """Paused; "no worker" (red: ready jobs, and no live worker runs the type); or the
    type's limits: "limited 2/2" (at its concurrency limit), "1/2" (running/limit),
    "10/min" (its rate limit), "1 per payload.customer (3 keys at limit)" (its per-key
    limits); amber when claims wait."""
    if d.paused:
        return ("paused", "warn")
    if d.breaker is not None:
        return (d.breaker, "bad" if d.breaker_open else "warn")
    if d.no_worker:
        return ("no worker", "bad")
    if d.limit is None:
        return ""
    if d.limit.saturated:
        return (f"limited {d.limit.slots}", "warn")
    if d.limit.key_concurrency is not None and d.limit.keys_at_limit:
        return (d.limit.summary(" "), "warn")  # some keys' jobs wait for a slot
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


def _failed(d: DepthRow) -> Cell:
    """The share of the jobs finished in the last 5 minutes that failed (coloured by the
    type's max failure rate, when it has one)."""
    return failure_share(d.failed, d.finished, d.max_failure_rate)


#: tones an idle row keeps: what still calls for attention
_KEPT_TONES = frozenset({"bad", "warn"})


def _dimmed(cell: Cell) -> Cell:
    """An idle row's cell: muted, unless its tone calls for attention."""
    return cell if cell_tone(cell) in _KEPT_TONES else (cell_text(cell), "muted")


class DepthPanel(TypesPanel):
    scope = "depth"
    title = "Queue depth"
    tabbed = False
    # narrow, the trend goes first, then the SLO (the oldest column's colour still tells
    # it), in flight (panel 2 lists them) and scheduled: what is ready, how old, failing
    # and held (state) stay
    COLUMNS: ClassVar[tuple[Column[DepthRow], ...]] = (
        type_column(17, flex=True),
        figure_column("ready", 7, lambda d, _: fmt_count(d.ready, d.estimated)),
        figure_column("scheduled", 9, lambda d, _: fmt_count(d.scheduled, d.estimated), priority=2),
        figure_column(
            "in_flight", 9, lambda d, _: fmt_int(d.in_flight), label="in flight", priority=3
        ),
        figure_column("oldest", 7, lambda d, _: _oldest(d)),
        figure_column("failed", 7, lambda d, _: _failed(d), label="fail 5m"),
        Column("state", "state", 11, cell=lambda d, _: _state(d)),
        Column("slo", "SLO", 11, cell=lambda d, _: _slo(d), priority=4),
        Column("trend", "trend", 12, cell=lambda d, _: (spark(d.trend, 12), "accent"), priority=5),
    )
    opens = "the type's waiting jobs (a search)"

    def items(self, snapshot: Snapshot) -> Sequence[DepthRow]:
        """Every known type by name, those with nothing ready, scheduled or in flight last;
        each that no live worker runs marked so."""
        unserved = set(snapshot.unserved)
        rows = (replace(d, no_worker=d.task_type in unserved) for d in snapshot.depth)
        return sorted(rows, key=lambda d: d.idle)

    def rows_of(self, items: Iterable[DepthRow], now: float) -> list[Row]:
        """The rows, an idle type's dimmed (:func:`_dimmed`)."""
        shown = list(items)
        idle = {self.row_key(d) for d in shown if d.idle}
        return [
            (key, tuple(_dimmed(c) for c in cells) if key in idle else cells)
            for key, cells in super().rows_of(shown, now)
        ]

    def opening(self, key: str, snapshot: Snapshot) -> Opening | None:
        return waiting_of(key)

    def summarize(self, snapshot: Snapshot) -> str:
        """The totals; first, when some type has ready jobs and no live worker, how many
        ("no worker for 2 types": the state column names them)."""
        ready = sum(d.ready for d in snapshot.depth)
        scheduled = sum(d.scheduled for d in snapshot.depth)
        flight = sum(d.in_flight for d in snapshot.depth)
        sampled = snapshot.depth_estimated
        unserved = len(snapshot.unserved)
        idle = f"no worker for {unserved} {'type' if unserved == 1 else 'types'} · "
        return (
            (idle if unserved else "")
            + f"{fmt_count(ready, sampled)} ready · {fmt_count(scheduled, sampled)} scheduled"
            f" · {flight:,} in flight" + (" · sampled" if sampled else "")
        )
