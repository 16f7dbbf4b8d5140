"""Stakhanovise.NET's table mapping: the names an application gave its queue's objects.

Stakhanovise.NET lets an application rename its queue table, results table,
notification channel and dequeue function (``QueuedTaskMapping``), and its
metrics and execution-time tables. It writes those names into its SQL as they
are, unquoted, so PostgreSQL reads them as unquoted identifiers: folded to
lower case (``Billing_sk_tasks_queue_t`` is the table
``billing_sk_tasks_queue_t``), cut to 63 bytes, a dot separating a schema. Its
setup derives the names of its constraints, indexes and sequence from them by
plain replacement (``pk_sk_tasks_queue_t`` becomes ``pk_billing_sk_tasks_queue_t``).
:func:`resolve_name` reads a mapped name exactly that way, and a
:class:`TableMapping` rewrites skconsole's SQL (written with the default names)
for the resolved names: each becomes a quoted identifier
(``psycopg.sql.Identifier``) naming exactly what .NET's unquoted text names, the
channel a quoted literal (``psycopg.sql.Literal``), so a name never reaches the
server as anything but a name. A schema given with ``--schema`` is not written
into the SQL: every session's ``search_path`` is set to it, so our own objects
live beside the application's. A layout travels with the database that has it
(``Database.mapping``, from ``--mapping`` and ``--schema`` or a queues file) and
with each connection it opens (:mod:`skconsole.db.context`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import Any

from psycopg import sql

from skconsole.core.errors import ConfigError
from skconsole.core.text import quoted

#: Stakhanovise.NET's option names (its appsettings keys), and ours for each.
STAKHANOVISE_KEYS = {
    "QueueTableName": "queue_table",
    "ResultsQueueTableName": "results_table",
    "NewTaskNotificationChannelName": "channel",
    "DequeueFunctionName": "dequeue_function",
    "MetricsTableName": "metrics_table",
    "ExecutionTimeStatsTableName": "execution_time_stats_table",
}
#: PostgreSQL truncates longer names (NAMEDATALEN - 1 bytes)
MAX_NAME_BYTES = 63
#: a schema name that needs no quoting in a search_path setting
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
#: one part of a name as PostgreSQL's lexer reads it: quoted (case kept, "" for
#: a quote) or unquoted (a letter or _ first, then letters, digits, _ and $;
#: any non-ASCII character counts as a letter)
_PART = re.compile(r'"((?:[^"]|"")+)"|([A-Za-z_\x80-\U0010ffff][A-Za-z0-9_$\x80-\U0010ffff]*)')

DEFAULT_CHANNEL = "sk_task_queue_item_added"

#: Stakhanovise.NET's setup names these objects after a table: the default table
#: name within each is replaced by the mapped one (its DbScriptAssetSetup).
DERIVED_NAMES = {
    "sk_tasks_queue_t": (
        "sk_tasks_queue_t_task_lock_handle_id_seq",
        "pk_sk_tasks_queue_t",
        "unq_sk_tasks_queue_t_task_lock_handle_id",
        "idx_sk_tasks_queue_t_filter_index",
        "idx_sk_tasks_queue_t_sort_index",
    ),
    "sk_task_results_t": (
        "pk_sk_task_results_t",
        "idx_sk_task_results_t_task_status",
        "idx_sk_task_results_t_task_type",
    ),
    "sk_metrics_t": ("pk_sk_metrics_t", "idx_sk_metrics_t_category"),
    "sk_task_execution_time_stats_t": ("pk_sk_task_execution_time_stats_t",),
}


def truncate_name(name: str) -> str:
    """``name`` cut to PostgreSQL's 63 bytes, never inside a character (pg_mbcliplen)."""
    data = name.encode("utf-8")
    if len(data) <= MAX_NAME_BYTES:
        return name
    return data[:MAX_NAME_BYTES].decode("utf-8", errors="ignore")


def resolve_name(text: str, *, what: str, qualified: bool = True) -> tuple[str, ...]:
    """The parts of ``text`` read as PostgreSQL reads a name written unquoted in SQL (as
    Stakhanovise.NET writes mapped names): ``Billing_Jobs`` is ``billing_jobs``,
    ``"Billing_Jobs"`` keeps its case, ``billing.jobs`` is the table jobs in schema
    billing. A text that is not a name (a space, a quote, a semicolon) is refused: .NET's
    own SQL would not run with it either."""
    parts: list[str] = []
    pos = 0
    while True:
        m = _PART.match(text, pos)
        if m is None:
            break
        if m.group(1) is not None:
            parts.append(truncate_name(m.group(1).replace('""', '"')))
        else:
            # only ASCII letters are folded (PostgreSQL, in a multibyte encoding)
            folded = "".join(c.lower() if "A" <= c <= "Z" else c for c in m.group(2))
            parts.append(truncate_name(folded))
        pos = m.end()
        if pos == len(text) or text[pos] != "." or (not qualified) or len(parts) == 2:
            break
        pos += 1
    if not parts or pos != len(text) or "\x00" in text:
        form = "a name, or schema.name," if qualified else "a name"
        raise ConfigError(
            f"mapping: {what} {quoted(text)} is not {form} as PostgreSQL reads it unquoted"
            " (Stakhanovise.NET writes it into its SQL as it is); a name with other"
            ' characters must be written in double quotes, e.g. "My Jobs"'
        )
    return tuple(parts)


