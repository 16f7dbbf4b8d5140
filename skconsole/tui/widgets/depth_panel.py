"""Panel 1: queue depth per task type, with a trend of the waiting count."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.tui.formatting import fmt_int, format_age, spark
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.keyed_table import Cell, Column, Row
from skconsole.tui.widgets.panel import Panel


class DepthPanel(Panel):
    scope = "depth"
    title = "Queue depth"
    tabbed = False
    COLUMNS = (
        Column("type", "type", 22, flex=True),
        Column("ready", "ready", 7, right=True),
        Column("scheduled", "scheduled", 9, right=True),
        Column("in_flight", "in flight", 9, right=True),
        Column("oldest", "oldest", 7, right=True),
        Column("paused", "paused", 6),
        Column("trend", "trend", 12),
    )

    def rows(self, snapshot: Snapshot) -> Sequence[Row]:
        out: list[Row] = []
        for d in snapshot.depth:
            age = format_age(d.oldest_ready_s)
            stale = d.oldest_ready_s is not None and d.oldest_ready_s > 300
            oldest: Cell = (age, "warn") if stale else age
            out.append(
                (
                    d.task_type,
                    (
                        d.task_type,
                        fmt_int(d.ready),
                        fmt_int(d.scheduled),
                        fmt_int(d.in_flight),
                        oldest,
                        ("paused", "warn") if d.paused else "",
                        (spark(d.trend, 12), "accent"),
                    ),
                )
            )
        return out

    def summarize(self, snapshot: Snapshot) -> str:
        ready = sum(d.ready for d in snapshot.depth)
        scheduled = sum(d.scheduled for d in snapshot.depth)
        flight = sum(d.in_flight for d in snapshot.depth)
        return f"{ready:,} ready · {scheduled:,} scheduled · {flight:,} in flight"
