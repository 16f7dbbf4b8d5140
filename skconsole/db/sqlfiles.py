"""Named SQL, loaded from the top-level ``sql/`` folder.

In a wheel the folder is shipped as ``skconsole/sql``; in a source checkout it
sits beside the package. SQL stays in .sql files so it can be read, reviewed
and run by hand in psql. Every query under ``sql/queries`` is read once, when
this module is imported, and :func:`query` refuses a name that has no file:
a misspelt name fails at the first import of the module naming it (a test
checks that every name used exists and every file is used).

The SQL names Stakhanovise.NET's objects by their default names; a process
working on a database that renamed them (``QueuedTaskMapping``) says so once
with :func:`use_mapping`, and every text handed out is rewritten for it
(:mod:`skconsole.db.mapping`).
"""

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import LiteralString

from skconsole.db.mapping import DEFAULT_MAPPING, TableMapping

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


_active: TableMapping = DEFAULT_MAPPING


def use_mapping(mapping: TableMapping) -> None:
    """Rewrite every statement handed out from now on for ``mapping`` (one per process:
    the CLI sets it from ``--mapping``, a library user before connecting)."""
    global _active
    _active = mapping


def active_mapping() -> TableMapping:
    return _active


def query(name: str) -> LiteralString:
    """The text of ``sql/queries/<name>.sql`` for the names in use; a KeyError names
    the missing file."""
    try:
        text = QUERIES[name]
    except KeyError:
        raise KeyError(f"no query sql/queries/{name}.sql") from None
    if _active.is_default:
        return text
    return _mapped(_active, name)


@cache
def _mapped(mapping: TableMapping, name: str) -> LiteralString:
    # names only become quoted identifiers and literals (psycopg.sql): still SQL we wrote
    return mapping.rewrite(QUERIES[name])


@cache
def load_sql(name: str) -> LiteralString:
    """The text of ``sql/<name>.sql`` (``name`` may hold a sub-folder: ``queries/claim``)."""
    return (sql_root() / f"{name}.sql").read_text(encoding="utf-8")


def schema_scripts() -> list[tuple[str, str]]:
    """(file name, text) of every schema script, in the order they must run, for the
    names in use."""
    folder = sql_root() / "schema"
    return [
        (p.name, _active.rewrite(p.read_text(encoding="utf-8")))
        for p in sorted(folder.glob("*.sql"))
    ]
