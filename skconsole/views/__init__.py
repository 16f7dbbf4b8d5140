"""Views: the read models under the names ``skconsole status`` takes, each with its
reader, its JSON and, where it is one table, its columns (drawn by the CLI and the
console alike). Presentation-neutral: no UI library; each face draws the cells.

The catalog (:data:`VIEWS`) and the registry import the read models: they are
loaded when first used, so a table helper (``views.table``) costs no read model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    if name in ("BY_NAME", "OVERVIEW", "VIEWS"):
        from skconsole.views import catalog

        return getattr(catalog, name)
    if name in ("Table", "View", "ViewArgs"):
        from skconsole.views import registry

        return getattr(registry, name)
    raise AttributeError(f"module 'skconsole.views' has no attribute {name!r}")
