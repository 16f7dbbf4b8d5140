"""The schema: Stakhanovise.NET's objects plus skconsole's additive ones.

Setup is idempotent and additive, refuses a newer schema, and the dequeue
function keeps Stakhanovise.NET's contract.
"""

from __future__ import annotations

import threading
import uuid
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest

from skconsole.core.errors import SchemaError
from skconsole.db.mapping import DEFAULT_MAPPING
from skconsole.db.schema import SCHEMA_VERSION, check_schema, setup_schema
from skconsole.db.sqlfiles import schema_scripts
from tests.support.rows import one_row

Conn = psycopg.Connection[Any]

STAKHANOVISE_TABLES = (
    "sk_tasks_queue_t",
    "sk_task_results_t",
    "sk_metrics_t",
    "sk_task_execution_time_stats_t",
)


# -- helpers ----------------------------------------------------------------------
def catalog_snapshot(conn: Conn) -> dict[str, Any]:
    """Everything setup could change: columns, indexes, constraints, functions, table options."""
    columns = conn.execute(
        """
        SELECT table_name, column_name, data_type, character_maximum_length, is_nullable, column_default
        FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name LIKE 'sk\\_%%'
        ORDER BY 1, 2
        """
    ).fetchall()
    indexes = conn.execute(
        "SELECT tablename, indexname, indexdef FROM pg_indexes "
        "WHERE schemaname = current_schema() AND tablename LIKE 'sk\\_%%' ORDER BY 1, 2"
    ).fetchall()
    constraints = conn.execute(
        """
        SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
        FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = current_schema() ORDER BY 1, 2
        """
    ).fetchall()
    functions = conn.execute(
        """
        SELECT p.proname, pg_get_function_identity_arguments(p.oid),
            -- an aggregate has no function definition: its state function and type stand in
            CASE WHEN p.prokind = 'a'
                THEN (SELECT a.aggtransfn::text || ':' || a.aggtranstype::regtype::text
                      FROM pg_aggregate a WHERE a.aggfnoid = p.oid)
                ELSE md5(pg_get_functiondef(p.oid)) END
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = current_schema() AND p.proname LIKE 'sk\\_%%' ORDER BY 1, 2
        """
    ).fetchall()
    relations = conn.execute(
        """
        SELECT c.relname, c.relkind, c.reloptions
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relname LIKE 'sk\\_%%' ORDER BY 1
        """
    ).fetchall()
    return {
        "columns": columns,
        "indexes": indexes,
        "constraints": constraints,
        "functions": functions,
        "relations": relations,
    }


def column_defs(conn: Conn, tables: tuple[str, ...]) -> dict[tuple[str, str], tuple[Any, ...]]:
    rows = conn.execute(
        """
        SELECT table_name, column_name, data_type, character_maximum_length, is_nullable, column_default
        FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = ANY(%s)
        """,
        (list(tables),),
    ).fetchall()
    return {(r[0], r[1]): tuple(r[2:]) for r in rows}


def reloptions(conn: Conn, table: str) -> dict[str, str]:
    row = one_row(conn, "SELECT reloptions FROM pg_class WHERE oid = to_regclass(%s)", (table,))
    return dict(opt.split("=", 1) for opt in (row[0] or []))


def enqueue_raw(
    conn: Conn,
    task_type: str = "t.a",
    *,
    priority: int = 0,
    locked_until: str | datetime = "now() - interval '1 second'",
) -> uuid.UUID:
    """A queue row written by hand, the way a Stakhanovise.NET producer would."""
    task_id = uuid.uuid4()
    if isinstance(locked_until, datetime):
        conn.execute(
            "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority, "
            "task_locked_until_ts) VALUES (%s, %s, 'tests', '{}', %s, %s)",
            (task_id, task_type, priority, locked_until),
        )
    else:
        conn.execute(
            "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority, "
            f"task_locked_until_ts) VALUES (%s, %s, 'tests', '{{}}', %s, {locked_until})",  # type: ignore[arg-type]
            (task_id, task_type, priority),
        )
    return task_id


