"""Creating and checking the schema: Stakhanovise.NET's objects plus skconsole's.

Setup is idempotent and additive: it creates what is missing and changes no
existing column, so it is safe on a database a Stakhanovise.NET application
already uses. The version it records lets an older skconsole refuse a newer
schema instead of misreading it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import psycopg

from skconsole.core.errors import ReadOnlyError, SchemaError
from skconsole.core.version import SCHEMA_VERSION as SCHEMA_VERSION
from skconsole.core.version import __version__
from skconsole.db.context import mapping_of
from skconsole.db.mapping import TableMapping
from skconsole.db.rows import one, value, values
from skconsole.db.sqlfiles import query, schema_scripts

#: The class id of skconsole's advisory locks (the two-key form, so its keys
#: never meet an application's own pg_advisory_lock(bigint) keys). The SQL
#: function sk_lock_class() returns the same number; a test checks they agree.
LOCK_CLASS = 1936419947
_SETUP_LOCK = (LOCK_CLASS, 0)  # serialises concurrent setups; workers use keys 1 and up
#: The owner id under which the totals of cleanly stopped workers are kept once their
#: own rows are folded (forget_old_workers.sql); not a process, so not counted as one.
RETIRED_METRICS_OWNER = "skconsole:retired"

STAKHANOVISE_OBJECTS = (
    "sk_tasks_queue_t",
    "sk_task_results_t",
    "sk_metrics_t",
    "sk_task_execution_time_stats_t",
)
SKCONSOLE_OBJECTS = (
    "sk_workers_t",
    "sk_task_types_t",
    "sk_audit_t",
    "sk_schedules_t",
    "sk_retention_t",
    "sk_schema_version_t",
    "sk_attempts_t",
    "sk_task_progress_t",
    "sk_task_after_t",
    "sk_task_key_windows_t",
    "sk_timelines_t",
    "sk_record_t",
    "sk_record_fresh_t",
    "sk_record_gauges_t",
    "sk_breakers_t",
    "sk_breaker_held_t",
    "sk_wave_plans_t",
    "sk_waves_t",
)

#: skconsole's columns of the results table, one per schema version (or later script
#: that the engine's statements need) that added some
RESULT_COLUMNS = (
    "sk_claim_id",
    "sk_snooze_count",
    "sk_cancel_requested_at_ts",
    "sk_trace_context",
    "sk_rerun_payload",
    "sk_due_at_ts",
)
#: skconsole's columns of the task-types table added after 020 created it, one per
#: schema version (or later script) that added some
TYPE_COLUMNS = (
    "tt_max_running",
    "tt_slo_max_wait_seconds",
    "tt_slo_max_failure_rate",
    "tt_key_path",
    "tt_breaker_held",
)
#: skconsole's columns of the workers table added after 020 created it
WORKER_COLUMNS = ("worker_app_version", "worker_session_lock")
#: the fan-in edges' columns added after 130 created them
AFTER_COLUMNS = ("after_succeeded",)
#: the audit table's columns added after 020 created it
AUDIT_COLUMNS = ("audit_origin",)

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS sk_schema_version_t (
    version integer PRIMARY KEY,
    applied_at_ts timestamptz NOT NULL DEFAULT now(),
    skconsole_version varchar(50) NOT NULL,
    scripts_sha256 char(64)
)
"""


def _regname(conn: psycopg.Connection[Any], default_name: str) -> str:
    """The object's name in ``conn``'s database as to_regclass/to_regproc read it."""
    return mapping_of(conn).regname(default_name)


def missing_objects(conn: psycopg.Connection[Any]) -> list[str]:
    names = [*STAKHANOVISE_OBJECTS, *SKCONSOLE_OBJECTS]
    absent = values(
        conn,
        "SELECT n FROM unnest(%s::text[], %s::text[]) AS t(n, reg) WHERE to_regclass(reg) IS NULL",
        (names, [_regname(conn, n) for n in names]),
    )
    missing = [mapping_of(conn).table(n) for n in absent]
    functions = (
        "sk_try_dequeue_task",
        "sk_worker_liveness",
        "sk_claim_room",
        "sk_claim_keyed",
        "sk_task_error",
        "sk_last_activity_at",
        "sk_signature_matches",
        "sk_try_jsonb",
        "sk_payload_term",
        "sk_payload_matches",
        "sk_release_after",
        "sk_timeline_state",
        "sk_claim_gate",
        "sk_key",
        "sk_index_build_lock_class",
        "sk_worker_connected",
        "sk_rerun_value",
        "sk_record_attempts",
        "sk_selected",
        "sk_waiting_selection",
        "sk_result_selection",
        "sk_retention_due",
        "sk_enqueue",
        "sk_purge_results",
        "sk_record_note_updated",
    )
    present: list[bool] = value(
        conn,
        "SELECT array_agg(to_regproc(f) IS NOT NULL ORDER BY i) AS present"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS t(f, i)",
        ([_regname(conn, f) for f in functions],),
    )
    for found_it, name in zip(present, functions, strict=True):
        if not found_it:
            missing.append(f"{mapping_of(conn).table(name)}()")
    for table, columns in (
        ("sk_task_results_t", RESULT_COLUMNS),
        ("sk_task_types_t", TYPE_COLUMNS),
        ("sk_workers_t", WORKER_COLUMNS),
        ("sk_task_after_t", AFTER_COLUMNS),
        ("sk_audit_t", AUDIT_COLUMNS),
    ):
        found = set(
            values(
                conn,
                "SELECT attname::text FROM pg_attribute WHERE attrelid = to_regclass(%s)"
                " AND attname = ANY(%s::text[]) AND NOT attisdropped",
                (_regname(conn, table), list(columns)),
            )
        )
        missing += [f"{table}.{c}" for c in columns if c not in found]
    return missing


