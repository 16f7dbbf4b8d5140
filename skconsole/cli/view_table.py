"""A view's table (:class:`skconsole.views.Table`) drawn for the terminal.

The columns are the console's own (:mod:`skconsole.views`): here they become
rich columns that fit the terminal (:func:`skconsole.cli.output.print_table`),
each cell's text escaped (it comes from the database) and its tone a colour.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, TypeVar

from rich.markup import escape

from skconsole.cli.output import Column as TextColumn
from skconsole.cli.output import print_table
from skconsole.views import Column, Face, Table
from skconsole.views.table import Cell, cell_text, cell_tone, shown_in

M = TypeVar("M")
T = TypeVar("T")

#: the colour of a tone in the terminal (the others stay plain)
TONE_STYLES = {"bad": "red", "warn": "yellow"}


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


def print_items(
    columns: Sequence[Column[T]],
    items: Sequence[T],
    *,
    title: str,
    wide: bool,
    skip: frozenset[str] = frozenset(),
) -> None:
    """``items`` as a table of the ``columns`` the CLI shows (but those in ``skip``)."""
    shown = [c for c in shown_in(tuple(columns), Face.CLI) if c.key not in skip]
    now = time.time()
    rows = [[_markup(c.cell(item, now)) for c in shown] for item in items]
    print_table([text_column(c) for c in shown], rows, wide=wide, title=title)


def print_view(table: Table[M, Any], model: M, *, wide: bool) -> None:
    print_items(table.columns, table.items(model), title=table.title(model), wide=wide)
