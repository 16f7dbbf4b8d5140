"""What the drill-down screens share: the status line, a header, a body whose data
is loaded in a worker thread, and the footer."""

from __future__ import annotations

from typing import ClassVar, Generic, TypeVar

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from skconsole.tui.context import Console
from skconsole.tui.messages import DataChanged
from skconsole.tui.off_thread import read_off_thread
from skconsole.tui.widgets.footer import ConsoleFooter
from skconsole.tui.widgets.status_bar import StatusBar

T = TypeVar("T")  # what the screen loads
B = TypeVar("B", bound=Widget)  # the widget that shows it


class DrillDownScreen(Screen[None], Generic[T, B]):
    """Loads its data (``fetch``) in a worker thread, again whenever the data changes
    (:class:`DataChanged`: after every refresh and action; with ``FAILURE_DATA``, only
    when the failure groups were read again or an action ran), and shows it (``show``)."""

    HEADER_ID: ClassVar[str] = ""
    SCOPE: ClassVar[str] = ""  # where the key registry's actions apply (actions.ActionSpec)
    WHAT: ClassVar[str] = ""  # what it loads, in "could not load ..."
    #: it shows failed jobs: read again on the failure groups' cadence, not every refresh
    FAILURE_DATA: ClassVar[bool] = False

    def __init__(self, console: Console, body: B) -> None:
        super().__init__()
        self.console = console
        self.body = body
        self._loading = False

    def compose(self) -> ComposeResult:
        yield StatusBar(self.console.status_state)
        yield Static("", id=self.HEADER_ID)
        yield self.body
        yield ConsoleFooter()

    def current_scope(self) -> str:
        return self.SCOPE

    @property
    def header(self) -> Static:
        return self.query_one(f"#{self.HEADER_ID}", Static)

    def on_mount(self) -> None:
        self.show_header()
        self.body.loading = True
        self.focus_body()
        self.reload()

    def on_data_changed(self, message: DataChanged) -> None:
        if message.failures or not self.FAILURE_DATA:
            self.reload()

    # -- what a drill-down says ----------------------------------------------------------
    def show_header(self) -> None:
        """The header before the data is loaded."""

    def focus_body(self) -> None:
        self.body.focus()

    def fetch(self) -> T:
        """Read the data (in a worker thread)."""
        raise NotImplementedError

    def show(self, data: T) -> None:
        """Put the data on screen."""

    # -- loading -------------------------------------------------------------------------
    def reload(self) -> None:
        """Fetch the data again (ignored while a fetch is running: no pile-up)."""
        if not self._loading:
            self._loading = True
            read_off_thread(self, self.fetch, self._loaded, self._failed, group="drilldown")

    def _loaded(self, data: T) -> None:
        self._loading = False
        self.body.loading = False
        self.show(data)

    def _failed(self, exc: BaseException) -> None:
        self._loading = False
        self.body.loading = False
        self.console.report_error(f"could not load {self.WHAT}", exc)
