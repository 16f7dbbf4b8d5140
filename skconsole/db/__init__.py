"""The database layer: where the server is, how to connect, the schema and the named SQL.

Its names load on first use: a module of the layer (the embedded server's data
directory, say) can be imported without psycopg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skconsole.db.connect import Database, connect_error_message
    from skconsole.db.sqlfiles import load_sql

__all__ = ["Database", "connect_error_message", "load_sql"]


def __getattr__(name: str) -> Any:
    if name in ("Database", "connect_error_message"):
        from skconsole.db import connect

        return getattr(connect, name)
    if name == "load_sql":
        from skconsole.db.sqlfiles import load_sql

        return load_sql
    raise AttributeError(f"module 'skconsole.db' has no attribute {name!r}")
