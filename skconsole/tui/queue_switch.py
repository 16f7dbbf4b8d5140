"""Several queues: the way between their overview and one queue's panels.

``o`` opens the overview of every queue, and closes it again; Enter on a queue there
(an :class:`~skconsole.tui.opening.Opening` of kind QUEUE) points the panels at that
queue, and every key, operator actions included, acts on it from then on. The App
holds one :class:`QueueSwitch`; with one queue it has no queues, and does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any

from textual.app import App
from textual.screen import ModalScreen

from skconsole.tui.queue_overviews import QueueOverviews
from skconsole.tui.screens.main import back_to_main
from skconsole.tui.screens.overview import OverviewScreen
from skconsole.tui.source import DataSource


@dataclass(eq=False)
class QueueSwitch:
    """Going to the overview of every queue and back, and to another queue's panels.

    ``overviews`` say which queue is shown; ``busy`` says an operator action is under way: it acts on the queue shown, so the
    switch waits until it is done; ``read_from`` points the App's reads at another
    queue's source (the last queue's are retired, its marks cleared).
    """

    app: App[Any]
    overviews: QueueOverviews
    _: KW_ONLY
    busy: Callable[[], bool]
    read_from: Callable[[DataSource], None]

    @property
    def several(self) -> bool:
        """The console watches several queues."""
        return bool(self.overviews.queues)

    def start(self) -> None:
        """A console of several queues opens on their overview, every queue read at once."""
        if self.several:
            self.overviews.request()
            self.app.push_screen(self.overviews.screen())

    def toggle(self) -> None:
        """o: the overview of every queue; o again (or esc) back to the queue shown."""
        if not self.several or isinstance(self.app.screen, ModalScreen):
            return
        if isinstance(self.app.screen, OverviewScreen):
            self.app.pop_screen()
            return
        back_to_main(self.app)
        self.app.push_screen(self.overviews.screen())

    def show(self, name: str) -> None:
        """Show the queue ``name``'s panels; every key acts on it from now on."""
        queue = next((q for q in self.overviews.queues if q.name == name), None)
        if queue is None:
            return
        if self.busy():
            self.app.notify(
                f"An action on {self.overviews.shown} is under way: switch once it is done.",
                severity="warning",
            )
            return
        back_to_main(self.app)
        if queue.name == self.overviews.shown:
            return
        self.overviews.shown = queue.name
        self.read_from(queue.source)
        self.overviews.show()  # the row marked as shown
