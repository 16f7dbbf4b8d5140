"""The database layer: where the server is, how to connect, the schema and the named SQL.

Its names load on first use: a module of the layer (the embedded server's data
directory, say) can be imported without psycopg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skconsole.core.lazy import lazy_names

if TYPE_CHECKING:
    from skconsole.db.connect import Database, connect_error_message
    from skconsole.db.sqlfiles import load_sql

__all__ = ["Database", "connect_error_message", "load_sql"]


__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "Database": "skconsole.db.connect",
        "connect_error_message": "skconsole.db.connect",
        "load_sql": "skconsole.db.sqlfiles",
    },
)
