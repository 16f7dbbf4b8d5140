"""The database layer: where the server is, how to connect, the schema and the named SQL."""

from skconsole.db.connect import Database, connect_error_message
from skconsole.db.sqlfiles import load_sql

__all__ = ["Database", "connect_error_message", "load_sql"]
