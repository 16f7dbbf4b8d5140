"""Panel 4: execution time per task type: every figure of a row is of the same runs,
the type's recent processed jobs, and the title says which (``catalog.exec_window``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from skconsole.read import TypeTimes
from skconsole.tui.formatting import fmt_int, fmt_ms
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.panel import TypesPanel
from skconsole.views.catalog import exec_window
from skconsole.views.table import Column, figure_column, type_column


def _ms(key: str, of: Callable[[TypeTimes], float | None]) -> Column[TypeTimes]:
    """One of a type's figures in milliseconds, headed by its key."""
    return figure_column(key, 8, lambda s, _: fmt_ms(of(s)))


class ExecPanel(TypesPanel):
    scope = "exec"
    title = "Execution time"
    short_title = "Exec times"
    COLUMNS: ClassVar[tuple[Column[TypeTimes], ...]] = (
        type_column(24, flex=True),
        figure_column("runs", 9, lambda s, _: fmt_int(s.sample)),
        _ms("avg", lambda s: s.recent_avg_ms),
        _ms("p50", lambda s: s.p50_ms),
        _ms("p95", lambda s: s.p95_ms),
        _ms("p99", lambda s: s.p99_ms),
        _ms("fastest", lambda s: s.recent_fastest_ms),
        _ms("longest", lambda s: s.recent_longest_ms),
        _ms("last", lambda s: s.recent_last_ms),
    )
    opens = "the type's most recent jobs (a search)"

    def items(self, snapshot: Snapshot) -> Sequence[TypeTimes]:
        return snapshot.exec_stats

    def summarize(self, snapshot: Snapshot) -> str:
        runs = sum(s.sample for s in snapshot.exec_stats)
        return f"{runs:,} runs {exec_window()}"
