"""Views: the read models under the names ``skconsole status`` takes, each with its
reader, its JSON and, where it is one table, its columns (drawn by the CLI and the
console alike). Presentation-neutral: no UI library; each face draws the cells.

The catalog (:data:`VIEWS`) and the registry import the read models: they are
loaded when first used, so a table helper (``views.table``) costs no read model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skconsole.core.lazy import lazy_names
from skconsole.views.table import Cell, Column, Face, Tone

if TYPE_CHECKING:
    from skconsole.views.catalog import BY_NAME, OVERVIEW, VIEWS
    from skconsole.views.registry import Table, View, ViewArgs

__all__ = [
    "BY_NAME",
    "OVERVIEW",
    "VIEWS",
    "Cell",
    "Column",
    "Face",
    "Table",
    "Tone",
    "View",
    "ViewArgs",
]


__getattr__, __dir__ = lazy_names(
    __name__,
    {
        **dict.fromkeys(("BY_NAME", "OVERVIEW", "VIEWS"), "skconsole.views.catalog"),
        **dict.fromkeys(("Table", "View", "ViewArgs"), "skconsole.views.registry"),
    },
)
