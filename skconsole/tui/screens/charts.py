"""The charts screen (key h): what the queue did over the last 15 min, hour, day or week.

Throughput, failed attempts by kind, and wait and run latency (p50, p95), for the whole
queue or one type, from the per-minute record (:mod:`skconsole.read.record`), which a
purge does not delete. The record is read in a worker thread (never on the UI thread)
when the screen opens, when the window changes, and again with the failure groups'
slower cadence (a week of steps is no read to make every refresh); cycling the types
(t) reads nothing: the read holds every type. A type with a wait SLO has it drawn
across its wait chart. Under the charts: where the record starts when the window
reaches before it, and that the figures come from the job rows on a database with
Stakhanovise.NET's tables alone.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content

from skconsole.core.text import printable
from skconsole.tui.chart_data import DEFAULT_WINDOW, WINDOWS, ChartData, Window, chart_set
from skconsole.tui.context import Console
from skconsole.tui.reads import ChartsRead
from skconsole.tui.screens.drilldown import DrillDownScreen
from skconsole.tui.widgets.charts_panel import ChartsPanel


class ChartsScreen(DrillDownScreen[ChartData, ChartsPanel]):
    """The charts of one window, for the whole queue or one type."""

    HEADER_ID = "charts-header"
    SCOPE = "charts"
    WHAT = "the record for the charts"
    #: a week of steps: read again on the failure groups' cadence, not every refresh
    FAILURE_DATA = True
    #: 1-4 choose a window (the panel keys of the main screen do not apply here)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(str(n), f"window({n - 1})", w.label, show=False)
        for n, w in enumerate(WINDOWS, start=1)
    ]

    def __init__(self, console: Console, types: list[str], task_type: str | None = None) -> None:
        super().__init__(console, ChartsPanel(id="charts"))
        #: None first: the whole queue, then each type
        self.choices: list[str | None] = [None, *types]
        self.task_type = task_type if task_type in types else None
        self.window: Window = DEFAULT_WINDOW
        self.data: ChartData | None = None

    # -- keys ------------------------------------------------------------------------------
    def action_window(self, index: int) -> None:
        self.choose_window(WINDOWS[index])

    def wider(self) -> None:
        """The next longer window (the longest stays)."""
        at = WINDOWS.index(self.window)
        self.choose_window(WINDOWS[min(at + 1, len(WINDOWS) - 1)])

    def narrower(self) -> None:
        """The next shorter window (the shortest stays)."""
        at = WINDOWS.index(self.window)
        self.choose_window(WINDOWS[max(at - 1, 0)])

    def next_type(self) -> None:
        """The whole queue, then each type in turn, then the whole queue again."""
        at = self.choices.index(self.task_type) if self.task_type in self.choices else 0
        self.task_type = self.choices[(at + 1) % len(self.choices)]
        self.show_header()
        if self.data is not None:
            self.show(self.data)

    def choose_window(self, window: Window) -> None:
        if window is not self.window:
            self.window = window
            self.show_header()
            self.body.loading = True
            self.reload()

    # -- the drill-down's parts -----------------------------------------------------------
    def show_header(self) -> None:
        whom = "every type" if self.task_type is None else self.task_type
        windows = "  ".join(
            f"[{n}] {w.label}" if w is self.window else f" {n}  {w.label}"
            for n, w in enumerate(WINDOWS, start=1)
        )
        lines = [f"Charts  {whom}  ·  t: next type", f"{windows}  ·  ←/→ window"]
        if self.data is not None and self.data.window == self.window:
            lines.extend(chart_set(self.data, self.task_type).notes)
        self.header.update(Content("\n".join(printable(line) for line in lines)))

    def fetch(self) -> ChartData:
        return self.console.source.read(ChartsRead(self.window))

    def show(self, data: ChartData) -> None:
        if data.window != self.window:  # a read of the window before: another follows
            self.reload()
            return
        self.data = data
        self.body.show(chart_set(data, self.task_type))
        self.show_header()
