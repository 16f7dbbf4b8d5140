"""Named SQL, loaded from the top-level ``sql/`` folder.

In a wheel the folder is shipped as ``skconsole/sql``; in a source checkout it
sits beside the package. SQL stays in .sql files so it can be read, reviewed
and run by hand in psql. Every query under ``sql/queries`` is read once, when
this module is imported, and :func:`query` refuses a name that has no file:
a misspelt name fails at the first import of the module naming it (a test
checks that every name used exists and every file is used).

The SQL names Stakhanovise.NET's objects by their default names. :func:`query`
hands out a :class:`Statement` (the text, knowing its name), and the cursor that
runs it rewrites it for the layout of its connection's queue
(:func:`for_layout`, :mod:`skconsole.db.context`): a database that renamed them
(``QueuedTaskMapping``), or several queues each with names of its own, need
nothing ambient. Only statements are rewritten, never text composed from mapped
identifiers, so nothing is rewritten twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, LiteralString, cast

from skconsole.db.mapping import TableMapping

_PACKAGE = Path(__file__).resolve().parent.parent


@cache
def sql_root() -> Path:
    for candidate in (_PACKAGE / "sql", _PACKAGE.parent / "sql"):
        if (candidate / "schema").is_dir():
            return candidate
    raise FileNotFoundError("skconsole's sql/ folder is missing from this installation")


def _load_queries() -> Mapping[str, LiteralString]:
    folder = sql_root() / "queries"
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.sql"))}


#: Every query of ``sql/queries``, by file name without ``.sql``.
QUERIES: Mapping[str, LiteralString] = _load_queries()


class Statement(str):
    """The text of a named statement, written with the default names (its ``name``
    says which file it is)."""

    name: str

    def __new__(cls, name: str, text: str) -> Statement:
        made = super().__new__(cls, text)
        made.name = name
        return made


def query(name: str) -> LiteralString:
    """The text of ``sql/queries/<name>.sql``, for its connection's cursor to rewrite for
    its layout; a KeyError names the missing file."""
    try:
        text = QUERIES[name]
    except KeyError:
        raise KeyError(f"no query sql/queries/{name}.sql") from None
    return cast(LiteralString, Statement(name, text))


def for_layout(statement: Any, mapping: TableMapping) -> Any:
    """``statement`` for ``mapping``: a named statement rewritten for its names, anything
    else as it is."""
    if mapping.is_default or not isinstance(statement, Statement):
        return statement
    return _mapped(mapping, statement.name)


@cache
def _mapped(mapping: TableMapping, name: str) -> LiteralString:
    # names only become quoted identifiers and literals (psycopg.sql): still SQL we wrote
    return mapping.rewrite(QUERIES[name])


@cache
def load_sql(name: str) -> LiteralString:
    """The text of ``sql/<name>.sql`` (``name`` may hold a sub-folder: ``queries/claim``)."""
    return (sql_root() / f"{name}.sql").read_text(encoding="utf-8")


def schema_scripts(mapping: TableMapping) -> list[tuple[str, str]]:
    """(file name, text) of every schema script, in the order they must run, for
    ``mapping``'s names."""
    folder = sql_root() / "schema"
    return [
        (p.name, mapping.rewrite(p.read_text(encoding="utf-8")))
        for p in sorted(folder.glob("*.sql"))
    ]
