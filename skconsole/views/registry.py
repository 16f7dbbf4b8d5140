"""What a view is: a read model under a name, with its reader, its JSON and (when it
is a table) its columns.

``skconsole status VIEW`` looks a view up by name, reads it, prints its JSON or
draws its table; the console's panels draw the same columns; so a view is
added once, in :data:`skconsole.views.VIEWS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from skconsole.core.json_types import JsonObject
from skconsole.read.flow import WINDOW_S
from skconsole.read.query import Conn
from skconsole.views.table import Column, Tone

M = TypeVar("M")
T = TypeVar("T")


@dataclass(frozen=True)
class ViewArgs:
    """What a reader may be told (each view takes what it needs)."""

    #: rows of a listing (inflight, failures)
    limit: int = 200
    #: failures: the jobs of one group (its id or signature)
    group: str | None = None
    #: history: minutes back (when ``since_s`` is None)
    minutes: int = 60
    #: history: seconds back from ``until`` (--since)
    since_s: float | None = None
    #: history: the end of the span (--until; None: now)
    until: datetime | None = None
    #: history: seconds per step (--step; None: as the span asks, views.history)
    step_s: float | None = None
    #: history: only these types (--type; none: every type)
    types: tuple[str, ...] = ()
    #: metrics: time between the two reads rates come from (0: no rates)
    sample_s: float = 1.0
    #: flow: the rates' sliding window
    window_s: float = WINDOW_S


def _no_notes(model: Any) -> Sequence[str]:
    return ()


@dataclass(frozen=True)
class Table(Generic[M, T]):
    """A view drawn as one table: its rows' items, its columns, its title, and the lines
    the CLI prints below it (plain text: each face escapes it)."""

    columns: tuple[Column[T], ...]
    items: Callable[[M], Sequence[T]]
    title: Callable[[M], str]
    notes: Callable[[M], Sequence[str]] = _no_notes
    #: the tone of a whole row (the CLI colours the row); None: only the cells' own
    row_tone: Callable[[T], Tone] | None = None


@dataclass(frozen=True)
class View(Generic[M]):
    name: str
    read: Callable[[Conn, ViewArgs], M]
    as_json: Callable[[M], JsonObject]
    #: None: the faces draw it their own way (several tables, notes)
    table: Table[M, Any] | None = None
    #: it reads the queue's rows alone, which a hot standby replicates (--read-dsn); False:
    #: the server's own state too (sessions, locks, table statistics, the xmin horizon)
    replica_ok: bool = True
