"""Panel 4: execution time per task type, with percentiles."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.tui.formatting import fmt_int, fmt_ms
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.keyed_table import Column, Row
from skconsole.tui.widgets.panel import Panel


class ExecPanel(Panel):
    scope = "exec"
    title = "Execution time"
    short_title = "Exec times"
    COLUMNS = (
        Column("type", "type", 24, flex=True),
        Column("runs", "runs", 9, right=True),
        Column("avg", "avg", 8, right=True),
        Column("p50", "p50", 8, right=True),
        Column("p95", "p95", 8, right=True),
        Column("p99", "p99", 8, right=True),
        Column("fastest", "fastest", 8, right=True),
        Column("longest", "longest", 8, right=True),
        Column("last", "last", 8, right=True),
    )

    def rows(self, snapshot: Snapshot) -> Sequence[Row]:
        return [
            (
                s.task_type,
                (
                    s.task_type,
                    fmt_int(s.cycles),
                    fmt_ms(s.avg_ms),
                    fmt_ms(s.p50_ms),
                    fmt_ms(s.p95_ms),
                    fmt_ms(s.p99_ms),
                    fmt_ms(s.fastest_ms),
                    fmt_ms(s.longest_ms),
                    fmt_ms(s.last_ms),
                ),
            )
            for s in snapshot.exec_stats
        ]

    def summarize(self, snapshot: Snapshot) -> str:
        return f"{sum(s.cycles for s in snapshot.exec_stats):,} runs"
