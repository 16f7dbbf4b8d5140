"""Every table the CLI draws, drawn one way: columns (:class:`skconsole.views.Column`)
and the items they show.

A view's columns are the console's own (:mod:`skconsole.views`); a table only the
CLI draws (a status view of several tables, an action's sample, the audit, the
limits) declares its columns with :func:`column`. Here they become rich columns
that fit the terminal (:func:`skconsole.cli.output.print_table`), each cell's text
escaped (it comes from the database) and its tone a colour.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rich.markup import escape
from rich.style import StyleType

from skconsole.cli.output import Column as TextColumn
from skconsole.cli.output import out, print_json, print_table
from skconsole.core.json_types import Json
from skconsole.views import Column, Face, Table
from skconsole.views.table import Cell, cell_text, cell_tone, shown_in

M = TypeVar("M")
T = TypeVar("T")

#: the colour of a tone in the terminal (the others stay plain)
TONE_STYLES = {"bad": "red", "warn": "yellow"}
#: the colour of a whole row by its tone (a row that is fine says so: an SLO met)
ROW_STYLES = {**TONE_STYLES, "good": "green"}


def _markup(cell: Cell) -> str:
    text = escape(cell_text(cell))
    style = TONE_STYLES.get(cell_tone(cell))
    return f"[{style}]{text}[/{style}]" if style else text


def text_column(column: Column[Any]) -> TextColumn:
    return TextColumn(
        column.label,
        priority=column.priority,
        justify="right" if column.right else "left",
        flexible=column.flex,
        key=column.ident,
        min_width=column.min_width,
    )


def column(
    label: str,
    cell: Callable[[T], str],
    priority: int = 0,
    *,
    right: bool = False,
    flex: bool = False,
    ident: bool = False,
    min_width: int = 20,
) -> Column[T]:
    """A column of a table only the CLI draws: ``cell(item)`` is its text (plain: it is
    escaped when drawn), ``label`` its header and key; the rest as :class:`Column`."""
    return Column(
        label,
        label,
        right=right,
        flex=flex,
        cell=lambda item, _now: cell(item),
        priority=priority,
        min_width=min_width,
        ident=ident,
        faces=Face.CLI,
    )


def print_items(
    columns: Sequence[Column[T]],
    items: Sequence[T],
    *,
    title: str | None,
    wide: bool,
    skip: frozenset[str] = frozenset(),
    style: Callable[[T], StyleType | None] | None = None,
    edge: bool = True,
) -> None:
    """``items`` as a table of the ``columns`` the CLI shows (but those in ``skip``),
    each row in its ``style`` (a colour for the whole row), the outer border with ``edge``."""
    shown = [c for c in shown_in(tuple(columns), Face.CLI) if c.key not in skip]
    now = time.time()
    rows = [[_markup(c.cell(item, now)) for c in shown] for item in items]
    styles = [style(item) for item in items] if style else None
    print_table(
        [text_column(c) for c in shown], rows, wide=wide, title=title, edge=edge, styles=styles
    )


@dataclass(frozen=True)
class Listing(Generic[T]):
    """What a listing command prints, declared once beside its columns: ``{key: [...]}``
    as JSON, else the table, or the ``empty`` line when there is nothing to list."""

    key: str
    columns: Sequence[Column[T]]
    json_of: Callable[[T], Json]
    empty: str
    title: str | None = None
    style: Callable[[T], StyleType | None] | None = None
    edge: bool = True

    def print(self, items: Sequence[T], *, as_json: bool, wide: bool) -> None:
        if as_json:
            print_json({self.key: [self.json_of(item) for item in items]})
        elif not items:
            out.print(self.empty)
        else:
            print_items(
                self.columns, items, title=self.title, wide=wide, style=self.style, edge=self.edge
            )


def print_view(table: Table[M, Any], model: M, *, wide: bool) -> None:
    row_tone = table.row_tone
    style = None if row_tone is None else (lambda item: ROW_STYLES.get(row_tone(item)))
    # the title is plain text like the notes (a type name may hold [brackets])
    title = escape(table.title(model))
    print_items(table.columns, table.items(model), title=title, wide=wide, style=style)
    for note in table.notes(model):
        out.print(escape(note), highlight=False)
