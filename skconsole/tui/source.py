"""The console's data source contract: the console's one port to its data.

The app talks to one object with these few methods and calls them only from
worker threads: ``read`` any request of :mod:`skconsole.tui.reads` (typed by its
answer), ``preview`` and ``execute`` an action, ``close``.
:class:`skconsole.tui.database_source.DatabaseSource` implements it on PostgreSQL
through ``read`` and ``ops``; :class:`skconsole.tui.showcase.fake_source.FixedSource`
serves fixed data so snapshot tests and screenshots are deterministic. One contract
test holds both to it (``tests/tui/test_source_contract.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, TypeVar, runtime_checkable

from skconsole.tui.model import ActionRequest, OutcomeInfo, PreviewInfo
from skconsole.tui.reads import Read

T = TypeVar("T")


class SourceUnavailable(Exception):
    """The server cannot be reached right now; the console keeps its last data and retries."""


class NotKept(Exception):
    """A past source was asked what the past does not keep (a job, a search, the tables'
    health): said once, in words, never as a lost connection."""


class DataSource(Protocol):
    description: str  # where the data comes from, never with a password
    connection: str  # the connection string that reaches it, its password masked
    read_only: bool

    def read(self, request: Read[T]) -> T:
        """The answer to ``request`` (:mod:`skconsole.tui.reads`); SourceUnavailable when
        the server cannot be reached."""
        ...

    def preview(self, request: ActionRequest) -> PreviewInfo:
        """What ``request`` would touch now: count, sample and the ids it captured."""
        ...

    def execute(self, preview: PreviewInfo, actor: str) -> OutcomeInfo:
        """Carry out a previewed action on the ids captured by the preview."""
        ...

    def close(self) -> None:
        """Close the connections (called once, when the console exits)."""
        ...


@dataclass(frozen=True)
class Queue:
    """One queue of a console that watches several: the name it is shown by, its data."""

    name: str
    source: DataSource


@runtime_checkable
class PastView(Protocol):
    """A source that shows a past minute (``skconsole --at``, ``--bundle``): the console
    shows which, and its scrub keys move it (:class:`skconsole.tui.past_source.PastSource`)."""

    def minute(self) -> datetime:
        """The minute shown."""
        ...

    def move(self, minutes: int) -> datetime:
        """Show ``minutes`` later (earlier when negative), within what is kept; the new minute."""
        ...

    def bounds_text(self) -> str:
        """What can be scrubbed, in words ("bundle 02:30-03:30 UTC", "record since ...")."""
        ...
