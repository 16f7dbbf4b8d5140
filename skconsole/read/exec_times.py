"""Execution times per task type (the ``stats`` view), from two populations kept apart:
every run the processes reported (the per-process aggregates Stakhanovise.NET's
writers keep, summed) and the latest processed jobs (their own count, average,
percentiles, fastest, longest and latest)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any

from skconsole.core.json_types import JsonObject
from skconsole.read.query import Conn, fetch

RECENT_WINDOW_S = 3600.0
RECENT_LIMIT = 10_000


@dataclass
class TypeTimes:
    """Execution times of one task type, in milliseconds, from two populations.

    Every run the processes reported (sk_task_execution_time_stats_t, summed
    over processes, since they started counting): ``cycles``, ``total_ms``
    (``avg_ms``), ``fastest_ms``, ``longest_ms`` and ``last_ms`` (the largest
    "last" a process reported).

    The recent runs: the type's processed jobs among the latest RECENT_LIMIT
    of all types within RECENT_WINDOW_S (``sample`` of them): ``recent_avg_ms``,
    the percentiles, ``recent_fastest_ms``, ``recent_longest_ms`` and
    ``recent_last_ms`` (the latest one's). Every one of them is of the same
    jobs, so a percentile never exceeds ``recent_longest_ms``; a face shows one
    population a row, and says which.
    """

    task_type: str
    cycles: int
    total_ms: int
    fastest_ms: int | None
    longest_ms: int | None
    last_ms: int | None
    sample: int
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    recent_avg_ms: float | None = None
    recent_fastest_ms: int | None = None
    recent_longest_ms: int | None = None
    recent_last_ms: int | None = None

    @property
    def avg_ms(self) -> float | None:
        return self.total_ms / self.cycles if self.cycles else None

    def as_dict(self) -> JsonObject:
        return {**asdict(self), "avg_ms": self.avg_ms}


def _whole(v: int | Decimal | None) -> int | None:
    return int(v) if v is not None else None


def _times(
    *, cycles: Decimal | None, total_ms: Decimal | None, pct: list[float] | None, **cols: Any
) -> TypeTimes:
    """Sums are numeric in SQL (they never overflow, whatever another application wrote)."""
    p50, p95, p99 = pct if pct is not None else (None, None, None)
    return TypeTimes(
        task_type=cols["task_type"],
        cycles=int(cycles or 0),
        total_ms=int(total_ms or 0),
        fastest_ms=_whole(cols["fastest_ms"]),
        longest_ms=_whole(cols["longest_ms"]),
        last_ms=_whole(cols["last_ms"]),
        sample=int(cols["sample"]),
        p50_ms=p50,
        p95_ms=p95,
        p99_ms=p99,
        recent_avg_ms=cols["recent_avg_ms"],
        recent_fastest_ms=_whole(cols["recent_fastest_ms"]),
        recent_longest_ms=_whole(cols["recent_longest_ms"]),
        recent_last_ms=_whole(cols["recent_last_ms"]),
    )


def execution_stats(
    conn: Conn, *, window_s: float = RECENT_WINDOW_S, recent_limit: int = RECENT_LIMIT
) -> list[TypeTimes]:
    """Execution-time statistics per task type (see :class:`TypeTimes`)."""
    params = {"window_s": window_s, "recent_limit": recent_limit}
    return fetch(conn, "execution_stats", _times, params)
