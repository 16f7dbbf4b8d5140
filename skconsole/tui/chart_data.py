"""The charts screen's figures, shaped from the per-minute record (no drawing here).

The record (:mod:`skconsole.read.record`) says what the queue did per step; a chart
wants lines of numbers over the same x positions, a few time labels under them and a
threshold to draw across. Shaping is kept apart from the widget that draws it
(:mod:`skconsole.tui.widgets.charts_panel`) so that what a chart says can be tested
without a terminal, and so that both sources (PostgreSQL and the fixed one) answer the
same request with a :class:`ChartData` that this turns into pictures the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from skconsole.core.latency import Latency
from skconsole.core.text import printable
from skconsole.read.record import FROM_ROWS_NOTE, Counts, Record, RecordSource


@dataclass(frozen=True)
class Window:
    """How far back the charts look and in what steps (each chart has at most ~170
    points: a terminal has no more columns to give them)."""

    key: str
    label: str
    span: timedelta
    step: timedelta
    #: how a tick under the x axis names its time (a week's: the day too)
    tick_format: str


WINDOWS: tuple[Window, ...] = (
    Window("15m", "15 min", timedelta(minutes=15), timedelta(minutes=1), "%H:%M"),
    Window("1h", "1 h", timedelta(hours=1), timedelta(minutes=1), "%H:%M"),
    Window("24h", "24 h", timedelta(hours=24), timedelta(minutes=15), "%H:%M"),
    Window("7d", "7 d", timedelta(days=7), timedelta(hours=1), "%a %d"),
)
BY_KEY: dict[str, Window] = {w.key: w for w in WINDOWS}
#: the lines' colours, readable on a dark and a light background
BLUE, GREEN, RED, AMBER, PURPLE, CYAN = (
    "#5c9ded",
    "#4caf50",
    "#e5484d",
    "#f5a524",
    "#c05bd6",
    "#26b5c8",
)
#: a threshold's colour (an SLO: red, as a breach is)
THRESHOLD_COLOR = RED
#: the window the screen opens on
DEFAULT_WINDOW = BY_KEY["1h"]
#: at most this many time labels under a chart (they must not run into one another)
MAX_TICKS = 6
#: latencies above this many milliseconds are drawn in seconds (a 7 d wait in ms is a
#: number too long for the y axis)
SECONDS_FROM_MS = 10_000.0


def bounds(window: Window, now: datetime) -> tuple[datetime, datetime]:
    """[since, until) of ``window`` at ``now``: whole steps, the last one the step ``now``
    falls in (partial), so the same window read twice within a step has the same steps."""
    step_s = window.step.total_seconds()
    end = (math.floor(now.timestamp() / step_s) + 1) * step_s
    until = datetime.fromtimestamp(end, tz=now.tzinfo)
    return until - window.span, until


@dataclass(frozen=True)
class ChartData:
    """What the charts screen reads (:class:`skconsole.tui.reads.ChartsRead`): the record
    over the window, every type, and each type's wait SLO (seconds)."""

    window: Window
    record: Record
    slo_wait_s: dict[str, float]


@dataclass(frozen=True)
class Line:
    """One curve: its legend, a value per step (None: nothing to say at that step, as a
    latency where nothing ran) and its colour (``#rrggbb``: the chart and its legend
    draw the same colour whatever the terminal's palette)."""

    label: str
    values: tuple[float | None, ...]
    color: str

    def points(self) -> tuple[list[int], list[float]]:
        """The x positions and values of the steps that have a value."""
        pairs = [(i, v) for i, v in enumerate(self.values) if v is not None]
        return [i for i, _ in pairs], [v for _, v in pairs]


@dataclass(frozen=True)
class Threshold:
    """A horizontal line across a chart (an SLO), with its legend."""

    label: str
    value: float


@dataclass(frozen=True)
class Chart:
    title: str
    y_label: str
    lines: tuple[Line, ...]
    threshold: Threshold | None = None

    @property
    def top(self) -> float:
        """The highest value drawn, the threshold's included (0: nothing above zero)."""
        values = [v for line in self.lines for v in line.values if v is not None]
        if self.threshold is not None:
            values.append(self.threshold.value)
        return max(values, default=0.0)


@dataclass(frozen=True)
class ChartSet:
    """Everything the screen draws for one window and type: the charts over one x axis
    (step 0 the oldest), the time labels under it, and what the reader must be told."""

    title: str
    #: the start of each step, oldest first (the x axis: step i at position i)
    times: tuple[datetime, ...]
    #: how a time label under the x axis names its step
    tick_format: str
    charts: tuple[Chart, ...]
    notes: tuple[str, ...]

    @property
    def steps(self) -> int:
        return len(self.times)


def ticks(
    steps: list[datetime], tick_format: str, most: int = MAX_TICKS
) -> tuple[tuple[int, str], ...]:
    """At most ``most`` evenly spaced time labels over the steps, the last step included."""
    n = len(steps)
    if n == 0 or most <= 0:
        return ()
    if n <= most:
        chosen = list(range(n))
    elif most == 1:
        chosen = [n - 1]
    else:
        every = math.ceil((n - 1) / (most - 1))
        chosen = list(range(n - 1, -1, -every))[::-1]
    return tuple((i, steps[i].strftime(tick_format)) for i in chosen)


