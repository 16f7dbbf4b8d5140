"""How the command line writes: a console that never lets a control character
through, JSON for scripts, the one-line error, progress bars, and tables that fit the terminal.

A table declares its columns (:class:`Column`); :func:`pick_columns` decides,
for a terminal width, which of them to show and how wide the one flexible text
column may be, the way ``kubectl get`` and ``gh`` do: the least useful columns
go first, the free text (a signature, an error, a note) is cut to one line with
an ellipsis, and ids are never dropped or cut. ``--wide`` shows every column at
its full width, whatever the terminal. Both are pure (no database, no terminal).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderableType
from rich.markup import escape
from rich.progress import MofNCompleteColumn, Progress
from rich.segment import Segment
from rich.style import StyleType
from rich.table import Table
from rich.text import Text

from skconsole.core.json_types import Json
from skconsole.core.text import printable
from skconsole.views.table import drop_until_fits


class PrintableConsole(Console):
    """A rich Console that never writes a control character it was given as text.

    Task types, errors, hosts and metric ids come from other systems; an ESC or
    a C1 or bidi control among them would reach the terminal raw. Every string
    this console prints (table cells and titles included) passes through
    :func:`skconsole.core.text.printable` before rich measures it, and every text
    segment is checked again on the way out, so a view added later is safe
    without doing anything. Rich's own control segments (cursor moves of a
    progress bar) are left alone.
    """

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Text:
        return super().render_str(printable(text), *args, **kwargs)

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            text, style, control = segment
            if control or text.isprintable():
                yield segment
            else:
                yield Segment(printable(text, keep_newlines=True), style, control)


#: The largest piece of work shown without a progress bar.
PROGRESS_ABOVE = 100_000

out = PrintableConsole()
err = PrintableConsole(stderr=True)


def print_json(doc: Json) -> None:
    """One compact JSON document on stdout (``default=str``: a value of a typed view that
    slipped through as a UUID or datetime prints as it always has)."""
    # ensure_ascii (json's default) writes every control character as a \u escape
    print(json.dumps(doc, default=str, ensure_ascii=True))


def print_error(message: str) -> None:
    """The one line an expected failure prints on stderr."""
    err.print(f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True)


@contextmanager
def progress_bar(total: int, description: str) -> Iterator[Callable[[int], None]]:
    """A bar on stderr for work of ``total`` steps above PROGRESS_ABOVE (a short post
    prints only its result); yields the callback to tell it how many are done."""
    if total <= PROGRESS_ABOVE:
        yield lambda done: None
        return
    columns = (*Progress.get_default_columns(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.update(task, completed=done)


# -- tables that fit the terminal ------------------------------------------------------------
@dataclass(frozen=True)
class Column:
    """One column of a table, and what may happen to it on a narrow terminal.

    ``priority`` 0: always shown; otherwise, the higher, the sooner it is dropped.
    ``flexible``: the table's one free-text column (at most one): cut to one line
    with an ellipsis to fit, never narrower than ``min_width`` while another
    column can still go. ``key``: an id people copy: never dropped, cut or wrapped.
    """

    header: str
    priority: int = 0
    justify: JustifyMethod = "left"
    flexible: bool = False
    key: bool = False
    min_width: int = 20


@dataclass(frozen=True)
class Layout:
    """What :func:`pick_columns` chose: the columns shown (their indexes, in order)
    and the width the flexible column is cut to (None: not cut). All columns shown:
    the table is drawn as it always was."""

    shown: tuple[int, ...]
    flex_width: int | None = None


def table_overhead(columns: int, *, edge: bool = True) -> int:
    """Characters a rich table adds around ``columns`` cells: borders and padding.

    ``edge``: the default table (outer border, one space of padding on each side of
    each cell); otherwise a table without its outer border and edge padding.
    """
    if columns <= 0:
        return 0
    if edge:
        return 2 + (columns - 1) + 2 * columns
    return (columns - 1) + 2 * columns - 2


def pick_columns(
    columns: Sequence[Column],
    widths: Sequence[int],
    available: int,
    *,
    edge: bool = True,
    wide: bool = False,
) -> Layout:
    """The columns to show in ``available`` characters, given each one's full width.

    While every column fits with the flexible one at least ``min_width`` wide (or
    with ``wide``), all are shown and nothing is cut: the table is drawn as it
    always was (the free text wraps if it must). Otherwise the droppable columns
    go, highest priority number first (the later column first among equals),
    until the rest fit with the flexible column at its minimum; the flexible
    column then gets what is left, at most its full width, on one line. Ids and
    priority-0 columns always stay, even if the table then cannot fit.
    """
    flex = next((i for i, c in enumerate(columns) if c.flexible), None)

    def needed(shown: Sequence[int]) -> int:
        fixed = sum(widths[i] for i in shown if i != flex)
        least = (
            min(widths[flex], columns[flex].min_width) if flex is not None and flex in shown else 0
        )
        return fixed + least + table_overhead(len(shown), edge=edge)

    if wide or needed(range(len(columns))) <= available:
        return Layout(tuple(range(len(columns))))
    shown = drop_until_fits(
        [0 if c.key or c.flexible else c.priority for c in columns],
        lambda shown: needed(shown) <= available,
    )
    if flex is None:
        return Layout(tuple(shown))
    room = available - table_overhead(len(shown), edge=edge)
    room -= sum(widths[i] for i in shown if i != flex)
    return Layout(tuple(shown), flex_width=max(room, 1) if room < widths[flex] else None)


#: measures cells the way ``out`` draws them (markup, escapes of control characters)
_MEASURE = PrintableConsole(file=io.StringIO(), width=1_000_000, color_system=None)


def text_width(markup: str) -> int:
    """The terminal cells the widest line of a cell takes once drawn."""
    plain = _MEASURE.render_str(markup).plain
    return max((cell_len(line) for line in plain.splitlines()), default=0)


def build_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    width: int,
    wide: bool = False,
    title: str | None = None,
    edge: bool = True,
    styles: Sequence[StyleType | None] | None = None,
) -> Table:
    """A rich Table of ``rows`` (markup cells, one per column) for a terminal ``width``.

    While every column fits it is the plain table it always was (ids kept whole);
    on a narrower terminal the columns :func:`pick_columns` drops are left out,
    ids are kept whole on one line and the flexible column is cut to one line
    with an ellipsis. ``wide``: every
    column at full width, the table wider than the terminal if need be (print it
    with ``crop=False``, as :func:`print_table` does).
    """
    widths = [
        max([text_width(c.header)] + [text_width(row[i]) for row in rows])
        for i, c in enumerate(columns)
    ]
    layout = pick_columns(columns, widths, width, edge=edge, wide=wide)
    full = sum(widths) + table_overhead(len(columns), edge=edge)
    table = Table(
        title=title,
        title_justify="left",
        show_edge=edge,
        pad_edge=edge,
        width=full if wide and full > width else None,
    )
    narrow = len(layout.shown) < len(columns) or layout.flex_width is not None
    for i in layout.shown:
        column = columns[i]
        if not narrow:
            table.add_column(column.header, justify=column.justify, no_wrap=column.key)
        elif column.flexible:
            table.add_column(
                column.header,
                justify=column.justify,
                no_wrap=True,
                overflow="ellipsis",
                max_width=layout.flex_width,
            )
        else:
            table.add_column(column.header, justify=column.justify, no_wrap=column.key)
    for n, row in enumerate(rows):
        table.add_row(*(row[i] for i in layout.shown), style=styles[n] if styles else None)
    return table


def piped() -> bool:
    """Output to a pipe or a file keeps every cell whole (``status failures | grep
    partner`` finds what a terminal would cut), unless COLUMNS says how wide to be."""
    return not out.is_terminal and "COLUMNS" not in os.environ


def print_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    wide: bool = False,
    title: str | None = None,
    edge: bool = True,
    styles: Sequence[StyleType | None] | None = None,
) -> None:
    """:func:`build_table` for ``out``'s width, printed (wider than it with ``wide``, or
    when the output goes to a pipe or a file: see :func:`piped`)."""
    table = build_table(
        columns, rows, width=out.width, wide=wide or piped(), title=title, edge=edge, styles=styles
    )
    out.print(table, crop=False)
