"""The overview of several queues: each queue read on a loop of its own (what
``skconsole check`` reads, within its bound), so one that does not answer holds up
neither the others nor the screen. The App owns one of these when it watches
several queues; it only asks it to read, pause, show and say its status line (going
to the overview and back, and switching queues, is :mod:`~skconsole.tui.queue_switch`'s)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, Protocol

from textual.screen import Screen

from skconsole.tui import cadences
from skconsole.tui.formatting import first_line
from skconsole.tui.model import QueueOverview, QueueRow
from skconsole.tui.polling import Loops, PollHost, PollLoop, backoff
from skconsole.tui.reads import OVERVIEW
from skconsole.tui.screens.overview import OverviewScreen
from skconsole.tui.source import DataSource, Queue
from skconsole.tui.widgets.status_bar import StatusState


class OverviewHost(PollHost, Protocol):
    """What the overview needs of the App."""

    interval: float
    live_refresh: bool
    clock: Callable[[], float]

    @property
    def is_running(self) -> bool: ...

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...

    def status_state(self) -> StatusState: ...

    def status_changed(self) -> None: ...


class QueueOverviews(Loops):
    """Every queue's latest overview (or why there is none), read on loops of their own
    (by queue name; what is done to all of them at once: :class:`Loops`), and which queue
    the panels show (``shown``, by name; first the one whose source is ``shown``)."""

    def __init__(self, host: OverviewHost, queues: Sequence[Queue], shown: DataSource) -> None:
        self.host = host
        self.queues = tuple(queues)
        self.shown = next((q.name for q in self.queues if q.source is shown), None)
        self.overviews: dict[str, QueueOverview] = {}
        self.errors: dict[str, str] = {}
        super().__init__({q.name: self._loop(q) for q in queues})

    def _loop(self, queue: Queue) -> PollLoop[QueueOverview]:
        host = self.host
        return PollLoop(
            host,
            f"overview:{queue.name}",
            partial(queue.source.read, OVERVIEW),
            lambda _value: self.show(),
            every=lambda: max(host.interval, cadences.OVERVIEW_EVERY_S),
            on_done=lambda value, _ms: self._read(queue.name, value),
            on_error=lambda error: self._failed(queue.name, error),
            retry=lambda failures: backoff(failures, host.interval, cadences.MAX_BACKOFF_S),
            auto=host.live_refresh,
        )

    def _read(self, name: str, overview: QueueOverview) -> None:
        self.overviews[name] = overview
        self.errors.pop(name, None)

    def _failed(self, name: str, error: BaseException) -> None:
        self.errors[name] = first_line(str(error), 160) or type(error).__name__
        self.show()

    # -- what the overview shows ---------------------------------------------------------
    def rows(self) -> tuple[QueueRow, ...]:
        """Every queue as the overview lists it, in the order they were named."""
        return tuple(
            QueueRow(
                q.name,
                q.source.description,
                q.name == self.shown,
                self.overviews.get(q.name),
                self.errors.get(q.name),
                self.loops[q.name].failures,
            )
            for q in self.queues
        )

    def _rows_now(self) -> tuple[Sequence[QueueRow], float]:
        return self.rows(), self.host.clock()

    def screen(self) -> OverviewScreen:
        return OverviewScreen(self.status_state, self._rows_now)

    def screens(self) -> list[OverviewScreen]:
        """The overview screens on the stack (none while quitting)."""
        if not self.host.is_running:
            return []
        return [s for s in self.host.screen_stack if isinstance(s, OverviewScreen)]

    def show(self) -> None:
        for screen in self.screens():
            screen.show_queues(*self._rows_now())
        self.host.status_changed()

    def status_state(self) -> StatusState:
        """The overview's status line: how many queues, how many answer, the stalest
        figures of those that do."""
        rows = self.rows()
        now = self.host.clock()
        answering = sum(1 for r in rows if r.connection == "live")
        failing = sum(1 for r in rows if r.error is not None)
        ages = [now - r.overview.taken_at for r in rows if r.overview and r.error is None]
        if failing:
            connection, error = "partial", f"{answering} of {len(rows)} connected"
        else:
            connection, error = ("live" if answering == len(rows) else "connecting"), None
        return replace(
            self.host.status_state(),
            server=", ".join(r.name for r in rows),
            connection=connection,
            error=error,
            attempt=0,
            age_s=max(max(ages), 0.0) if ages else None,
            degraded=False,
            queue=f"{len(rows)} queues",
        )
