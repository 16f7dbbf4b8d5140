"""The overview of several queues: where a console of several queues opens, and where
``o`` comes back to.

It lists every queue (:class:`~skconsole.tui.widgets.queues_panel.QueuesPanel`) as the
App's per-queue reads left them: the App reads each queue on a loop of its own and
hands the rows in (:meth:`OverviewScreen.show_queues`); this screen reads nothing.
Enter on a queue opens it (:class:`~skconsole.tui.opening.Opening` of kind QUEUE): the
App switches the main screen's panels to it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.app import ComposeResult
from textual.screen import Screen

from skconsole.tui.action_spec import QUEUES
from skconsole.tui.model import QueueRow, Snapshot
from skconsole.tui.opening import Opening, OpenKind
from skconsole.tui.widgets.footer import ConsoleFooter
from skconsole.tui.widgets.queues_panel import QueuesPanel
from skconsole.tui.widgets.status_bar import StatusBar, StatusState

#: the latest rows and the console clock's now
Rows = Callable[[], tuple[Sequence[QueueRow], float]]


class OverviewScreen(Screen[None]):
    """Every queue at a glance; ``status`` gives its status line, ``rows`` the queues."""

    def __init__(self, status: Callable[[], StatusState], rows: Rows) -> None:
        super().__init__()
        self._status = status
        self._rows = rows

    def compose(self) -> ComposeResult:
        yield StatusBar(self._status)
        yield QueuesPanel()
        yield ConsoleFooter()

    def on_mount(self) -> None:
        self.show_queues(*self._rows())
        self.panel.table.focus()

    @property
    def panel(self) -> QueuesPanel:
        return self.query_one(QueuesPanel)

    def current_scope(self) -> str:
        return QUEUES

    def opening(self, _snapshot: Snapshot | None) -> Opening | None:
        """Enter: the selected queue's panels."""
        key = self.panel.table.selected_key
        return None if key is None else Opening(OpenKind.QUEUE, key)

    def show_queues(self, rows: Sequence[QueueRow], now: float) -> None:
        self.panel.show_queues(rows, now)