def dequeue(
    conn: Conn,
    select_types: list[str] | None = None,
    exclude_ids: list[uuid.UUID] | None = None,
    ref_now: datetime | None = None,
) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT * FROM sk_try_dequeue_task(%s::varchar[], %s::uuid[], coalesce(%s::timestamptz, now()))",
        (select_types or [], exclude_ids or [], ref_now),
    ).fetchall()


def db_now(conn: Conn) -> datetime:
    row = one_row(conn, "SELECT now()")
    return row[0]  # type: ignore[no-any-return]


# -- setup -------------------------------------------------------------------------
def test_setup_on_an_empty_database_creates_the_full_schema_and_records_its_version(
    fresh_database: str,
) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        assert setup_schema(conn) is True
        check_schema(conn)  # does not raise
        assert conn.execute("SELECT max(version) FROM sk_schema_version_t").fetchone() == (
            SCHEMA_VERSION,
        )


def test_running_setup_twice_is_a_no_op(fresh_database: str) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        assert setup_schema(conn) is True
        before = catalog_snapshot(conn)
        versions_before = conn.execute("SELECT * FROM sk_schema_version_t").fetchall()

        assert setup_schema(conn) is False

        assert catalog_snapshot(conn) == before
        assert conn.execute("SELECT * FROM sk_schema_version_t").fetchall() == versions_before


def test_re_applying_the_schema_scripts_over_a_complete_schema_changes_no_object(
    fresh_database: str,
) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        setup_schema(conn)
        before = catalog_snapshot(conn)
        # forget the recorded version, so setup runs every script again
        conn.execute("DELETE FROM sk_schema_version_t")

        assert setup_schema(conn) is True

        assert catalog_snapshot(conn) == before


def _finished_index(conn: Conn) -> str:
    found = conn.execute(
        "SELECT pg_get_indexdef('idx_sk_task_results_status_finalized'::regclass)"
    ).fetchone()
    assert found is not None
    return str(found[0])


def test_a_new_job_enters_no_index_of_finished_rows(fresh_database: str) -> None:
    """A post writes fewer index entries: the finished rows' index holds finished rows only."""
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        setup_schema(conn)
        assert _finished_index(conn).endswith("WHERE (task_processing_finalized_at_ts IS NOT NULL)")


def test_setup_replaces_an_older_versions_full_index_of_finished_rows(fresh_database: str) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        setup_schema(conn)
        conn.execute("DROP INDEX idx_sk_task_results_status_finalized")
        conn.execute(
            "CREATE INDEX idx_sk_task_results_status_finalized"
            " ON sk_task_results_t (task_status, task_processing_finalized_at_ts)"
        )
        conn.execute("DELETE FROM sk_schema_version_t")  # as a database of an older version

        setup_schema(conn)

        assert _finished_index(conn).endswith("WHERE (task_processing_finalized_at_ts IS NOT NULL)")


