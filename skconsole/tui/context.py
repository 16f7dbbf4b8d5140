"""What screens need of the console, as a Protocol: they never import app.py.

The App passes itself where a screen needs it; anything else that offers the
same (a test double) will do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from skconsole.tui.model import Snapshot
from skconsole.tui.opening import Opening
from skconsole.tui.source import DataSource
from skconsole.tui.widgets.status_bar import StatusState


class Console(Protocol):
    """The data source, the clock, the status line and where errors go."""

    @property
    def source(self) -> DataSource: ...

    @property
    def clock(self) -> Callable[[], float]: ...

    def status_state(self) -> StatusState: ...

    def report_error(self, what: str, exc: BaseException) -> None: ...


@runtime_checkable
class Scoped(Protocol):
    """A screen that says where the keys are: its focused panel, or its own scope."""

    def current_scope(self) -> str: ...


@runtime_checkable
class Opens(Protocol):
    """A screen whose selected row opens something on Enter (see :mod:`skconsole.tui.opening`)."""

    def opening(self, snapshot: Snapshot | None) -> Opening | None: ...
