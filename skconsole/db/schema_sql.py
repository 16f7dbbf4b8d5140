"""The schema as SQL a team puts in its migrations, and the way out (uninstall).

``skconsole schema sql`` prints exactly what ``skconsole setup`` runs, as one
transaction: the advisory lock that serialises setups, a refusal of a newer
schema, every script of ``sql/schema`` in order (rewritten for ``--mapping``,
inside ``--schema``'s search_path), and the version row with the scripts'
checksum, so a later ``skconsole setup`` sees the database up to date and
changes nothing. Every script is additive and re-runnable, so the same text
installs a fresh database and upgrades one of any earlier schema version
(a migration tool runs it once per release of skconsole it ships).

``skconsole schema uninstall`` removes skconsole's own objects, read from the
catalog rather than listed by hand (the test holds the result to what
Stakhanovise.NET's setup alone leaves): its tables, functions (their triggers
and the expression indexes built on them go with them), sequences, the
columns and indexes it added to Stakhanovise.NET's tables, and the autovacuum
settings it put on them. Stakhanovise.NET's own objects stay unless asked
(``--stakhanovise``: a queue skconsole set up alone), and so does the audit
table unless asked, so the uninstall can be audited in it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from skconsole.core.version import __version__
from skconsole.db.audit import AuditRow, insert
from skconsole.db.context import mapping_of
from skconsole.db.mapping import DERIVED_NAMES, TableMapping
from skconsole.db.rows import value, values
from skconsole.db.schema import (
    _SETUP_LOCK,
    _VERSION_TABLE,
    SCHEMA_VERSION,
    SKCONSOLE_OBJECTS,
    STAKHANOVISE_OBJECTS,
    scripts_checksum,
)
from skconsole.db.sqlfiles import query, schema_scripts

Conn = psycopg.Connection[Any]

#: the tables skconsole keeps unless asked: the record of who did what
AUDIT_TABLE = "sk_audit_t"
#: the sequences skconsole's scripts create beside its tables
SKCONSOLE_SEQUENCES = ("sk_claim_id_seq", "sk_workers_lock_key_seq")


def install_sql(mapping: TableMapping) -> str:
    """What ``skconsole setup`` runs (for ``mapping``'s names), as one SQL text for psql
    or a migration tool."""
    lock_class, lock_key = _SETUP_LOCK
    parts = [
        f"-- skconsole {__version__}: schema version {SCHEMA_VERSION}, printed by"
        " `skconsole schema sql`.",
        "-- Installs a fresh database, or upgrades one of any earlier schema version:",
        "-- every statement creates only what is missing. Run it in one transaction.",
        "BEGIN;",
        f"SELECT pg_advisory_xact_lock({lock_class}, {lock_key});",
    ]
    if mapping.schema is not None:
        parts.append(
            sql.SQL("SET LOCAL search_path TO {};")
            .format(sql.Identifier(mapping.schema))
            .as_string()
        )
    parts += [
        "DO $refuse_newer$ BEGIN",
        "    IF to_regclass('sk_schema_version_t') IS NOT NULL THEN",
        "        IF EXISTS (SELECT 1 FROM sk_schema_version_t"
        f" WHERE version > {SCHEMA_VERSION}) THEN",
        "            RAISE EXCEPTION 'the database holds a newer skconsole schema than version"
        f" {SCHEMA_VERSION}: upgrade skconsole';",
        "        END IF;",
        "    END IF;",
        "END $refuse_newer$;",
        _VERSION_TABLE.strip() + ";",
        "ALTER TABLE sk_schema_version_t ADD COLUMN IF NOT EXISTS scripts_sha256 char(64);",
    ]
    for name, script in schema_scripts(mapping):
        parts += [f"\n-- {name}", script.strip()]
    record = sql.SQL(
        "INSERT INTO sk_schema_version_t (version, skconsole_version, scripts_sha256)"
        " VALUES ({}, {}, {}) ON CONFLICT (version) DO UPDATE SET"
        " scripts_sha256 = EXCLUDED.scripts_sha256,"
        " skconsole_version = EXCLUDED.skconsole_version;"
    ).format(
        sql.Literal(SCHEMA_VERSION),
        sql.Literal(__version__),
        sql.Literal(scripts_checksum(mapping)),
    )
    parts += ["", record.as_string(), "COMMIT;", ""]
    return "\n".join(parts)


@dataclass(frozen=True)
class Uninstall:
    """What an uninstall drops, read from the catalog: each list holds names as the
    statements take them."""

    tables: tuple[str, ...]
    functions: tuple[str, ...]  # regprocedure text: name(argument types)
    sequences: tuple[str, ...]
    columns: tuple[tuple[str, str], ...]  # (Stakhanovise table, column)
    indexes: tuple[str, ...]  # on Stakhanovise's tables
    reloptions: tuple[str, ...]  # Stakhanovise tables whose storage settings are reset
    stakhanovise: tuple[str, ...]  # their tables, when asked

    @property
    def count(self) -> int:
        return sum(
            len(x)
            for x in (
                self.tables,
                self.functions,
                self.sequences,
                self.columns,
                self.indexes,
                self.stakhanovise,
            )
        )

    def statements(self) -> list[sql.Composed]:
        """The DROP and ALTER statements: skconsole's functions first (CASCADE takes
        their triggers and the expression indexes built on them, all skconsole's), its
        tables, then the columns, indexes and settings it added to Stakhanovise's
        tables (nothing of its own depends on them any more), its sequences, and
        Stakhanovise's own tables when asked."""
        out: list[sql.Composed] = [
            sql.SQL("DROP FUNCTION IF EXISTS {} CASCADE").format(sql.SQL(f)) for f in self.functions
        ]
        out += [sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(_name(t)) for t in self.tables]
        for table, column in self.columns:
            out.append(
                sql.SQL("ALTER TABLE {} DROP COLUMN IF EXISTS {}").format(
                    _name(table), sql.Identifier(column)
                )
            )
        out += [sql.SQL("DROP INDEX IF EXISTS {}").format(_name(i)) for i in self.indexes]
        out += [
            sql.SQL("ALTER TABLE {} RESET (" + _AUTOVACUUM_RESET + ")").format(_name(t))
            for t in self.reloptions
        ]
        out += [
            sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(_name(t)) for t in self.stakhanovise
        ]
        out += [sql.SQL("DROP SEQUENCE IF EXISTS {}").format(_name(q)) for q in self.sequences]
        return out


#: the settings 020_skconsole_v1.sql puts on the hot tables (reset: the server's own)
_AUTOVACUUM_RESET = (
    "autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold,"
    " autovacuum_vacuum_cost_delay, autovacuum_vacuum_cost_limit,"
    " autovacuum_analyze_scale_factor"
)


def _name(text: str) -> sql.Composable:
    """A name as the catalog gave it (``schema.name`` or ``name``), quoted part by part."""
    return sql.Identifier(*text.split(".", 1))


def uninstall_plan(conn: Conn, *, audit: bool, stakhanovise: bool) -> Uninstall:
    """Read what skconsole created in this database (``audit``: its audit table too;
    ``stakhanovise``: Stakhanovise.NET's four tables and its dequeue function as well)."""
    mapping = mapping_of(conn)
    theirs = [mapping.regname(t) for t in STAKHANOVISE_OBJECTS]
    ours = [t for t in SKCONSOLE_OBJECTS if audit or t != AUDIT_TABLE]
    params = {
        "ours": [mapping.regname(t) for t in ours],
        "theirs": theirs,
        "their_indexes": [mapping.regname(n) for names in DERIVED_NAMES.values() for n in names],
        "sequences": [
            *SKCONSOLE_SEQUENCES,
            # Stakhanovise's own (its queue's lock handles) when asked
            *([mapping.regname(DERIVED_NAMES["sk_tasks_queue_t"][0])] if stakhanovise else []),
        ],
        "dequeue": mapping.regname("sk_try_dequeue_task"),
        "stakhanovise": stakhanovise,
    }
    columns = tuple(
        (str(t), str(c)) for t, c in conn.execute(query("uninstall_columns"), params).fetchall()
    )
    return Uninstall(
        tables=_texts(values(conn, query("uninstall_tables"), params)),
        functions=_texts(values(conn, query("uninstall_functions"), params)),
        sequences=_texts(values(conn, query("uninstall_sequences"), params)),
        columns=() if stakhanovise else columns,
        indexes=() if stakhanovise else _texts(values(conn, query("uninstall_indexes"), params)),
        reloptions=()
        if stakhanovise
        else _texts(values(conn, query("uninstall_reloptions"), params)),
        stakhanovise=_texts(values(conn, query("uninstall_stakhanovise"), params)),
    )


def alive_workers(conn: Conn) -> list[str]:
    """The workers whose lease is fresh ("host pid N"): an uninstall under them would
    pull their tables away mid-claim."""
    if not value(conn, "SELECT to_regclass('sk_workers_t') IS NOT NULL"):
        return []
    return [str(w) for w in values(conn, query("uninstall_alive_workers"))]


def uninstall(conn: Conn, plan: Uninstall, audit: AuditRow | None) -> int | None:
    """Carry ``plan`` out in one transaction under the setup lock, with ``audit`` (the
    audit table stays) written in it; the audit row's id."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", _SETUP_LOCK)
        for statement in plan.statements():
            conn.execute(statement)
        return insert(conn, audit) if audit is not None else None


def _texts(items: Iterable[object]) -> tuple[str, ...]:
    return tuple(str(i) for i in items)
