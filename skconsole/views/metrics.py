"""The metrics view: application metrics (Stakhanovise ids) over processes, with rates.

Sums, and the least minimum or greatest maximum of those kept per process. The
console's panel 5 and ``skconsole status metrics`` draw these columns; the rates
are of two reads some time apart (the console's refreshes; ``--sample`` for the CLI).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from skconsole import read
from skconsole.core.figures import fmt_int, fmt_rate
from skconsole.core.json_types import JsonObject
from skconsole.read.query import Conn
from skconsole.views.registry import Table, View, ViewArgs
from skconsole.views.table import Column, Face, figure_column


@dataclass(frozen=True)
class MetricRow:
    """A metric over processes and its rate per second."""

    metric_id: str
    category: str
    value: int | None  # None: no process has a minimum or maximum yet
    rate_per_s: float | None  # None until two samples are known
    processes: int | None = None


def metric_rows(
    snapshot: read.MetricsSnapshot, rates: dict[str, float | None]
) -> tuple[MetricRow, ...]:
    """Every metric of ``snapshot`` with its rate, by id."""
    return tuple(
        MetricRow(m.metric_id, m.category, m.value, rates.get(m.metric_id), m.processes)
        for m in sorted(snapshot.metrics, key=lambda m: m.metric_id)
    )


COLUMNS: tuple[Column[MetricRow], ...] = (
    Column("metric", "metric", 44, flex=True, cell=lambda m, _: m.metric_id),
    Column("category", "category", 34, priority=3, cell=lambda m, _: (m.category, "muted")),
    figure_column(
        "value",
        14,
        lambda m, _: fmt_int(m.value) if m.value is not None else ("none yet", "muted"),
    ),
    figure_column("rate", 12, lambda m, _: fmt_rate(m.rate_per_s), priority=1),
    Column(
        "processes",
        "processes",
        right=True,
        cell=lambda m, _: fmt_int(m.processes),
        priority=2,
        faces=Face.CLI,
    ),
)


@dataclass(frozen=True)
class RatedMetrics:
    """App metrics, with the rates of two reads ``sample_s`` apart (none when 0)."""

    snapshot: read.MetricsSnapshot
    rates: dict[str, float | None]
    sample_s: float

    def rows(self) -> tuple[MetricRow, ...]:
        return metric_rows(self.snapshot, self.rates)

    def as_dict(self) -> JsonObject:
        doc = self.snapshot.as_dict(self.rates)
        doc["rate_window_s"] = self.sample_s if self.sample_s > 0 else None
        return doc


def _read(conn: Conn, args: ViewArgs) -> RatedMetrics:
    first = read.metrics(conn, taken_at=time.monotonic())
    if args.sample_s <= 0:
        return RatedMetrics(first, {}, args.sample_s)
    time.sleep(args.sample_s)  # the rates' window: the caller asked for it
    second = read.metrics(conn, taken_at=time.monotonic())
    rates = read.metric_rates(first, second, second.taken_at - first.taken_at)
    return RatedMetrics(second, rates, args.sample_s)


METRICS: View[RatedMetrics] = View(
    "metrics",
    _read,
    RatedMetrics.as_dict,
    Table(
        COLUMNS,
        RatedMetrics.rows,
        lambda m: "App metrics (over processes: sums, least minimum, greatest maximum)",
    ),
)
