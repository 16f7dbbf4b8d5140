"""The keys that move a table's cursor, beyond the arrows and PgUp/PgDn.

They are the table's own bindings (they act in the focused list, not on the App), so
they live apart from the action registry; the help screen lists them from here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MoveKey:
    """A cursor key: the table action it runs, and how the help screen shows it ("" : it
    shares the line of the key before)."""

    keys: str  # Textual key names, comma-separated
    action: str  # the table's action
    shown: str
    help: str


#: The cursor keys of every table beside the arrows and PgUp/PgDn (k9s, lazygit, htop, vi).
TABLE_MOVES: tuple[MoveKey, ...] = (
    MoveKey("j", "cursor_down", "j / k", "Down / up one row."),
    MoveKey("k", "cursor_up", "", ""),
    MoveKey("home,g", "scroll_top", "Home / g", "The first row."),
    MoveKey("end,G", "scroll_bottom", "End / G", "The last row."),
)
