"""Named SQL, loaded from the top-level ``sql/`` folder.

In a wheel the folder is shipped as ``skconsole/sql``; in a source checkout it
sits beside the package. SQL stays in .sql files so it can be read, reviewed
and run by hand in psql.
"""

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


@cache
def load_sql(name: str) -> LiteralString:
    """The text of ``sql/<name>.sql`` (``name`` may hold a sub-folder: ``queries/claim``)."""
    return (sql_root() / f"{name}.sql").read_text(encoding="utf-8")


def schema_scripts() -> list[tuple[str, str]]:
    """(file name, text) of every schema script, in the order they must run."""
    folder = sql_root() / "schema"
    return [(p.name, p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.sql"))]
