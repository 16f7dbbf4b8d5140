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
(:mod:`skconsole.db.mapping`). A process that watches several queues, each
with names of its own (``--queues``), reads each one within :func:`mapped`:
the layout holds for that thread's (context's) statements only.
"""

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
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
#: a layout in effect for one context (a queue's reads): wins over the process's
_within: ContextVar[TableMapping | None] = ContextVar("skconsole_mapping", default=None)


def use_mapping(mapping: TableMapping) -> None:
    """Rewrite every statement handed out from now on for ``mapping`` (the process's:
    the CLI sets it from ``--mapping``, a library user before connecting)."""
    global _active
    _active = mapping


@contextmanager
def mapped(mapping: TableMapping | None) -> Iterator[None]:
    """Within the block (this thread's context only), statements are for ``mapping``;
    None: the process's layout. A new thread starts without it: each queue's reads
    enter it on the thread that makes them."""
    if mapping is None:
        yield
        return
    token = _within.set(mapping)
    try:
        yield
    finally:
        _within.reset(token)


def active_mapping() -> TableMapping:
    within = _within.get()
    return _active if within is None else within


def query(name: str) -> LiteralString:
    """The text of ``sql/queries/<name>.sql`` for the names in use; a KeyError names
    the missing file."""
    try:
        text = QUERIES[name]
    except KeyError:
        raise KeyError(f"no query sql/queries/{name}.sql") from None
    mapping = active_mapping()
    if mapping.is_default:
        return text
    return _mapped(mapping, name)


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
        (p.name, active_mapping().rewrite(p.read_text(encoding="utf-8")))
        for p in sorted(folder.glob("*.sql"))
    ]
