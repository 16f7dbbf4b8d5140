"""The history view: what the queue did per step, from the per-minute record
(``skconsole status history``; the console's charts, key h, draw the same series).

The record (:mod:`skconsole.read.record`) is kept apart from the job rows, so a purge
or a retention pass does not take the history with it. The table shows per step the
jobs posted, succeeded and failed, the attempts reaped, and the p95 of the wait and run
times; ``--json`` is :meth:`Record.as_dict` (every figure, per type too). Where the
span reaches back before the record starts, or the figures come from the job rows (a
database with Stakhanovise.NET's tables alone), the lines below the table say so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from skconsole.core.figures import fmt_int, fmt_ms
from skconsole.core.json_types import JsonObject
from skconsole.read.query import Conn
from skconsole.read.record import FROM_ROWS_NOTE, Counts, Record, RecordSource, record
from skconsole.views.registry import Table, View, ViewArgs
from skconsole.views.table import Column, figure_column

#: the steps a default --step chooses from: the first that keeps a span within
#: :data:`MOST_STEPS_BY_DEFAULT` rows (a week by the hour, as the console's charts)
DEFAULT_STEPS = (
    timedelta(minutes=1),
    timedelta(minutes=15),
    timedelta(hours=1),
    timedelta(days=1),
)
MOST_STEPS_BY_DEFAULT = 170


def default_step(span: timedelta) -> timedelta:
    """The shortest of :data:`DEFAULT_STEPS` that cuts ``span`` into at most
    :data:`MOST_STEPS_BY_DEFAULT` steps."""
    return next(
        (s for s in DEFAULT_STEPS if span / s <= MOST_STEPS_BY_DEFAULT),
        DEFAULT_STEPS[-1],
    )


@dataclass(frozen=True)
class History:
    """The record over the span asked for, and the types asked for (none: every type)."""

    record: Record
    types: tuple[str, ...] = ()

    def as_dict(self) -> JsonObject:
        return self.record.as_dict()


@dataclass(frozen=True)
class Step:
    """One row of the table: a step's start and its counts (every type asked for)."""

    at: datetime
    counts: Counts


def steps(history: History) -> list[Step]:
    found = history.record
    return [Step(at, c) for at, c in zip(found.steps, found.series(), strict=True)]


COLUMNS: tuple[Column[Step], ...] = (
    Column("at", "step from", 16, cell=lambda s, _: f"{s.at:%Y-%m-%d %H:%M}"),
    figure_column("posted", 9, lambda s, _: fmt_int(s.counts.posted), priority=1),
    figure_column("succeeded", 9, lambda s, _: fmt_int(s.counts.succeeded), priority=1),
    figure_column(
        "failed",
        9,
        lambda s, _: (fmt_int(s.counts.failed), "bad" if s.counts.failed else ""),
        priority=1,
    ),
    figure_column("reaped", 7, lambda s, _: fmt_int(s.counts.reaped), priority=2),
    figure_column(
        "wait_p95", 10, lambda s, _: fmt_ms(s.counts.wait_latency.p95_ms), label="wait p95"
    ),
    figure_column("run_p95", 10, lambda s, _: fmt_ms(s.counts.run_latency.p95_ms), label="run p95"),
)


def _step_words(step: timedelta) -> str:
    minutes = int(step.total_seconds() // 60)
    if minutes % 1440 == 0:
        return "day" if minutes == 1440 else f"{minutes // 1440} days"
    if minutes % 60 == 0:
        return "hour" if minutes == 60 else f"{minutes // 60} h"
    return "minute" if minutes == 1 else f"{minutes} min"


def title(history: History) -> str:
    found = history.record
    whom = ", ".join(history.types) if history.types else "every type"
    return (
        f"Jobs per {_step_words(found.step)} from {found.since:%Y-%m-%d %H:%M}"
        f" to {found.until:%Y-%m-%d %H:%M} ({whom}; the last step may be partial)"
    )


def notes(history: History) -> list[str]:
    """What the reader must know: the figures come from the job rows, the span starts
    before the record does, no worker rolls the record."""
    found = history.record
    out = []
    if found.source is RecordSource.ROWS:
        out.append(FROM_ROWS_NOTE)
    elif found.starts_at is None:
        out.append("the record holds nothing yet")
    elif found.starts_at > found.since:
        out.append(f"the record starts at {found.starts_at:%Y-%m-%d %H:%M}: nothing before it")
    if found.unrolled_warning is not None:
        out.append(found.unrolled_warning)
    return out


def span(args: ViewArgs, now: datetime) -> tuple[datetime, datetime, timedelta]:
    """[since, until) and the step that ``args`` ask for at ``now``: --since (else
    --minutes) back from --until, in --step (else :func:`default_step`). Without
    --until the span ends with the step ``now`` falls in (partial), so two reads within
    a step read the same steps, as the console's charts do."""
    back = timedelta(seconds=args.since_s) if args.since_s is not None else None
    length = back or timedelta(minutes=args.minutes)
    step = timedelta(seconds=args.step_s) if args.step_s else default_step(length)
    if args.until is not None:
        until = args.until
    else:
        step_s = step.total_seconds()
        until = datetime.fromtimestamp(
            (math.floor(now.timestamp() / step_s) + 1) * step_s, tz=now.tzinfo
        )
    return until - length, until, step


def _read(conn: Conn, args: ViewArgs) -> History:
    since, until, step = span(args, datetime.now(UTC))
    found = record(conn, since=since, until=until, step=step, types=args.types or None)
    return History(found, args.types)


HISTORY: View[History] = View(
    "history",
    _read,
    History.as_dict,
    Table(COLUMNS, steps, title, notes),
)
