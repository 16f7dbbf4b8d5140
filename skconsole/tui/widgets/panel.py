"""A titled table panel with its own filter: the building block of every view.

A panel lists items (jobs, groups, task types), one a row: a subclass says
which items a snapshot holds, each row's key, and its columns (each with how an
item shows in it); this class turns them into the table and its rows. It shows
the active filter and the shown/total counts in its border title, so a filtered
view never passes for the whole picture.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, ClassVar, TypeVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.dom import DOMNode
from textual.widgets import Input

from skconsole.core.text import printable
from skconsole.tui.formatting import short_id
from skconsole.tui.model import Snapshot
from skconsole.tui.opening import Opening, of_type, search
from skconsole.tui.widgets.keyed_table import KeyedTable, Row
from skconsole.views.table import Column, Face, OfType, cell_text, shown_in

T = TypeVar("T")


def console_columns(
    columns: tuple[Column[T], ...], *, fit: dict[str, Callable[[str, int], str]] | None = None
) -> tuple[Column[T], ...]:
    """A view's columns as the console shows them: those it shows, an id cut to its
    first 8 characters (the full id is in the job detail and the CLI), and a text too
    wide for its column shortened by ``fit`` (by column key) rather than cut."""
    shown = (_short(c) if c.ident else c for c in shown_in(columns, Face.CONSOLE))
    return tuple(replace(c, fit=fit[c.key]) if fit and c.key in fit else c for c in shown)


def _short(column: Column[T]) -> Column[T]:
    cell = column.cell
    return replace(column, cell=lambda item, now: short_id(cell_text(cell(item, now))))


class Panel(Vertical):
    """Base class. A main-screen panel says who it is in class attributes, once:

    ``scope`` names it in the action registry, ``title`` heads its border and
    ``short_title`` (when shorter) names it on its key, tab, help and command
    palette entries. Its number (and so its key and order) is its place in
    :data:`skconsole.tui.panels.PANELS`, given to it when the screen composes it.
    """

    scope: ClassVar[str] = ""
    title: ClassVar[str] = ""
    short_title: ClassVar[str] = ""
    tabbed: ClassVar[bool] = True  # False: shown above the tabs, always in view
    #: its data lives in skconsole's own tables: on Stakhanovise.NET's alone its title
    #: says why it is empty instead of its summary (skconsole.db.layout)
    skconsole_tables_only: ClassVar[bool] = False
    COLUMNS: ClassVar[tuple[Column[Any], ...]] = ()
    #: what Enter opens on a row, in words for the help screen ("" : nothing)
    opens: ClassVar[str] = ""

    def __init__(self, *, number: int | None = None, id: str | None = None) -> None:
        super().__init__(id=id or f"panel-{self.scope}", classes="panel")
        self.number = number
        self.summary = ""
        self.shown: Snapshot | None = None  # the snapshot on screen

    @classmethod
    def label(cls) -> str:
        """The panel's name on its key, tab, help line and palette entry."""
        return cls.short_title or cls.title

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter (esc clears)", classes="panel-filter")
        yield KeyedTable(self.COLUMNS, id=f"table-{self.scope}")

    def on_mount(self) -> None:
        self.query_one(Input).display = False
        self._update_title()

    @property
    def table(self) -> KeyedTable:
        return self.query_one(KeyedTable)

    @property
    def filter_input(self) -> Input:
        return self.query_one(Input)

    # -- data ------------------------------------------------------------------
    def items(self, snapshot: Snapshot) -> Sequence[Any]:
        """What the panel lists from this snapshot (one a row), in display order."""
        return ()

    def row_key(self, item: Any) -> str:
        """The key of the item's row (the cursor stays on it across refreshes)."""
        raise NotImplementedError

    def rows_of(self, items: Iterable[Any], now: float) -> list[Row]:
        """The items as rows, their cells as the columns show them; ``now`` is when
        the data was read (ages count from it)."""
        return [(self.row_key(i), tuple(c.cell(i, now) for c in self.COLUMNS)) for i in items]

    def rows(self, snapshot: Snapshot) -> Sequence[Row]:
        """The rows for this snapshot, in display order."""
        return self.rows_of(self.items(snapshot), snapshot.taken_at)

    def summarize(self, snapshot: Snapshot) -> str:
        """A few words for the title (totals, hung count)."""
        return ""

    def tab_note(self, snapshot: Snapshot) -> str | None:
        """What the panel's tab adds to its label (a count); None: the plain label."""
        return None

    def brief_note(self, snapshot: Snapshot) -> str | None:
        """What the tab says of its alarm where the bar is short of room (a narrow
        terminal, or full labels that do not fit): the note's last part by default
        ("6", "⚠ 2h")."""
        note = self.tab_note(snapshot)
        return None if note is None else note.rpartition(" · ")[2]

    def alarm(self, snapshot: Snapshot) -> bool:
        """Whether the panel's tab is marked as needing attention."""
        return False

    def opening(self, key: str, snapshot: Snapshot) -> Opening | None:
        """What Enter opens on the row keyed ``key`` (None: nothing; see ``opens``)."""
        return None

    def has_data(self, snapshot: Snapshot) -> bool:
        """Whether ``snapshot`` holds this panel's data yet (else it shows a spinner)."""
        return True

    def show_snapshot(self, snapshot: Snapshot) -> None:
        self.shown = snapshot
        past_notes = snapshot.past_notes.get(self.scope)
        if past_notes is not None:
            self.summary = past_notes
        elif snapshot.degraded and self.skconsole_tables_only:
            self.summary = "none here: skconsole's tables are not in this database"
        else:
            self.summary = self.summarize(snapshot)
        self.table.set_rows(self.rows(snapshot))
        self._update_title()  # a marked row that left takes its mark along

    def show_rows(self, rows: Sequence[Row], summary: str = "") -> None:
        self.summary = summary
        self.table.set_rows(rows)
        self._update_title()

    # -- filter ------------------------------------------------------------------
    def open_filter(self) -> None:
        box = self.filter_input
        box.display = True
        box.value = self.table.filter_text
        box.focus()

    def toggle_mark(self) -> None:
        """Mark or unmark the selected row (the title counts the marked ones)."""
        self.table.toggle_mark()
        self._update_title()

    def clear_marks(self) -> bool:
        """Unmark every row; False if none was marked."""
        had = bool(self.table.marked)
        self.table.clear_marks()
        self._update_title()
        return had

    def filter_to(self, text: str) -> None:
        """Filter the table by ``text``, shown in the filter box and the title."""
        box = self.filter_input
        box.display = True
        box.value = text  # Input.Changed filters the table
        self.table.set_filter(text)
        self._update_title()
        self.table.focus()

    def clear_filter(self) -> bool:
        """Clear and hide the filter; False if there was none."""
        box = self.filter_input
        had = bool(self.table.filter_text) or box.display
        box.value = ""
        box.display = False
        self.table.set_filter("")
        self._update_title()
        self.table.focus()
        return had

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.table.set_filter(event.value)
        self._update_title()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.filter_input.display = False
        self.table.focus()

    # -- title ---------------------------------------------------------------------
    def _update_title(self) -> None:
        head = f"{self.number} {self.title}" if self.number else self.title
        parts = [head]
        if self.summary:
            parts.append(self.summary)
        table = self.table
        if table.filter_text:
            shown = f"{len(table.visible_keys):,} of {table.total_rows:,}"
            parts.append(f"filter “{table.filter_text}”: {shown}")
        marked = len(table.marked_keys)
        if marked:
            parts.append(f"{marked:,} marked (esc clears)")
        self.border_title = Content(printable(" · ".join(parts)))


class TypesPanel(Panel):
    """A panel of task types, one a row keyed by its name: Enter searches the type's jobs
    unless the panel opens something else."""

    def row_key(self, item: OfType) -> str:
        return item.task_type

    def opening(self, key: str, snapshot: Snapshot) -> Opening | None:
        return search(of_type(key))


def panel_of(node: DOMNode | None) -> Panel | None:
    """The panel that holds ``node`` (the focused widget, say), or None."""
    while node is not None:
        if isinstance(node, Panel):
            return node
        node = node.parent
    return None