def test_setup_on_a_stakhanovise_database_keeps_its_data_and_columns_and_adds_ours(
    fresh_database: str,
) -> None:
    name, stakhanovise_ddl = schema_scripts(DEFAULT_MAPPING)[0]
    assert name == "010_stakhanovise.sql"
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        conn.execute(stakhanovise_ddl)  # type: ignore[arg-type]
        waiting, failed = uuid.uuid4(), uuid.uuid4()
        conn.execute(
            "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority, "
            "task_locked_until_ts) VALUES (%s, 'Billing.Invoice', 'dotnet-app', '{\"Id\":1}', 5, now())",
            (waiting,),
        )
        conn.execute(
            """
            INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,
                task_priority, task_last_error, task_error_count, task_last_error_is_recoverable,
                task_processing_time_milliseconds, task_posted_at_ts, task_first_processing_attempted_at_ts,
                task_last_processing_attempted_at_ts, task_processing_finalized_at_ts)
            VALUES
                (%s, 'Billing.Invoice', 'dotnet-app', '{"Id":1}', 1, 5, NULL, 0, false, 0, now(), NULL, NULL, NULL),
                (%s, 'Mail.Send', 'dotnet-app', '{"To":"x"}', 6, 2, 'System.Exception: SMTP down', 7, true, 1234,
                 now() - interval '1 hour', now() - interval '50 minutes', now() - interval '10 minutes',
                 now() - interval '9 minutes')
            """,
            (waiting, failed),
        )
        conn.execute(
            "INSERT INTO sk_metrics_t (metric_id, metric_owner_process_id, metric_category, metric_value) VALUES "
            "('worker@processed-payload-count', 'dotnet-host-1', 'task-worker', 42), "
            "('poller@dequeue-count', 'dotnet-host-1', 'task-poller', 40)"
        )
        conn.execute(
            "INSERT INTO sk_task_execution_time_stats_t VALUES ('Mail.Send', 'dotnet-host-1', 3, 10, 20, 5, 45, 60)"
        )
        tables = (
            "sk_tasks_queue_t",
            "sk_task_results_t",
            "sk_metrics_t",
            "sk_task_execution_time_stats_t",
        )
        data_before = {
            t: conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in tables
        }  # type: ignore[arg-type]
        columns_before = column_defs(conn, STAKHANOVISE_TABLES)

        assert setup_schema(conn) is True

        check_schema(conn)
        # the original columns are unchanged: same types, lengths, nullability, defaults
        columns_after = column_defs(conn, STAKHANOVISE_TABLES)
        assert {k: columns_after[k] for k in columns_before} == columns_before
        # every row is intact, column for column
        for t in tables:
            original_cols = [c for (tt, c) in columns_before if tt == t]
            ordinal = conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
                (t,),
            ).fetchall()
            kept = [c for (c,) in ordinal if c in original_cols]
            rows = conn.execute(
                f"SELECT {', '.join(kept)} FROM {t} ORDER BY 1, 2"  # type: ignore[arg-type]
            ).fetchall()
            assert rows == data_before[t], t
        # our additions exist, with harmless values on the old rows
        added = set(columns_after) - set(columns_before)
        assert {
            ("sk_task_results_t", "sk_owner_worker_id"),
            ("sk_task_results_t", "sk_attempt"),
            ("sk_task_results_t", "sk_rerun_requested"),
        } <= added
        assert conn.execute(
            "SELECT sk_owner_worker_id, sk_attempt, sk_rerun_requested FROM sk_task_results_t WHERE task_id = %s",
            (failed,),
        ).fetchone() == (None, 0, False)
        for table in ("sk_workers_t", "sk_task_types_t", "sk_audit_t", "sk_schema_version_t"):
            assert conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone() == (
                True,
            ), table
        assert conn.execute("SELECT to_regproc('sk_inflight_tasks') IS NOT NULL").fetchone() == (
            True,
        )
        assert conn.execute("SELECT max(version) FROM sk_schema_version_t").fetchone() == (
            SCHEMA_VERSION,
        )


OLD_VERSION_TABLE = """
CREATE TABLE sk_schema_version_t (
    version integer PRIMARY KEY,
    applied_at_ts timestamptz NOT NULL DEFAULT now(),
    skconsole_version varchar(50) NOT NULL
)
"""


def schema_recorded_before_the_scripts_fingerprint(conn: Conn) -> None:
    """A complete version-1 schema as the first skconsole release left it: no scripts_sha256 column."""
    conn.execute(OLD_VERSION_TABLE)  # type: ignore[arg-type]
    for _name, script in schema_scripts(DEFAULT_MAPPING):
        conn.execute(script)  # type: ignore[arg-type]
    conn.execute("INSERT INTO sk_schema_version_t (version, skconsole_version) VALUES (1, '0.1.0')")


def test_check_schema_accepts_a_version_table_recorded_before_the_scripts_fingerprint(
    fresh_database: str,
) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        schema_recorded_before_the_scripts_fingerprint(conn)

        check_schema(conn)  # must not raise


