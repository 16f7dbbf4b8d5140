"""A fixed per-minute record (the charts screen's data, the failure groups' curves):
waves built from the frozen clock, so every chart draws the same on every run.

The record "starts" two days before the frozen clock, so the 7 d window shows the
note that says where it starts; payments.charge has the timeouts' failures, whose
group is first seen three minutes before the clock (a group the panel marks new).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from skconsole.core.latency import Histogram, bucket_of
from skconsole.read.record import Counts, Record, RecordSource
from skconsole.tui.chart_data import ChartData, Window, bounds
from skconsole.tui.showcase.fixed_data import TIMEOUT_SIG
from skconsole.tui.showcase.frozen import FROZEN_AT

#: the oldest minute of the fixed record
RECORD_STARTS_AT = FROZEN_AT - timedelta(days=2)
#: each type's jobs per minute (its mean), its failed share, its wait and run (ms)
_TYPES: dict[str, tuple[float, float, float, float]] = {
    "emails.send": (140.0, 0.01, 9_000.0, 420.0),
    "orders.ship": (12.0, 0.0, 1_800.0, 2_600.0),
    "payments.charge": (220.0, 0.12, 2_400.0, 310.0),
    "reports.nightly": (0.6, 0.0, 300.0, 45_000.0),
}
#: the wait SLOs of the fixed depth rows (seconds)
FIXED_SLOS = {"emails.send": 180.0, "orders.ship": 10.0, "payments.charge": 60.0}


def _hist(n: int, ms: float) -> Histogram:
    """``n`` attempts: four in five around ``ms``, the rest three times longer."""
    if n <= 0:
        return Histogram()
    slow = n // 5
    low, high = bucket_of(ms), bucket_of(ms * 3)
    counts = [0] * (high + 1)
    counts[low] += n - slow
    counts[high] += slow
    return Histogram(tuple(counts), ms * 3.4)


def _minute(task_type: str, at: datetime) -> Counts:
    """One type's minute: a daily swell and a faster ripple, from the minute's offset."""
    mean, failing, wait_ms, run_ms = _TYPES[task_type]
    t = (at - FROZEN_AT).total_seconds() / 60
    swell = 1 + 0.45 * math.sin(t / 229) + 0.15 * math.sin(t / 7)
    posted = round(mean * swell)
    failed = round(posted * failing * (1.6 if task_type == "payments.charge" and t > -45 else 1))
    succeeded = max(posted - failed, 0)
    load = 1 + 2 * max(math.sin(t / 240), 0) ** 2 + 0.8 * max(math.sin(t / 23), 0)
    return Counts(
        posted=posted,
        started=posted,
        succeeded=succeeded,
        failed_recoverable=failed - failed // 4,
        failed_faulted=failed // 4,
        reaped=1 if task_type == "emails.send" and int(t) % 97 == 0 else 0,
        wait=_hist(posted, wait_ms * load),
        run=_hist(posted, run_ms * (1 + 0.5 * math.sin(t / 300) ** 2)),
    )


def fixed_record(window: Window, now: datetime = FROZEN_AT) -> Record:
    """The fixed record over ``window`` at ``now``, every type, the failures of the
    timeouts' signature (payments.charge) as its signature rows."""
    since, until = bounds(window, now)
    by_type: dict[str, dict[datetime, Counts]] = {t: {} for t in _TYPES}
    by_signature: dict[tuple[str, str], dict[datetime, Counts]] = {}
    step = window.step
    at = since
    while at < until:
        for task_type in _TYPES:
            minutes = [
                at + timedelta(minutes=m)
                for m in range(int(step.total_seconds() // 60))
                if RECORD_STARTS_AT <= at + timedelta(minutes=m) <= now
            ]
            if minutes:
                total = Counts()
                for m in minutes:
                    total = total + _minute(task_type, m)
                by_type[task_type][at] = total
        at += step
    return Record(since, until, step, RecordSource.RECORD, RECORD_STARTS_AT, by_type, by_signature)


def fixed_curve(signature: str) -> tuple[int, ...]:
    """A failure group's failures per minute over the last hour: the timeouts climb
    since 02:27, the other groups ripple low."""
    if signature == TIMEOUT_SIG:
        return tuple(
            0 if i < 15 else round(4 + (i - 15) * 0.5 + 3 * math.sin(i / 3)) for i in range(60)
        )
    seed = sum(map(ord, signature)) % 7
    return tuple(max(round(1.2 * math.sin((i + seed) / 4)), 0) for i in range(60))


def fixed_charts(window: Window) -> ChartData:
    return ChartData(window, fixed_record(window), dict(FIXED_SLOS))