def ticks_for_width(
    steps: list[datetime], tick_format: str, width: int
) -> tuple[tuple[int, str], ...]:
    """As many time labels as fit under a chart ``width`` columns wide (each with room
    around it, at most :data:`MAX_TICKS`)."""
    if not steps:
        return ()
    label = len(steps[0].strftime(tick_format))
    return ticks(steps, tick_format, min(MAX_TICKS, max(1, width // (label + 5))))


def nice_top(top: float) -> float:
    """The y axis' top: ``top`` rounded up to 1, 2, 2.5 or 5 times a power of ten."""
    if top <= 0:
        return 1.0
    power = float(10 ** math.floor(math.log10(top)))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= top)


def figure_label(value: float) -> str:
    """A y axis label, short: 0, 2.5, 40, 1.2k, 25k, 1.5M."""
    for size, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"


def y_ticks(top: float, count: int = 4) -> tuple[tuple[float, str], ...]:
    """``count`` + 1 labels from 0 to a round top at or above ``top``."""
    high = nice_top(top)
    return tuple((high * i / count, figure_label(high * i / count)) for i in range(count + 1))


def _per_step(series: list[Counts], figure: str, known: list[bool]) -> tuple[float | None, ...]:
    """One figure per step; None where the record knows nothing (before it starts)."""
    return tuple(
        float(getattr(c, figure)) if k else None for c, k in zip(series, known, strict=True)
    )


def known_steps(record: Record) -> list[bool]:
    """Whether the record can speak for each step: a step that ends before the record's
    first minute is unknown, not quiet (a zero there would be a claim)."""
    starts = record.starts_at
    if record.source is RecordSource.ROWS or starts is None:
        return [True] * len(record.steps)
    return [at + record.step > starts for at in record.steps]


def _latency_unit(latencies: list[Latency], threshold_ms: float | None) -> tuple[str, float]:
    """ms, or s when the longest figure would be too long a number for the axis."""
    figures = [f for lat in latencies for f in (lat.p50_ms, lat.p95_ms) if f is not None]
    if threshold_ms is not None:
        figures.append(threshold_ms)
    return ("s", 1000.0) if figures and max(figures) >= SECONDS_FROM_MS else ("ms", 1.0)


def _latency_chart(
    title: str, latencies: list[Latency], slo_s: float | None, slo_label: str
) -> Chart:
    threshold_ms = None if slo_s is None else slo_s * 1000.0
    unit, per = _latency_unit(latencies, threshold_ms)

    def scaled(v: float | None) -> float | None:
        return None if v is None else v / per

    lines = (
        Line("p50", tuple(scaled(lat.p50_ms) for lat in latencies), CYAN),
        Line("p95", tuple(scaled(lat.p95_ms) for lat in latencies), PURPLE),
    )
    threshold = None if threshold_ms is None else Threshold(slo_label, threshold_ms / per)
    return Chart(title, unit, lines, threshold)


def record_notes(record: Record) -> tuple[str, ...]:
    """What the reader must know of the record under the charts: read from the job rows
    (a Stakhanovise.NET database), a window reaching back before the record starts, no
    worker rolling the record."""
    notes = []
    if record.source is RecordSource.ROWS:
        notes.append(FROM_ROWS_NOTE)
    elif record.starts_at is None:
        notes.append("the record holds nothing yet: the charts fill as jobs are posted and run")
    elif record.starts_at > record.since:
        notes.append(
            f"the record starts at {record.starts_at.strftime('%Y-%m-%d %H:%M')}:"
            " nothing is known before it"
        )
    if record.unrolled_warning is not None:
        notes.append(record.unrolled_warning)
    return tuple(notes)


def chart_set(data: ChartData, task_type: str | None) -> ChartSet:
    """The four charts of one window, for one type or the whole queue (None): throughput,
    failures by kind, wait and run latency (the type's wait SLO across the wait chart)."""
    record, window = data.record, data.window
    series = record.series(task_type)
    known = known_steps(record)
    per = {60: "min", 3600: "hour"}.get(int(window.step.total_seconds()), _step_text(window.step))
    throughput = Chart(
        f"Throughput (jobs per {per})",
        "jobs",
        (
            Line("posted", _per_step(series, "posted", known), BLUE),
            Line("succeeded", _per_step(series, "succeeded", known), GREEN),
            Line("failed", _per_step(series, "failed", known), RED),
        ),
    )
    failures = Chart(
        f"Failed attempts (per {per})",
        "attempts",
        (
            Line("retried", _per_step(series, "failed_recoverable", known), AMBER),
            Line("faulted", _per_step(series, "failed_faulted", known), RED),
            Line("fatal", _per_step(series, "failed_fatal", known), PURPLE),
            Line("reaped", _per_step(series, "reaped", known), CYAN),
        ),
    )
    slo = data.slo_wait_s.get(task_type) if task_type is not None else None
    wait = _latency_chart(
        "Wait once due", [c.wait_latency for c in series], slo, f"SLO {_seconds_text(slo)}"
    )
    run = _latency_chart("Run time", [c.run_latency for c in series], None, "")
    whom = "every type" if task_type is None else printable(task_type)
    return ChartSet(
        f"{whom} · last {window.label} · step {_step_text(window.step)}",
        tuple(record.steps),
        window.tick_format,
        (throughput, failures, wait, run),
        record_notes(record),
    )


def _step_text(step: timedelta) -> str:
    minutes = int(step.total_seconds() // 60)
    return f"{minutes // 60} h" if minutes % 60 == 0 else f"{minutes} min"


def _seconds_text(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds:g} s" if seconds < 120 else f"{seconds / 60:g} min"
