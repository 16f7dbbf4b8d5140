"""The execution-times view: per task type, the figures of its recent runs.

Every figure of a row is of the same runs, the type's recent processed jobs
(:func:`exec_window` says which); the JSON also has every run the processes
reported. The console's panel 4 and ``skconsole status stats`` draw these columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skconsole import read
from skconsole.core.durations import format_age
from skconsole.core.figures import fmt_int, fmt_ms
from skconsole.core.json_types import JsonObject
from skconsole.read.query import Conn
from skconsole.views.registry import Table, View, ViewArgs
from skconsole.views.table import Column, figure_column, type_column


def exec_window(
    window_s: float = read.RECENT_WINDOW_S, recent_limit: int = read.RECENT_LIMIT
) -> str:
    """Which runs a row of execution times is of, in words (the panel's title, the
    table's): "in the last 1h, the latest 10,000 jobs at most"."""
    whole = int(window_s)
    span = (
        f"{whole // 3600}h"
        if whole % 3600 == 0 and whole
        else (f"{whole // 60} min" if whole % 60 == 0 and whole else format_age(window_s))
    )
    return f"in the last {span}, the latest {recent_limit:,} jobs at most"


@dataclass(frozen=True)
class ExecTimes:
    """Execution times per type. A row of the table is the recent runs alone
    (:func:`exec_window`); the JSON also has every run the processes reported."""

    types: list[read.TypeTimes]
    window_s: float = read.RECENT_WINDOW_S
    recent_limit: int = read.RECENT_LIMIT

    @property
    def window(self) -> str:
        return exec_window(self.window_s, self.recent_limit)

    def as_dict(self) -> JsonObject:
        return {
            "window_s": self.window_s,
            "recent_limit": self.recent_limit,
            "types": [r.as_dict() for r in self.types],
        }


def _ms(
    key: str, of: Callable[[read.TypeTimes], float | None], priority: int
) -> Column[read.TypeTimes]:
    """One of a type's figures in its most readable unit (4ms, 1.2s), headed by its key."""
    return figure_column(key, 8, lambda s, _: fmt_ms(of(s)), priority=priority)


COLUMNS: tuple[Column[read.TypeTimes], ...] = (
    type_column(24, flex=True),
    figure_column("runs", 9, lambda s, _: fmt_int(s.sample), priority=1),
    _ms("avg", lambda s: s.recent_avg_ms, 6),
    _ms("p50", lambda s: s.p50_ms, 2),
    _ms("p95", lambda s: s.p95_ms, 3),
    _ms("p99", lambda s: s.p99_ms, 4),
    _ms("fastest", lambda s: s.recent_fastest_ms, 8),
    _ms("longest", lambda s: s.recent_longest_ms, 7),
    _ms("last", lambda s: s.recent_last_ms, 9),
)


def _notes(e: ExecTimes) -> Sequence[str]:
    return (
        f"every run the processes reported: {sum(r.cycles for r in e.types):,}"
        " (their count, average, fastest and longest: --json)",
    )


def _read(conn: Conn, args: ViewArgs) -> ExecTimes:
    return ExecTimes(read.execution_stats(conn))


EXEC_TIMES: View[ExecTimes] = View(
    "stats",
    _read,
    ExecTimes.as_dict,
    Table(
        COLUMNS,
        lambda e: e.types,
        lambda e: f"Execution time per type, runs {e.window}",
        _notes,
    ),
)