def test_setup_upgrades_a_version_table_recorded_before_the_scripts_fingerprint(
    fresh_database: str,
) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        schema_recorded_before_the_scripts_fingerprint(conn)

        setup_schema(conn)

        assert setup_schema(conn) is False
        check_schema(conn)


def test_two_concurrent_setups_of_a_new_database_both_succeed(fresh_database: str) -> None:
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with psycopg.connect(fresh_database, autocommit=True) as c:
                barrier.wait(5)
                setup_schema(c)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        check_schema(conn)
        assert conn.execute("SELECT count(*) FROM sk_schema_version_t").fetchone() == (1,)


def test_a_newer_recorded_schema_version_makes_check_and_setup_refuse(fresh_database: str) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        setup_schema(conn)
        conn.execute(
            "INSERT INTO sk_schema_version_t (version, skconsole_version) VALUES (%s, '99.0.0')",
            (SCHEMA_VERSION + 1,),
        )
        with pytest.raises(SchemaError, match=r"newer.*upgrade skconsole") as checked:
            check_schema(conn)
        assert f"version {SCHEMA_VERSION + 1}" in str(checked.value)
        with pytest.raises(SchemaError, match=r"newer.*upgrade skconsole"):
            setup_schema(conn)


def test_check_schema_on_an_empty_database_says_to_run_skconsole_setup(fresh_database: str) -> None:
    with (
        psycopg.connect(fresh_database, autocommit=True) as conn,
        pytest.raises(SchemaError, match="`skconsole setup`") as checked,
    ):
        check_schema(conn)
    assert "not set up" in str(checked.value) and "nothing was changed" in str(checked.value)


def test_check_schema_names_what_is_missing_from_an_incomplete_schema(fresh_database: str) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        conn.execute(schema_scripts(DEFAULT_MAPPING)[0][1])  # type: ignore[arg-type]  # Stakhanovise objects only
        with pytest.raises(SchemaError, match="sk_workers_t") as checked:
            check_schema(conn)
    assert "skconsole setup" in str(checked.value)


# -- the hot tables' autovacuum settings --------------------------------------------
def test_the_queue_table_carries_aggressive_autovacuum_settings(conn: Conn) -> None:
    opts = reloptions(conn, "sk_tasks_queue_t")
    assert float(opts["autovacuum_vacuum_scale_factor"]) <= 0.01
    assert int(opts["autovacuum_vacuum_threshold"]) > 0
    assert float(opts["autovacuum_vacuum_cost_delay"]) == 0
    assert int(opts["autovacuum_vacuum_cost_limit"]) >= 10000
    assert "autovacuum_analyze_scale_factor" in opts


def test_the_results_table_carries_per_table_autovacuum_settings(conn: Conn) -> None:
    opts = reloptions(conn, "sk_task_results_t")
    assert float(opts["autovacuum_vacuum_scale_factor"]) <= 0.02
    assert float(opts["autovacuum_vacuum_cost_delay"]) == 0
    assert int(opts["autovacuum_vacuum_cost_limit"]) >= 10000


# -- sk_try_dequeue_task -----------------------------------------------------------
def test_dequeue_returns_and_deletes_one_eligible_row(conn: Conn) -> None:
    task_id = enqueue_raw(conn, "t.a", priority=3)

    rows = dequeue(conn)

    assert len(rows) == 1
    row = rows[0]
    assert row[0] == task_id
    assert row[2:6] == ("t.a", "tests", "{}", 3)
    assert conn.execute("SELECT count(*) FROM sk_tasks_queue_t").fetchone() == (0,)
    assert dequeue(conn) == []


def test_dequeue_returns_only_rows_of_the_selected_types(conn: Conn) -> None:
    enqueue_raw(conn, "t.other", priority=0)
    wanted = enqueue_raw(conn, "t.wanted", priority=9)

    assert [r[0] for r in dequeue(conn, ["t.wanted", "t.absent"])] == [wanted]
    assert dequeue(conn, ["t.wanted", "t.absent"]) == []
    assert conn.execute("SELECT task_type FROM sk_tasks_queue_t").fetchall() == [("t.other",)]


