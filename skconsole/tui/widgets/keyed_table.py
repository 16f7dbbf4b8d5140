"""A DataTable whose rows are keyed by id and updated in place.

Live data arrives every few seconds. Rebuilding a table on each refresh makes
the cursor and the scroll position jump, so this table changes only what
changed: stale keys are removed, changed cells updated, new rows added, and
the cursor stays on the same *row key* (the same job, group or type) even when
the order changes. It also owns the text filter of its panel.

Cells are plain strings or ``(text, tone)`` pairs; a tone names a component
class whose colour lives in the .tcss file, and cell text is never read as
markup (error messages are full of square brackets). Control characters in a
cell are shown as visible escapes (``\x1b``), never written raw: the table
keeps the printable text, so the filter matches what is on screen.

The table lays its columns out for its width (:func:`fit_columns`, again on
every resize and whenever the texts change): on a narrow terminal the columns
of the highest ``priority`` number go first, so the free text keeps room; the
spare width goes to the free text, then to cut columns. A text still too wide
for its column is never cut silently: it ends with "…", or is shortened by its
column's ``fit`` (a failure signature shortens its module path first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, JustifyMethod
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowDoesNotExist

from skconsole.core.text import printable
from skconsole.tui.moves import TABLE_MOVES
from skconsole.views.table import Cell, Column, cell_text, drop_until_fits

Row = tuple[str, tuple[Cell, ...]]

#: the narrowest a flex column is made, however little room there is
FLEX_FLOOR = 8


@dataclass(frozen=True)
class Fit:
    """Which columns are shown (their indexes, in order) and their widths (in cells,
    padding aside), in the same order."""

    shown: tuple[int, ...]
    widths: tuple[int, ...]


def fit_columns(
    columns: Sequence[Column[Any]], natural: Sequence[int], room: int, padding: int = 2
) -> Fit:
    """The columns to show in ``room`` cells and their widths, given each column's
    ``natural`` width (its widest text, label included) and the ``padding`` each adds.

    A column other than a flex one is at least its ``width`` (its natural width
    when None; the first column, a row's id or name, at least its natural width). A flex column wants its natural width, or ``min_width`` (but not
    less than its ``width``) if that is less; while the columns do not fit with
    the flex ones at that, the droppable ones go, highest ``priority`` number first
    (the later among equals); ids, flex columns and priority 0 stay. The spare
    width then goes to the flex columns' text (up to its natural width), then to
    the other columns whose text is wider than their ``width`` (in order, up to
    their natural width), and the rest to the last column (blank at the row's end: a
    short type name in a wide panel leaves no gap between it and its figures). A flex column is never
    narrower than its ``width`` or ``FLEX_FLOOR``: a table that cannot fit scrolls.
    """
    flex = [c.flex for c in columns]

    def base(i: int) -> int:
        width = columns[i].width
        if width is None or i == 0:  # the first column (a row's id or name) is never cut
            return max(width or 0, natural[i])
        return width

    def floor(i: int) -> int:
        return max(columns[i].width or 0, FLEX_FLOOR) if flex[i] else base(i)

    def least(i: int) -> int:
        return max(floor(i), min(natural[i], columns[i].min_width)) if flex[i] else base(i)

    def needed(shown: Sequence[int]) -> int:
        return sum(least(i) + padding for i in shown)

    shown = drop_until_fits(
        [0 if c.ident or c.flex else c.priority for c in columns],
        lambda shown: needed(shown) <= room,
    )
    widths = {i: floor(i) for i in shown}
    spare = room - sum(widths[i] + padding for i in shown)
    flexes = [i for i in shown if flex[i]]
    for i in flexes:  # the free text first, up to its whole length
        grow = max(min(natural[i] - widths[i], spare // len(flexes)), 0)
        widths[i] += grow
        spare -= grow
    for i in shown:  # then cut columns, up to their whole text
        if not flex[i] and spare > 0 and natural[i] > widths[i]:
            grow = min(natural[i] - widths[i], spare)
            widths[i] += grow
            spare -= grow
    if shown and spare > 0:  # the rest is blank at the right end, not inside a row
        widths[shown[-1]] += spare
    return Fit(tuple(shown), tuple(widths[i] for i in shown))


class FittedText(Text):
    """A cell's text that shortens itself, by its column's rule, to the width it is
    drawn in (the column's width changes with the terminal's); never wider than that."""

    def __init__(self, text: str, shorten: Callable[[str, int], str], **kwargs: Any) -> None:
        super().__init__(text, **kwargs)
        self.shorten = shorten

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Segment]:
        width = options.max_width
        if cell_len(self.plain) <= width:
            yield from super().__rich_console__(console, options)
            return
        shown = Text(
            self.shorten(self.plain, width),
            style=self.style,
            justify=self.justify,
            no_wrap=True,
            overflow="ellipsis",
            end=self.end,
        )
        yield from shown.__rich_console__(console, options)


def printable_cell(cell: Cell) -> Cell:
    """The cell with its text made printable (the same object when nothing changes)."""
    if isinstance(cell, str):
        return printable(cell)
    text, tone = cell
    shown = printable(text)
    return cell if shown is text else (shown, tone)


def printable_row(row: Row) -> Row:
    key, cells = row
    return key, tuple(printable_cell(c) for c in cells)


class KeyedTable(DataTable[Text]):
    """Rows keyed by id; see the module docstring."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "keyed-table--bad",
        "keyed-table--warn",
        "keyed-table--good",
        "keyed-table--muted",
        "keyed-table--accent",
        "keyed-table--marked",
    }
    #: drawn before the first cell of a marked row
    MARK = "● "
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(m.keys, m.action, m.help or m.action, show=False) for m in TABLE_MOVES
    ]

    def __init__(self, columns: Sequence[Column[Any]], *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.columns_spec = tuple(columns)
        self._all: list[Row] = []
        self._shown: dict[str, tuple[Cell, ...]] = {}
        self._tones: dict[str, Style] = {}  # each tone's style, looked up once per update
        self.filter_text = ""
        self.marked: set[str] = set()  # keys of the rows marked with space
        # each column's widest text, label included, over every row (filtered or not)
        self._natural = [cell_len(c.label) for c in self.columns_spec]
        self._visible: tuple[int, ...] = tuple(range(len(self.columns_spec)))
        self._fit: Fit | None = None

    def on_mount(self) -> None:
        self._add_columns()

    def on_resize(self, _event: events.Resize) -> None:
        self._fit_columns()

    def _add_columns(self) -> None:
        for i in self._visible:
            col = self.columns_spec[i]
            label = Text(col.label, justify="right" if col.right else "left")
            self.add_column(label, key=col.key, width=col.width)

    def _fit_columns(self) -> None:
        """Lay the columns out for the table's width (:func:`fit_columns`)."""
        # leave room for a vertical scrollbar, present or not: rows come and go
        room = self.size.width - self.styles.scrollbar_size_vertical - 1
        if room <= 0 or not self.columns:
            return
        fit = fit_columns(self.columns_spec, self._natural, room, 2 * self.cell_padding)
        if fit == self._fit:
            return
        self._fit = fit
        if fit.shown != self._visible:
            self._show_columns(fit.shown)
        for i, width in zip(fit.shown, fit.widths, strict=True):
            column = self.columns[ColumnKey(self.columns_spec[i].key)]
            column.width = width
            column.auto_width = False
        self._update_count += 1  # the cells' renders depend on the widths: draw them again
        self._require_update_dimensions = True
        self.refresh()

    def _show_columns(self, shown: tuple[int, ...]) -> None:
        """Show only the columns ``shown`` (a narrower or wider terminal), rows kept."""
        cursor_key = self.selected_key
        self._visible = shown
        self.clear(columns=True)
        self._add_columns()
        self._rebuild([(key, cells) for key, cells in self._shown.items()])
        if cursor_key is not None:
            self.select_key(cursor_key)

    # -- public ------------------------------------------------------------------
    @property
    def selected_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except Exception:  # cursor outside the rows (empty table)
            return None
        return key.value

    @property
    def visible_keys(self) -> list[str]:
        return list(self._shown)

    @property
    def total_rows(self) -> int:
        return len(self._all)

    @property
    def marked_keys(self) -> list[str]:
        """The marked rows shown, in display order (a marked row the filter hides is not
        acted on: an action never reaches a row out of sight)."""
        return [k for k in self._shown if k in self.marked]

    def toggle_mark(self) -> None:
        """Mark the row under the cursor, or unmark it; the cursor moves down one row."""
        key = self.selected_key
        if key is None:
            return
        self.marked ^= {key}
        self._redraw(key)
        self._refit()
        self.action_cursor_down()

    def clear_marks(self) -> None:
        marked, self.marked = self.marked, set()
        for key in marked & self._shown.keys():
            self._redraw(key)
        self._refit()

    def _refit(self) -> None:
        """Lay the columns out again: a mark widens the first column's text."""
        self._natural = list(self._widest(self._all))
        self._fit_columns()

    def set_rows(self, rows: Sequence[Row]) -> None:
        self._all = [printable_row(r) for r in rows]
        self.marked &= {key for key, _ in self._all}  # a row that left takes its mark along
        self._sync(self._filtered())
        self._refit()

    def _widest(self, rows: Sequence[Row]) -> Iterator[int]:
        """Each column's widest text in ``rows``, its label included (and the first
        column's mark, while a row is marked)."""
        for i, col in enumerate(self.columns_spec):
            texts = (cell_text(cells[i]) for _, cells in rows if i < len(cells))
            mark = cell_len(self.MARK) if i == 0 and self.marked else 0
            yield max([cell_len(col.label), *(cell_len(t) + mark for t in texts)])

    def set_filter(self, text: str) -> None:
        self.filter_text = text.strip()
        self._sync(self._filtered())

    def select_key(self, key: str) -> bool:
        try:
            index = self.get_row_index(key)
        except RowDoesNotExist:
            return False
        self.move_cursor(row=index, animate=False, scroll=True)
        return True

    # -- internals ---------------------------------------------------------------
    def _filtered(self) -> list[Row]:
        needle = self.filter_text.casefold()
        if not needle:
            return self._all
        return [
            (key, cells)
            for key, cells in self._all
            if needle in key.casefold() or any(needle in cell_text(c).casefold() for c in cells)
        ]

    def _cell_text(self, cell: Cell, column: Column[Any], marked: bool = False) -> Text:
        text, tone = (cell, "") if isinstance(cell, str) else cell
        text = printable(text)  # already done by set_rows: a no-op there, a guard elsewhere
        style = self._tone_style(tone) if tone else Style()
        if marked:
            style += self._tone_style("marked")
            if column is self.columns_spec[0]:
                text = self.MARK + text
        justify: JustifyMethod = "right" if column.right else "left"
        if column.fit is not None:
            return FittedText(text, column.fit, style=style, justify=justify, no_wrap=True)
        # cut at the column's width, and marked so: the text ends with "…"
        return Text(text, style=style, justify=justify, no_wrap=True, overflow="ellipsis")

    def _redraw(self, key: str) -> None:
        """Draw a row again (its mark changed)."""
        cells = self._shown.get(key)
        if cells is None:
            return
        for i, text in zip(self._visible, self._cells(cells, key), strict=True):
            self.update_cell(key, self.columns_spec[i].key, text, update_width=False)

    def _tone_style(self, tone: str) -> Style:
        """The tone's style (a CSS lookup costs more than the rest of a cell)."""
        style = self._tones.get(tone)
        if style is None:
            style = self._tones[tone] = self.get_component_rich_style(f"keyed-table--{tone}")
        return style

    def _sync(self, rows: Sequence[Row]) -> None:
        self._tones.clear()  # looked up again on each update: the theme may have changed
        wanted = [key for key, _ in rows]
        wanted_set = set(wanted)
        current = list(self._shown)
        kept = [k for k in current if k in wanted_set]
        new = [k for k in wanted if k not in self._shown]
        cursor_key = self.selected_key
        if kept + new == wanted:
            self._apply_in_place(rows, current, wanted_set)
        else:
            self._rebuild(rows)
        if cursor_key is not None and cursor_key in wanted_set:
            index = self.get_row_index(cursor_key)
            if index != self.cursor_row:
                self.move_cursor(row=index, animate=False, scroll=False)

    def _apply_in_place(
        self, rows: Sequence[Row], current: list[str], wanted_set: set[str]
    ) -> None:
        for key in current:
            if key not in wanted_set:
                self.remove_row(key)
                del self._shown[key]
        for key, cells in rows:
            before = self._shown.get(key)
            if before is None:
                self.add_row(*self._cells(cells, key), key=key)
            elif before != cells:
                marked = key in self.marked
                for i in self._visible:
                    col = self.columns_spec[i]
                    old, cell = _nth(before, i), _nth(cells, i)
                    if old != cell:
                        self.update_cell(
                            key,
                            col.key,
                            self._cell_text(cell, col, marked),
                            update_width=col.width is None,
                        )
            self._shown[key] = cells

    def _rebuild(self, rows: Sequence[Row]) -> None:
        scroll_y = self.scroll_y
        self.clear()
        self._shown = {}
        for key, cells in rows:
            self.add_row(*self._cells(cells, key), key=key)
            self._shown[key] = cells
        self.scroll_to(y=scroll_y, animate=False, immediate=True)

    def _cells(self, cells: tuple[Cell, ...], key: str) -> list[Text]:
        marked = key in self.marked
        return [
            self._cell_text(_nth(cells, i), self.columns_spec[i], marked) for i in self._visible
        ]


def _nth(cells: tuple[Cell, ...], i: int) -> Cell:
    """The row's cell of column ``i`` ("" for a row with fewer cells)."""
    return cells[i] if i < len(cells) else ""
