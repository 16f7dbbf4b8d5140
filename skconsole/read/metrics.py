"""App metrics (sk_metrics_t) over the processes that write them, and their rates.

Stakhanovise.NET's processes and ours write absolute values per process; how
a metric adds up over processes depends on its kind (:class:`MetricKind`,
decided in metrics.sql from the metric's id). Rates come from two snapshots
(:func:`metric_rates`), taken by the caller at the cadence it wants.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from skconsole.core.json_types import JsonObject
from skconsole.db.schema import RETIRED_METRICS_OWNER
from skconsole.read.query import Conn, fetch, iso


class MetricKind(enum.Enum):
    """How a metric adds up over processes (metrics.sql decides it from the id)."""

    SUM = "sum"  # a counter or a total: summed
    MIN = "min"  # each process's minimum: the least
    MAX = "max"  # each process's maximum: the greatest


@dataclass(frozen=True)
class Metric:
    category: str
    metric_id: str
    #: over processes by ``kind``; None: no process has a value yet (a .NET process
    #: starts its minimum and maximum metrics at long.MaxValue and long.MinValue)
    value: int | None
    processes: int
    updated_at: datetime | None
    kind: MetricKind = MetricKind.SUM


def _metric(*, value: Decimal | int | None, kind: str, **cols: Any) -> Metric:
    """The sum is numeric in SQL (it never overflows, whatever the rows hold)."""
    return Metric(value=int(value) if value is not None else None, kind=MetricKind(kind), **cols)


@dataclass(frozen=True)
class MetricsSnapshot:
    """App metrics over owner processes (each by its kind), read at ``taken_at`` (caller's
    clock)."""

    metrics: tuple[Metric, ...]
    taken_at: float = 0.0

    def values(self) -> dict[str, int | None]:
        return {m.metric_id: m.value for m in self.metrics}

    def counters(self) -> dict[str, int]:
        """The summed metrics that have a value: the ones a rate means something for."""
        return {
            m.metric_id: m.value
            for m in self.metrics
            if m.kind is MetricKind.SUM and m.value is not None
        }

    def by_category(self) -> dict[str, list[Metric]]:
        out: dict[str, list[Metric]] = {}
        for m in self.metrics:
            out.setdefault(m.category, []).append(m)
        return out

    def as_dict(self, rates: Mapping[str, float | None] | None = None) -> JsonObject:
        return {
            "categories": {
                category: [
                    {
                        "metric_id": m.metric_id,
                        "kind": m.kind.value,
                        "value": m.value,
                        "processes": m.processes,
                        "updated_at": iso(m.updated_at),
                        "rate_per_s": (rates or {}).get(m.metric_id),
                    }
                    for m in ms
                ]
                for category, ms in self.by_category().items()
            }
        }


def metrics(conn: Conn, *, taken_at: float = 0.0) -> MetricsSnapshot:
    """App metrics by category, over owner processes (see :class:`MetricKind`)."""
    rows = fetch(conn, "metrics", _metric, {"retired": RETIRED_METRICS_OWNER})
    return MetricsSnapshot(tuple(rows), taken_at)


def metric_rates(
    before: MetricsSnapshot, after: MetricsSnapshot, elapsed_s: float
) -> dict[str, float | None]:
    """Per-second rate of each summed metric of ``after`` since ``before`` (a pure
    function); a minimum or maximum has none.

    None where no rate can be told: no elapsed time, a metric absent from
    ``before``, or a value that went down (a process's rows were deleted).
    """
    old = before.counters()
    rates: dict[str, float | None] = {}
    for metric_id, value in after.counters().items():
        prev = old.get(metric_id)
        if elapsed_s <= 0 or prev is None or value < prev:
            rates[metric_id] = None
        else:
            rates[metric_id] = (value - prev) / elapsed_s
    return rates
