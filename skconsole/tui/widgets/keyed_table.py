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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowDoesNotExist

from skconsole.core.text import printable
from skconsole.tui.moves import TABLE_MOVES
from skconsole.views.table import Cell, Column, cell_text

Row = tuple[str, tuple[Cell, ...]]


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

    def on_mount(self) -> None:
        for col in self.columns_spec:
            label = Text(col.label, justify="right" if col.right else "left")
            self.add_column(label, key=col.key, width=col.width)

    def on_resize(self, _event: events.Resize) -> None:
        self._fit_flex()

    def _fit_flex(self) -> None:
        """Give the flex columns whatever width the fixed ones leave over."""
        flex = [c for c in self.columns_spec if c.flex]
        # leave room for a vertical scrollbar, present or not: rows come and go
        width = self.size.width - self.styles.scrollbar_size_vertical - 1
        if not flex or width <= 0 or not self.columns:
            return
        flex_keys = {c.key for c in flex}
        fixed = sum(
            col.get_render_width(self)
            for key, col in self.columns.items()
            if key.value not in flex_keys
        )
        spare = width - fixed - 2 * self.cell_padding * len(flex)
        share = spare // len(flex)
        for spec in flex:
            self.columns[ColumnKey(spec.key)].width = max(spec.width or 8, share)
        self._require_update_dimensions = True
        self.refresh()

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
        self.action_cursor_down()

    def clear_marks(self) -> None:
        marked, self.marked = self.marked, set()
        for key in marked & self._shown.keys():
            self._redraw(key)

    def set_rows(self, rows: Sequence[Row]) -> None:
        self._all = [printable_row(r) for r in rows]
        self.marked &= {key for key, _ in self._all}  # a row that left takes its mark along
        self._sync(self._filtered())

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
            r
            for r in self._all
            if needle in r[0].casefold() or any(needle in cell_text(c).casefold() for c in r[1])
        ]

    def _cell_text(self, cell: Cell, column: Column[Any], marked: bool = False) -> Text:
        text, tone = (cell, "") if isinstance(cell, str) else cell
        text = printable(text)  # already done by set_rows: a no-op there, a guard elsewhere
        style = self._tone_style(tone) if tone else Style()
        if marked:
            style += self._tone_style("marked")
            if column is self.columns_spec[0]:
                text = self.MARK + text
        return Text(text, style=style, justify="right" if column.right else "left", no_wrap=True)

    def _redraw(self, key: str) -> None:
        """Draw a row again (its mark changed)."""
        cells = self._shown.get(key)
        if cells is None:
            return
        for col, text in zip(self.columns_spec, self._cells(cells, key), strict=False):
            self.update_cell(key, col.key, text, update_width=False)

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
                for col, old, cell in zip(self.columns_spec, before, cells, strict=False):
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
            self._cell_text(c, col, marked)
            for col, c in zip(self.columns_spec, cells, strict=False)
        ]
