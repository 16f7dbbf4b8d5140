"""Named SQL, loaded from the top-level ``sql/`` folder.

In a wheel the folder is shipped as ``skconsole/sql``; in a source checkout it
sits beside the package. SQL stays in .sql files so it can be read, reviewed
and run by hand in psql. Every query under ``sql/queries`` is read once, when
this module is imported, and :func:`query` refuses a name that has no file:
a misspelt name fails at the first import of the module naming it (a test
checks that every name used exists and every file is used).
"""

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import LiteralString

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


def query(name: str) -> LiteralString:
    """The text of ``sql/queries/<name>.sql``; a KeyError names the missing file."""
    try:
        return QUERIES[name]
    except KeyError:
        raise KeyError(f"no query sql/queries/{name}.sql") from None


@cache
def load_sql(name: str) -> LiteralString:
    """The text of ``sql/<name>.sql`` (``name`` may hold a sub-folder: ``queries/claim``)."""
    return (sql_root() / f"{name}.sql").read_text(encoding="utf-8")


def schema_scripts() -> list[tuple[str, str]]:
    """(file name, text) of every schema script, in the order they must run."""
    folder = sql_root() / "schema"
    return [(p.name, p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.sql"))]