@dataclass(frozen=True)
class TableMapping:
    """The names of Stakhanovise.NET's objects in one database (default: its defaults)."""

    queue_table: str = "sk_tasks_queue_t"
    results_table: str = "sk_task_results_t"
    metrics_table: str = "sk_metrics_t"
    execution_time_stats_table: str = "sk_task_execution_time_stats_t"
    dequeue_function: str = "sk_try_dequeue_task"
    channel: str = DEFAULT_CHANNEL
    #: the schema the queue's objects live in (None: the connection's search_path)
    schema: str | None = None

    def __post_init__(self) -> None:
        if self.schema is not None and not (
            _PLAIN_NAME.fullmatch(self.schema) and len(self.schema) <= MAX_NAME_BYTES
        ):
            raise ConfigError(
                f"--schema takes a plain name (letters, digits, _ and $), got {quoted(self.schema)};"
                " for another name, set search_path in the DSN's options"
            )
        for f in fields(self):
            if f.name == "schema":
                continue
            name = getattr(self, f.name)
            if not isinstance(name, str) or not name.strip():
                raise ConfigError(f"mapping: {f.name} must be a non-empty name, got {name!r}")
        _ = self._resolved  # every name read now: a bad one is refused at once

    @cached_property
    def _resolved(self) -> dict[str, tuple[str, ...]]:
        """Each default name (tables, dequeue function, and the names .NET's setup derives
        from a table) and the channel: the parts of the name in use."""
        names: dict[str, tuple[str, ...]] = {}
        for f in fields(self):
            if f.name == "schema":
                continue
            default = str(f.default)
            names[default] = resolve_name(
                getattr(self, f.name), what=f.name, qualified=f.name != "channel"
            )
        for table, derived in DERIVED_NAMES.items():
            *schema, bare = names[table]
            for name in derived:
                own = truncate_name(name.replace(table, bare))
                # the sequence lives beside its table; constraint and index names are bare
                names[name] = (*schema, own) if name.endswith("_seq") else (own,)
        return names

    @cached_property
    def is_default(self) -> bool:
        """Default names (whatever the schema): SQL is used as written (asked for every
        statement: computed once)."""
        return all(parts == (name,) for name, parts in self._resolved.items())

    @property
    def session_options(self) -> str:
        """libpq options every session needs for this layout (its search_path)."""
        return f"-c search_path={self.schema}" if self.schema else ""

    def as_dict(self) -> dict[str, str | None]:
        return asdict(self)

    def table(self, default_name: str) -> str:
        """The name (as pg_class holds it, without a schema) of the object Stakhanovise.NET
        calls ``default_name``."""
        return self._resolved.get(default_name, (default_name,))[-1]

    def identifier(self, default_name: str) -> sql.Identifier:
        """The object as an identifier to compose SQL with (schema-qualified when the
        mapping names a schema)."""
        return sql.Identifier(*self._resolved.get(default_name, (default_name,)))

    def regname(self, default_name: str) -> str:
        """The same object as text that ``to_regclass`` and ``has_table_privilege`` read."""
        return self.identifier(default_name).as_string(None)

    @property
    def channel_name(self) -> str:
        """The notification channel as LISTEN and NOTIFY name it (folded like a name)."""
        return self._resolved[DEFAULT_CHANNEL][0]

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        names = sorted((n for n in self._resolved if n != DEFAULT_CHANNEL), key=len, reverse=True)
        return re.compile(
            r"\b("
            + "|".join(map(re.escape, names))
            + r")\b"
            + "|'"
            + re.escape(DEFAULT_CHANNEL)
            + "'"
        )

    def rewrite(self, text: str) -> str:
        """``text`` (SQL written with the default names) for the names in use."""
        if self.is_default:
            return text

        def name(m: re.Match[str]) -> str:
            if m.group(1) is None:  # the channel, as a literal
                return sql.Literal(self.channel_name).as_string(None)
            return sql.Identifier(*self._resolved[m.group(1)]).as_string(None)

        return self._pattern.sub(name, text)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str = "mapping") -> TableMapping:
        """From our keys or Stakhanovise.NET's (``QueueTableName``, ...); unknown keys refused."""
        ours = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in data.items():
            name = STAKHANOVISE_KEYS.get(key, key)
            if name not in ours:
                known = ", ".join(sorted(ours | set(STAKHANOVISE_KEYS)))
                raise ConfigError(f"{source}: unknown key {quoted(str(key))} (known: {known})")
            values[name] = value
        return cls(**values)

    @classmethod
    def from_file(cls, path: str | Path) -> TableMapping:
        """From a JSON file: an object of names, or Stakhanovise.NET's settings section
        holding one (``{"QueuedTaskMapping": {...}}``)."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(
                f"cannot read the mapping file {quoted(str(path))}: {exc.strerror}"
            ) from None
        except ValueError as exc:
            raise ConfigError(f"the mapping file {quoted(str(path))} is not JSON: {exc}") from None
        if isinstance(data, dict) and isinstance(data.get("QueuedTaskMapping"), dict):
            data = data["QueuedTaskMapping"]
        if not isinstance(data, dict):
            raise ConfigError(f"the mapping file {quoted(str(path))} must hold a JSON object")
        return cls.from_dict(data, source=f"mapping file {quoted(str(path))}")


DEFAULT_MAPPING = TableMapping()