def test_dequeue_with_an_empty_type_array_takes_any_type(conn: Conn) -> None:
    a = enqueue_raw(conn, "t.a", priority=1)
    b = enqueue_raw(conn, "t.b", priority=0)

    taken = [dequeue(conn, [])[0][0], dequeue(conn, [])[0][0]]

    assert taken == [b, a]


def test_dequeue_skips_excluded_ids(conn: Conn) -> None:
    first = enqueue_raw(conn, "t.a", priority=0)
    second = enqueue_raw(conn, "t.a", priority=1)

    assert [r[0] for r in dequeue(conn, [], [first])] == [second]
    assert dequeue(conn, [], [first]) == []
    assert [r[0] for r in dequeue(conn, [], [])] == [first]


def test_dequeue_ignores_rows_locked_until_after_ref_now(conn: Conn) -> None:
    now = db_now(conn)
    later = enqueue_raw(conn, "t.a", locked_until=now + timedelta(hours=1))

    assert dequeue(conn, [], [], now) == []
    assert [r[0] for r in dequeue(conn, [], [], now + timedelta(hours=2))] == [later]


def test_dequeue_treats_a_row_locked_exactly_until_ref_now_as_not_yet_eligible(conn: Conn) -> None:
    now = db_now(conn)
    task_id = enqueue_raw(conn, "t.a", locked_until=now)

    assert dequeue(conn, [], [], now) == []
    assert [r[0] for r in dequeue(conn, [], [], now + timedelta(microseconds=1))] == [task_id]


def test_dequeue_orders_by_priority_then_locked_until_then_lock_handle(conn: Conn) -> None:
    now = db_now(conn)
    old, older = now - timedelta(minutes=1), now - timedelta(minutes=2)
    p1_old_first = enqueue_raw(conn, "t.a", priority=1, locked_until=old)
    p1_old_second = enqueue_raw(conn, "t.a", priority=1, locked_until=old)
    p1_older = enqueue_raw(conn, "t.a", priority=1, locked_until=older)
    p0_newest = enqueue_raw(conn, "t.a", priority=0, locked_until=now - timedelta(seconds=1))
    p2_oldest = enqueue_raw(conn, "t.a", priority=2, locked_until=now - timedelta(hours=1))

    order = [dequeue(conn, [], [], now)[0][0] for _ in range(5)]

    assert order == [p0_newest, p1_older, p1_old_first, p1_old_second, p2_oldest]


def test_dequeue_under_two_concurrent_transactions_skips_the_locked_row_without_blocking(
    dsn: str,
) -> None:
    with psycopg.connect(dsn, autocommit=True) as setup:
        first = enqueue_raw(setup, "t.a", priority=0)
        second = enqueue_raw(setup, "t.a", priority=1)
    with psycopg.connect(dsn) as a, psycopg.connect(dsn) as b:
        a.execute("SET lock_timeout = '2s'")
        b.execute("SET lock_timeout = '2s'")
        got_a = dequeue(a)  # transaction A holds the first row, uncommitted
        finished = threading.Event()
        got_b: list[Any] = []

        def in_b() -> None:
            got_b.extend(dequeue(b))
            finished.set()

        t = threading.Thread(target=in_b)
        t.start()
        assert finished.wait(5), "the second dequeue blocked on the first one's row"
        t.join()
        assert [r[0] for r in got_a] == [first]
        assert [r[0] for r in got_b] == [second]
        a.commit()
        b.commit()
    with psycopg.connect(dsn) as check:
        assert check.execute("SELECT count(*) FROM sk_tasks_queue_t").fetchone() == (0,)


def test_a_dequeue_rolled_back_leaves_the_row_in_the_queue(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as setup:
        task_id = enqueue_raw(setup, "t.a")
    with psycopg.connect(dsn) as a:
        assert [r[0] for r in dequeue(a)] == [task_id]
        a.rollback()
        assert [r[0] for r in dequeue(a)] == [task_id]
        a.rollback()
