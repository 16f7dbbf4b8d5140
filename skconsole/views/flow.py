"""The flow view: per task type, what came in, what was done and what failed within
the sliding window, against its SLOs (``skconsole status flow``; the console shows the
same figures in its depth panel). Each row takes the colour of its worse SLO state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from skconsole.core.durations import format_age
from skconsole.core.json_types import JsonObject
from skconsole.read import flow
from skconsole.read.query import Conn
from skconsole.views.registry import Table, View, ViewArgs
from skconsole.views.table import Cell, Column, Tone, figure_column

#: a row's tone by its worse SLO state
_TONES: dict[flow.SloState, Tone] = {
    flow.SloState.NONE: "",
    flow.SloState.OK: "good",
    flow.SloState.WARNING: "warn",
    flow.SloState.BREACHED: "bad",
}


def failure_share(failed: int, finished: int, max_rate: float | None = None) -> Cell:
    """The share of the jobs finished in the window that failed, as the console shows it
    (a type's in panel 1, a queue's in the overview): "" when none finished; coloured by
    the max failure rate when there is one (amber over it, red over twice it), else amber
    from FAILURE_RATE_NOTABLE and red when every job failed (both from
    FAILURE_RATE_MIN_FINISHED finished jobs)."""
    rate = flow.failure_rate(failed, finished)
    if rate is None:
        return ""
    text = flow.percent_text(rate)
    state = flow.failure_state(max_rate, failed, finished)
    if state is not flow.SloState.NONE:
        return (text, _TONES[state])
    if finished < flow.FAILURE_RATE_MIN_FINISHED or rate < flow.FAILURE_RATE_NOTABLE:
        return text
    return (text, "bad" if rate >= 1.0 else "warn")


@dataclass(frozen=True)
class Flow:
    window_s: float
    types: list[flow.TypeFlow]

    def as_dict(self) -> JsonObject:
        return {"window_s": self.window_s, "types": [r.as_dict() for r in self.types]}


def _figure(key: str, text: Callable[[flow.TypeFlow], str], priority: int) -> Column[flow.TypeFlow]:
    """A right-aligned figure of the row, ``text(row)``."""
    return figure_column(key, 8, lambda r, _: text(r), priority=priority)


COLUMNS: tuple[Column[flow.TypeFlow], ...] = (
    Column(
        "type",
        "type",
        24,
        flex=True,
        cell=lambda r, _: r.task_type + (" (paused)" if r.paused else ""),
    ),
    _figure("in/min", lambda r: flow.rate_text(r.arrivals_per_min), 2),
    _figure("done/min", lambda r: flow.rate_text(r.completions_per_min), 2),
    _figure("failed", lambda r: r.failures_text, 1),
    _figure("ready", lambda r: ("≈" if r.ready_estimated else "") + f"{r.ready:,}", 1),
    _figure("drain", lambda r: r.drain_text, 1),
    _figure("oldest ready", lambda r: format_age(r.oldest_ready_s), 3),
    _figure("max wait", lambda r: format_age(r.slo_max_wait_s), 4),
    _figure("SLO", lambda r: r.slo_text, 1),
    _figure("max failed", lambda r: flow.percent_text(r.slo_max_failure_rate), 4),
)


def _title(f: Flow) -> str:
    estimated = any(r.ready_estimated for r in f.types)
    return (
        f"Flow per type, rates over the last {format_age(f.window_s)}"
        " (done: succeeded; the drain counts only those)"
        + (" (ready estimated from a sample)" if estimated else "")
    )


def _read(conn: Conn, args: ViewArgs) -> Flow:
    return Flow(args.window_s, flow.flow(conn, args.window_s))


FLOW: View[Flow] = View(
    "flow",
    _read,
    Flow.as_dict,
    Table(COLUMNS, lambda f: f.types, _title, row_tone=lambda r: _TONES[r.worst_state]),
)
