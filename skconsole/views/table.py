"""A read model's rows as a table, said once for every face that draws it.

A :class:`Column` is what a cell shows and how it may be laid out; the console's
tables (textual) and ``skconsole status`` (rich) each draw the same columns their
own way, so a column is defined once and reads the same in both. Nothing here
imports a UI library: a cell is plain text and a :data:`Tone`, which each face
maps to its colours (the console's in its .tcss, the CLI's red and yellow).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

#: what a cell's colour means; each face picks the colour
Tone = Literal["bad", "warn", "good", "muted", "accent", ""]
#: a cell: its text, or its text and tone
Cell = str | tuple[str, Tone]
T = TypeVar("T")


class Face(enum.Flag):
    """Where a column is shown."""

    CONSOLE = enum.auto()
    CLI = enum.auto()
    BOTH = CONSOLE | CLI


@dataclass(frozen=True)
class Column(Generic[T]):
    """One column of a view's table.

    ``cell`` shows a row's item (a ``T``) given the time its data was read (for
    ages). ``priority`` 0 is always shown, otherwise the higher the sooner it is
    dropped on a narrow terminal, and the ``flex`` column is the one cut to fit
    (at least ``min_width``, or its whole text if shorter). In the console,
    ``width`` None sizes to content, other columns are at least ``width`` wide and
    the spare width goes first to the ``flex`` columns' text, then to the other
    columns whose text is wider than ``width``, the rest to the ``flex`` columns
    (:func:`skconsole.tui.widgets.keyed_table.fit_columns`); a text still too
    wide is shortened by ``fit`` (its text and the width; None: cut at its end),
    and always marked with "…". ``ident``: the row's id, which people copy: the
    CLI prints it whole and never drops it, the console shows its first 8 characters.
    """

    key: str
    label: str
    width: int | None = None
    right: bool = False
    flex: bool = False
    cell: Callable[[T, float], Cell] = field(kw_only=True)
    priority: int = field(default=0, kw_only=True)
    min_width: int = field(default=20, kw_only=True)
    ident: bool = field(default=False, kw_only=True)
    faces: Face = field(default=Face.BOTH, kw_only=True)
    fit: Callable[[str, int], str] | None = field(default=None, kw_only=True)


class OfType(Protocol):
    """A row of one task type (its depth, a job, its schedule)."""

    @property
    def task_type(self) -> str: ...


R = TypeVar("R", bound=OfType)


def type_column(width: int, *, flex: bool = False, priority: int = 0) -> Column[R]:
    """The row's task type, headed "type" in every view and panel."""
    return Column(
        "type", "type", width, flex=flex, cell=lambda row, _: row.task_type, priority=priority
    )


def figure_column(
    key: str,
    width: int,
    cell: Callable[[T, float], Cell],
    *,
    label: str | None = None,
    priority: int = 0,
) -> Column[T]:
    """A right-aligned column (a count, an age, a duration, a size), headed by its key
    unless ``label`` says otherwise."""
    return Column(key, label or key, width, right=True, cell=cell, priority=priority)


def cell_text(cell: Cell) -> str:
    return cell if isinstance(cell, str) else cell[0]


def cell_tone(cell: Cell) -> Tone:
    return "" if isinstance(cell, str) else cell[1]


def shown_in(columns: tuple[Column[T], ...], face: Face) -> tuple[Column[T], ...]:
    """The columns ``face`` shows."""
    return tuple(c for c in columns if face in c.faces)


def drop_until_fits(priorities: Sequence[int], fits: Callable[[Sequence[int]], bool]) -> list[int]:
    """The columns to show (their indices): all of them, less the droppable ones
    (priority above 0) while the rest do not ``fit``, the highest priority number first
    (the later column among equals). The CLI's tables and the console's share the rule."""
    shown = list(range(len(priorities)))
    droppable = sorted(
        (i for i, p in enumerate(priorities) if p > 0),
        key=lambda i: (priorities[i], i),
        reverse=True,
    )
    for i in droppable:
        if fits(shown):
            break
        shown.remove(i)
    return shown
