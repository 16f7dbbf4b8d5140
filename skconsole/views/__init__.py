"""Views: the read models under the names ``skconsole status`` takes, each with its
reader, its JSON and, where it is one table, its columns (drawn by the CLI and the
console alike). Presentation-neutral: no UI library; each face draws the cells.
"""

from skconsole.views.catalog import BY_NAME, OVERVIEW, VIEWS
from skconsole.views.registry import Table, View, ViewArgs
from skconsole.views.table import Cell, Column, Face, Tone

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
