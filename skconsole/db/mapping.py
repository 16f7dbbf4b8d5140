"""Stakhanovise.NET's table mapping: the names an application gave its queue's objects.

Stakhanovise.NET lets an application rename its queue table, results table,
notification channel and dequeue function (``QueuedTaskMapping``), and its
metrics and execution-time tables. skconsole's SQL is written with the default
names; a :class:`TableMapping` rewrites every statement for the names in use:
table and function names become quoted identifiers (``psycopg.sql.Identifier``),
the channel a quoted literal (``psycopg.sql.Literal``), so a name never reaches
the server as anything but a name. A schema is not written into the SQL: every
session's ``search_path`` is set to it, so our own objects live beside the
application's. One process works with one layout: the CLI sets it from
``--mapping`` and ``--schema`` (:func:`skconsole.db.sqlfiles.use_mapping`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from psycopg import sql

from skconsole.errors import ConfigError
from skconsole.text import quoted

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


@dataclass(frozen=True)
class TableMapping:
    """The names of Stakhanovise.NET's objects in one database (default: its defaults)."""

    queue_table: str = "sk_tasks_queue_t"
    results_table: str = "sk_task_results_t"
    metrics_table: str = "sk_metrics_t"
    execution_time_stats_table: str = "sk_task_execution_time_stats_t"
    dequeue_function: str = "sk_try_dequeue_task"
    channel: str = "sk_task_queue_item_added"
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
            if not isinstance(name, str) or not name or "\x00" in name:
                raise ConfigError(f"mapping: {f.name} must be a non-empty name, got {name!r}")
            if len(name.encode("utf-8")) > MAX_NAME_BYTES:
                raise ConfigError(
                    f"mapping: {f.name} {quoted(name)} is longer than PostgreSQL's"
                    f" {MAX_NAME_BYTES}-byte names"
                )

    @cached_property
    def is_default(self) -> bool:
        """Default names (whatever the schema): SQL is used as written (asked for every
        statement: computed once)."""
        return replace(self, schema=None) == DEFAULT_MAPPING

    @property
    def session_options(self) -> str:
        """libpq options every session needs for this layout (its search_path)."""
        return f"-c search_path={self.schema}" if self.schema else ""

    def as_dict(self) -> dict[str, str | None]:
        return asdict(self)

    def table(self, default_name: str) -> str:
        """The name in use for the object Stakhanovise.NET calls ``default_name``."""
        return self._renames.get(default_name, default_name)

    @cached_property
    def _renames(self) -> dict[str, str]:
        return {
            getattr(DEFAULT_MAPPING, f.name): getattr(self, f.name)
            for f in fields(self)
            if f.name not in ("channel", "schema")
        }

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        names = sorted(self._renames, key=len, reverse=True)
        return re.compile(
            r"\b("
            + "|".join(map(re.escape, names))
            + r")\b"
            + "|'"
            + re.escape(DEFAULT_MAPPING.channel)
            + "'"
        )

    def rewrite(self, text: str) -> str:
        """``text`` (SQL written with the default names) for the names in use."""
        if self.is_default:
            return text

        def name(m: re.Match[str]) -> str:
            if m.group(1) is None:  # the channel, as a literal
                return sql.Literal(self.channel).as_string(None)
            return sql.Identifier(self._renames[m.group(1)]).as_string(None)

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
