"""The charts screen's four charts (throughput, failures, wait, run), drawn by plotext.

Why textual-plotext (Textualize's wrapper of plotext) rather than textual-plot (a native
Textual widget): textual-plot 0.10 needs numpy and textual-hires-canvas, which needs
Textual 6.2 or later; the console supports Textual from 3.1 (the oldest-versions CI
phase installs it), and numpy would be the console's largest dependency by far, for
four line charts. textual-plotext needs neither (plotext is pure Python, no
dependency), draws the time labels, a y label and a legend as plotext always has, and
its output is plain text, so the snapshot tests compare it like any other screen. What
it costs: it reaches into plotext's internals and is capped below plotext 6, so both
are pinned (constraints.txt), and an upgrade is checked by the snapshots.

What a chart says is shaped in :mod:`skconsole.tui.chart_data`; this only draws it.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Grid, Vertical
from textual.content import Content
from textual.widgets import Static
from textual_plotext import PlotextPlot

from skconsole.tui.chart_data import (
    THRESHOLD_COLOR,
    Chart,
    ChartSet,
    ticks_for_width,
    y_ticks,
)

#: the charts in their grid, left to right, top to bottom
CHART_IDS = ("chart-throughput", "chart-failures", "chart-wait", "chart-run")


class ChartsPanel(Grid):
    """Two by two charts over the same window and steps (drawn again on a resize: the
    time labels a chart has room for depend on its width)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.shown: ChartSet | None = None

    def compose(self) -> ComposeResult:
        for chart_id in CHART_IDS:
            with Vertical(classes="chart"):
                yield Static("", id=f"{chart_id}-legend", classes="chart-legend")
                yield PlotextPlot(id=chart_id)

    def on_resize(self) -> None:
        if self.shown is not None:
            self.call_after_refresh(self.show, self.shown)

    def show(self, charts: ChartSet) -> None:
        self.shown = charts
        for chart_id, chart in zip(CHART_IDS, charts.charts, strict=True):
            plot = self.query_one(f"#{chart_id}", PlotextPlot)
            draw(plot, chart, charts)
            plot.refresh()
            self.query_one(f"#{chart_id}-legend", Static).update(legend(chart))


def legend(chart: Chart) -> Content:
    """The chart's y unit and a key of its lines, in a row of their own above it (a legend
    inside a chart covers its data at 80 columns); each line's mark in its colour."""
    keys: list[tuple[str, str]] = [(line.label, line.color) for line in chart.lines]
    if chart.threshold is not None:
        keys.append((chart.threshold.label, THRESHOLD_COLOR))
    parts: list[str | tuple[str, str]] = [(chart.y_label, "bold")]
    for label, color in keys:
        parts += [" ", ("━", color), f" {label}"]
    return Content.assemble(*parts)


#: rows of a plot that are not its data: the title, the frame's two, the time labels
_PLOT_FRAME_ROWS = 4


def y_tick_count(height: int) -> int:
    """How many steps up the y axis a plot ``height`` rows high has room for, two rows
    apart at least: two labels on one row would have plotext pick one of them, not
    always the same one."""
    rows = height - _PLOT_FRAME_ROWS
    return 4 if rows >= 8 else 2 if rows >= 4 else 1


def rgb(color: str) -> tuple[int, int, int]:
    """``#rrggbb`` as plotext takes a colour of its own choosing."""
    return (int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16))


def draw(plot: PlotextPlot, chart: Chart, charts: ChartSet) -> None:
    """One chart on ``plot``: its lines over the window's steps, the threshold as a line
    across, as many time labels as its width holds, round figures up the y axis (the
    legend and the y unit are the row above: :func:`legend`)."""
    plt = plot.plt
    plt.clear_data()
    plt.clear_figure()
    last = max(charts.steps - 1, 1)
    plt.xlim(0, last)
    for line in chart.lines:
        xs, ys = line.points()
        if xs:
            plt.plot(xs, ys, color=rgb(line.color), marker="braille")
    if chart.threshold is not None:
        plt.plot(
            [0, last],
            [chart.threshold.value] * 2,
            color=rgb(THRESHOLD_COLOR),
            marker="braille",
        )
    figures = y_ticks(chart.top, y_tick_count(plot.size.height))
    plt.ylim(0, figures[-1][0])
    plt.yticks([v for v, _ in figures], [label for _, label in figures])
    # the y axis' labels and the frame take about 8 columns of the plot's width
    shown = ticks_for_width(list(charts.times), charts.tick_format, plot.size.width - 8)
    plt.xticks([i for i, _ in shown], [label for _, label in shown])
    plt.title(chart.title)