def scripts_checksum(mapping: TableMapping) -> str:
    """Fingerprint of the shipped schema scripts (for ``mapping``'s names): a change means
    setup has work to do."""
    digest = hashlib.sha256()
    for name, text in schema_scripts(mapping):
        digest.update(name.encode())
        digest.update(text.encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class Recorded:
    """The newest version setup recorded, and the checksum of the scripts it ran
    (None: none recorded, or recorded by a version that kept no checksum)."""

    version: int | None = None
    scripts_sha256: str | None = None


def _recorded(conn: psycopg.Connection[Any]) -> Recorded:
    if not value(conn, "SELECT to_regclass('sk_schema_version_t') IS NOT NULL"):
        return Recorded()
    got = one(
        conn,
        "SELECT version, to_jsonb(v) ->> 'scripts_sha256' AS scripts_sha256"
        " FROM sk_schema_version_t v ORDER BY version DESC LIMIT 1",
        Recorded,
    )
    return got or Recorded()


def recorded_version(conn: psycopg.Connection[Any]) -> int | None:
    return _recorded(conn).version


def _refuse_newer(version: int | None) -> None:
    if version is not None and version > SCHEMA_VERSION:
        raise SchemaError(
            f"the database holds skconsole schema version {version}, newer than the {SCHEMA_VERSION} "
            "this skconsole understands: upgrade skconsole (pip install -U skconsole)"
        )


def only_stakhanovise(missing: list[str], mapping: TableMapping) -> bool:
    """``missing`` (from :func:`missing_objects`) lacks none of Stakhanovise.NET's tables:
    a database its application uses, without skconsole's objects."""
    theirs = {mapping.table(n) for n in STAKHANOVISE_OBJECTS}
    return bool(missing) and not theirs & set(missing)


def check_schema(conn: psycopg.Connection[Any], *, allow_degraded: bool = False) -> bool:
    """Raise a clear SchemaError unless the full schema at a known version is present;
    with ``allow_degraded``, Stakhanovise.NET's tables alone will do (False is returned:
    read degraded, :mod:`skconsole.db.layout`)."""
    _refuse_newer(recorded_version(conn))
    missing = missing_objects(conn)
    if missing and allow_degraded and only_stakhanovise(missing, mapping_of(conn)):
        return False
    if missing:
        raise SchemaError(
            f"the queue is not set up in this database ({', '.join(missing[:3])}"
            f"{' ...' if len(missing) > 3 else ''} not found; nothing was changed):"
            " run `skconsole setup` first, or give --setup"
        )
    return True


def _refuse_a_second_queue(conn: psycopg.Connection[Any]) -> None:
    """Raise a SchemaError rather than create the queue table when another table of its
    layout is already beside it (in this session's schemas): a second, empty queue would
    show 0 where the application's has its jobs."""
    mapping = mapping_of(conn)
    if value(conn, "SELECT to_regclass(%s) IS NOT NULL", (mapping.regname("sk_tasks_queue_t"),)):
        return
    existing = [str(name) for name in values(conn, query("stakhanovise_queues"))]
    if existing:
        raise SchemaError(
            f"this database already holds a Stakhanovise.NET queue ({', '.join(existing)}) but"
            f" not {mapping.table('sk_tasks_queue_t')}: name its tables with --mapping (its"
            " QueuedTaskMapping) rather than create a second, empty queue beside it; for a"
            " separate queue, use a schema of its own (--schema)"
        )


def setup_schema(conn: psycopg.Connection[Any]) -> bool:
    """Create whatever is missing; returns True when anything had to be created."""
    recorded = _recorded(conn)
    _refuse_newer(recorded.version)
    wanted = scripts_checksum(mapping_of(conn))
    if (
        recorded.version == SCHEMA_VERSION
        and recorded.scripts_sha256 == wanted
        and not missing_objects(conn)
    ):
        return False
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", _SETUP_LOCK)
            _refuse_a_second_queue(conn)
            conn.execute(_VERSION_TABLE)
            conn.execute(
                "ALTER TABLE sk_schema_version_t ADD COLUMN IF NOT EXISTS scripts_sha256 char(64)"
            )
            for _name, script in schema_scripts(mapping_of(conn)):
                conn.execute(script)  # static DDL shipped with the package
            conn.execute(
                "INSERT INTO sk_schema_version_t (version, skconsole_version, scripts_sha256) "
                "VALUES (%s, %s, %s) ON CONFLICT (version) DO UPDATE SET "
                "scripts_sha256 = EXCLUDED.scripts_sha256, skconsole_version = EXCLUDED.skconsole_version",
                (SCHEMA_VERSION, __version__, wanted),
            )
    except psycopg.errors.ReadOnlySqlTransaction:
        raise ReadOnlyError(
            "the schema is missing or incomplete and this session is read-only: "
            "run `skconsole setup` with write access"
        ) from None
    except psycopg.errors.InsufficientPrivilege as exc:
        raise SchemaError(f"cannot create the schema: {str(exc).splitlines()[0]}") from None
    return True
