"""Several queues in one process: their names, servers and layouts.

An on-call engineer of three services watches three queues: ``--dsn`` given once per
queue, or a queues file (``--queues FILE``, TOML) that names each one::

    [[queue]]
    name = "billing"
    dsn = "postgresql://watch@billing-db/billing"
    mapping = "billing-mapping.json"   # optional: a --mapping file (relative to this file)
    schema = "queue"                   # optional: like --schema

A queue named by ``--dsn`` alone gets a name people read, from its DSN: its
database at its host (``billing@billing-db``), the port added only where two would
read the same. A queue's ``mapping`` may also be an inline table of names
(``mapping = { queue_table = "billing_jobs" }``). A queue with neither
``mapping`` nor ``schema`` uses the process's layout (``--mapping``, ``--schema``);
its reads enter their own with :func:`skconsole.db.sqlfiles.mapped`.

Every mistake in the file is one line naming the file and the queue: TOML that does
not parse (with its line and column), a queue without a dsn, two queues of one name,
an unknown key.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import psycopg
from psycopg import conninfo

from skconsole.core.errors import ConfigError
from skconsole.core.text import is_printable, quoted
from skconsole.db.mapping import TableMapping

#: the keys a [[queue]] takes
QUEUE_KEYS = ("name", "dsn", "mapping", "schema")
#: the longest queue name (it is a label in every metric, and a column on screen)
MAX_NAME_LENGTH = 63
DEFAULT_PORT = "5432"


@dataclass(frozen=True)
class QueueSpec:
    """One queue: the name it is shown and labelled by, its server, and its layout
    (``mapping`` None: the process's)."""

    name: str
    dsn: str
    mapping: TableMapping | None = None


def _dsn_parts(dsn: str) -> tuple[str, str, str]:
    """(database, host, port) a DSN names, as libpq would default them."""
    try:
        params = conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return ("queue", "unparseable DSN", "")
    host = str(params.get("host") or params.get("hostaddr") or "localhost").split(",")[0]
    if host.startswith("/"):  # a Unix socket's directory
        host = "localhost"
    port = str(params.get("port") or DEFAULT_PORT).split(",")[0]
    database = str(params.get("dbname") or params.get("user") or "postgres")
    return database, host, port


def _options(dsn: str) -> tuple[str, str]:
    """The DSN's user and ``options``: the same database reached as another role, or with
    another search_path, may be meant as another queue."""
    try:
        params = conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return ("", "")
    return (str(params.get("user") or ""), str(params.get("options") or ""))


def name_from_dsn(dsn: str) -> str:
    """A name people read for the queue a DSN reaches: ``billing@db1`` (its database at
    its host; never its user or password)."""
    database, host, _ = _dsn_parts(dsn)
    return f"{database}@{host}"


def queues_from_dsns(dsns: Sequence[str]) -> tuple[QueueSpec, ...]:
    """One queue per ``--dsn``, named from it; where two names would read the same, the
    port is added, then a number."""
    parts = [_dsn_parts(d) for d in dsns]
    same = [p for p, n in Counter(zip(parts, map(_options, dsns), strict=True)).items() if n > 1]
    if same:
        (db, host, port), _ = same[0]
        raise ConfigError(f"--dsn names the queue {db}@{host}:{port} twice: name each queue once")
    names = [f"{db}@{host}" for db, host, _ in parts]
    seen = Counter(names)
    names = [
        f"{db}@{host}:{port}" if seen[n] > 1 else n
        for n, (db, host, port) in zip(names, parts, strict=True)
    ]
    taken: Counter[str] = Counter()
    unique = []
    for n in names:
        taken[n] += 1
        unique.append(n if taken[n] == 1 else f"{n}-{taken[n]}")
    return tuple(QueueSpec(n, d) for n, d in zip(unique, dsns, strict=True))


def load_queues(path: Path) -> tuple[QueueSpec, ...]:
    """The queues a TOML file names (see the module's docstring); a ConfigError, one
    line, for anything wrong with it."""
    where = f"the queues file {quoted(str(path), 200)}"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {where}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where} is not UTF-8 text") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where} is not valid TOML: {exc}") from None
    unknown = [k for k in doc if k != "queue"]
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {quoted(unknown[0])} (it holds [[queue]] tables only)"
        )
    tables = doc.get("queue")
    if not isinstance(tables, list) or not tables:
        raise ConfigError(f'{where} names no queue: add [[queue]] tables, each with a dsn = "..."')
    queues = [_queue(where, path.parent, n, t) for n, t in enumerate(tables, 1)]
    counts = Counter(q.name for q in queues)
    for q in queues:
        if counts[q.name] > 1:
            numbers = [str(n) for n, other in enumerate(queues, 1) if other.name == q.name]
            raise ConfigError(
                f"{where}: queues {' and '.join(numbers)} are both named {quoted(q.name)};"
                " each queue needs a name of its own"
            )
    return tuple(queues)


def _queue(where: str, folder: Path, number: int, table: Any) -> QueueSpec:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: queue {number} is not a table ([[queue]])")
    given = table.get("name")
    label = f"queue {number}" + (f" ({quoted(given)})" if isinstance(given, str) else "")
    for key in table:
        if key not in QUEUE_KEYS:
            raise ConfigError(
                f"{where}: {label} has an unknown key {quoted(key)}"
                f" (known: {', '.join(QUEUE_KEYS)})"
            )
    dsn = table.get("dsn")
    if dsn is None:
        raise ConfigError(f'{where}: {label} has no dsn (dsn = "postgresql://...")')
    if not isinstance(dsn, str) or not dsn.strip():
        raise ConfigError(f"{where}: {label}'s dsn must be a non-empty string")
    try:
        conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        first = (str(exc).strip().splitlines() or ["unparseable"])[0]
        raise ConfigError(f"{where}: {label} has an invalid dsn: {first}") from None
    name = name_from_dsn(dsn) if given is None else given
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: queue {number}'s name must be a non-empty string")
    if not is_printable(name) or len(name) > MAX_NAME_LENGTH:
        raise ConfigError(
            f"{where}: {label}'s name must be printable text of at most"
            f" {MAX_NAME_LENGTH} characters"
        )
    try:
        mapping = _layout(folder, table.get("mapping"), table.get("schema"))
    except ConfigError as exc:
        raise ConfigError(f"{where}: {label}: {exc}") from None
    return QueueSpec(name, dsn, mapping)


def _layout(folder: Path, mapping: Any, schema: Any) -> TableMapping | None:
    """The queue's own layout: its mapping (a file, or an inline table) with its schema;
    None when it gives neither (the process's layout holds)."""
    if mapping is None and schema is None:
        return None
    if schema is not None and not isinstance(schema, str):
        raise ConfigError("schema must be a string")
    if mapping is None:
        layout = TableMapping()
    elif isinstance(mapping, str):
        layout = TableMapping.from_file(folder / mapping)
    elif isinstance(mapping, dict):
        layout = TableMapping.from_dict(mapping, source="mapping")
    else:
        raise ConfigError("mapping must be a file name or a table of names")
    return replace(layout, schema=schema) if schema is not None else layout
