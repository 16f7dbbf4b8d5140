"""The schema's life: reads never create it, `schema sql` is what setup runs (a team's
migration applies it), `schema uninstall` takes skconsole's objects away and leaves
Stakhanovise.NET's as its own setup made them."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import Any

import psycopg

from skconsole.db.connect import Database
from skconsole.db.schema import missing_objects, setup_schema
from skconsole.exporter import Exporter
from tests.conftest import ROOT, skconsole_cmd
from tests.interop.dotnet_app import DotNetApp
from tests.support.waiting import wait_until

CLI = Callable[..., subprocess.CompletedProcess[str]]
NO_JOB = "6b1f2a9e-0000-4000-8000-000000000001"

#: every object in the database's schemas but the system's: name, kind, and for a
#: relation its columns and options, for a function its arguments
CATALOG = """
SELECT n.nspname || '.' || c.relname || ' ' || c.relkind::text
    || coalesce(' ' || array_to_string(c.reloptions, ','), '')
    || coalesce(' (' || (SELECT string_agg(a.attname, ',' ORDER BY a.attnum) FROM pg_attribute a
        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) || ')', '')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
UNION ALL
SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT 'trigger ' || t.tgname FROM pg_trigger t WHERE NOT t.tgisinternal
ORDER BY 1
"""


def catalog(dsn: str) -> list[str]:
    with psycopg.connect(dsn, autocommit=True) as c:
        return [r[0] for r in c.execute(CATALOG).fetchall()]


def cli(
    dsn: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        skconsole_cmd("--dsn", dsn, *args),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )


# -- reads never write ----------------------------------------------------------------------
READS = [
    ("status",),
    *[("status", view) for view in ("depth", "flow", "inflight", "failures", "stats",
                                     "metrics", "workers", "history", "schedules", "health")],
    ("job", NO_JOB),
    ("why", NO_JOB),
    ("find", "--type", "t.a"),
    ("audit",),
    ("find-index", "list"),
    ("limit",),
    ("retention",),
    ("slo",),
]  # fmt: skip


def test_no_read_and_not_the_console_creates_anything_on_an_empty_database(
    fresh_database: str,
) -> None:
    before = catalog(fresh_database)
    refused = {" ".join(args): cli(fresh_database, *args) for args in READS}
    console = cli(fresh_database)  # no command: the console, before its screen opens
    checked = cli(fresh_database, "check")
    exported = Exporter(Database(fresh_database, read_only=True), interval_s=60).cycle()

    assert catalog(fresh_database) == before
    for command, done in refused.items():
        assert done.returncode == 4, (command, done.stdout, done.stderr)
        assert "the queue is not set up" in done.stderr, (command, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, (command, done.stderr)
    assert console.returncode == 4 and "the queue is not set up" in console.stderr
    assert checked.returncode == 3 and "not set up" in checked.stdout, checked.stdout
    assert not exported.up


def test_setup_is_what_creates_the_queue_and_setup_on_a_read_says_so(
    fresh_database: str,
) -> None:
    done = cli(fresh_database, "--setup", "status", "depth")
    assert done.returncode == 0, done.stderr
    with psycopg.connect(fresh_database) as c:
        assert missing_objects(c) == []


# -- schema sql -----------------------------------------------------------------------------
def test_the_printed_sql_sets_up_an_empty_database_a_worker_then_runs_on(
    fresh_database: str,
) -> None:
    printed = cli(fresh_database, "schema", "sql")
    assert printed.returncode == 0, printed.stderr
    with psycopg.connect(fresh_database, autocommit=True) as c:
        c.execute(printed.stdout.encode())  # as psql -f would: one transaction
        assert missing_objects(c) == []
        assert setup_schema(c) is False  # setup finds nothing to do: the version row says so
    posted = cli(fresh_database, "enqueue", "ok")
    worker = cli(fresh_database, "worker", "--tasks", "tests.support.tasks_faults", "--burst")
    with psycopg.connect(fresh_database) as c:
        statuses = c.execute("SELECT task_status FROM sk_task_results_t").fetchall()
    assert posted.returncode == 0 and worker.returncode == 0, posted.stderr + worker.stderr
    assert statuses == [(3,)]


def test_the_printed_sql_applied_twice_changes_nothing_the_second_time(
    fresh_database: str,
) -> None:
    text = cli(fresh_database, "schema", "sql").stdout.encode()
    with psycopg.connect(fresh_database, autocommit=True) as c:
        c.execute(text)
    once = catalog(fresh_database)
    with psycopg.connect(fresh_database, autocommit=True) as c:
        c.execute(text)
    assert catalog(fresh_database) == once


def test_the_printed_sql_takes_the_schema_option(fresh_database: str) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as c:
        c.execute("CREATE SCHEMA jobs")
    text = cli(fresh_database, "--schema", "jobs", "schema", "sql").stdout
    with psycopg.connect(fresh_database, autocommit=True) as c:
        c.execute(text.encode())
        tables = {r[0] for r in c.execute(
            "SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'jobs'::regnamespace"
            " AND c.relkind = 'r'"
        ).fetchall()}  # fmt: skip
    assert {"sk_tasks_queue_t", "sk_task_results_t", "sk_workers_t"} <= tables
    done = cli(fresh_database, "--schema", "jobs", "status", "depth")
    assert done.returncode == 0, done.stderr


# -- uninstall ------------------------------------------------------------------------------
def test_uninstall_leaves_a_dotnet_database_as_dotnets_setup_made_it(
    fresh_database: str,
) -> None:
    DotNetApp(fresh_database).setup()
    dotnet_only = catalog(fresh_database)
    with psycopg.connect(fresh_database, autocommit=True) as c:
        setup_schema(c)
        c.execute(
            "CREATE INDEX sk_find_test ON sk_task_results_t (sk_key(task_payload))"
        )  # an operator's search index goes too

    done = cli(fresh_database, "schema", "uninstall", "--drop-audit", "--yes")

    assert done.returncode == 0, done.stderr
    assert catalog(fresh_database) == dotnet_only


def test_uninstall_keeps_the_audit_log_and_records_itself_there(fresh_database: str) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as c:
        setup_schema(c)
    done = cli(fresh_database, "schema", "uninstall", "--yes")
    assert done.returncode == 0, done.stderr
    with psycopg.connect(fresh_database) as c:
        audit = c.execute("SELECT audit_action, audit_user FROM sk_audit_t").fetchall()
        left = [r[0] for r in c.execute(
            "SELECT relname FROM pg_class WHERE relname LIKE 'sk\\_%%' AND relkind = 'r'"
        ).fetchall()]  # fmt: skip
    assert [a[0] for a in audit] == ["uninstall"]
    assert sorted(left) == sorted(
        ["sk_audit_t", "sk_tasks_queue_t", "sk_task_results_t", "sk_metrics_t",
         "sk_task_execution_time_stats_t"]
    )  # fmt: skip


def test_uninstall_with_stakhanovise_leaves_nothing_of_the_queue(fresh_database: str) -> None:
    before = catalog(fresh_database)
    with psycopg.connect(fresh_database, autocommit=True) as c:
        setup_schema(c)
    done = cli(fresh_database, "schema", "uninstall", "--stakhanovise", "--drop-audit", "--yes")
    assert done.returncode == 0, done.stderr
    assert catalog(fresh_database) == before


def test_uninstall_is_refused_while_a_worker_is_alive(
    fresh_database: str, start_worker: Callable[..., Any]
) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as c:
        setup_schema(c)
    worker = start_worker("--dsn", fresh_database, "--tasks", "tests.support.tasks_faults")

    def registered() -> bool:
        with psycopg.connect(fresh_database) as c:
            return c.execute("SELECT count(*) FROM sk_workers_t").fetchone() == (1,)

    wait_until(registered, timeout=60)
    done = cli(fresh_database, "schema", "uninstall", "--yes")
    worker.kill()
    assert done.returncode == 1, done.stderr
    assert "worker(s) alive" in done.stderr
    with psycopg.connect(fresh_database) as c:
        assert missing_objects(c) == []


def test_uninstall_without_confirmation_changes_nothing(fresh_database: str) -> None:
    with psycopg.connect(fresh_database, autocommit=True) as c:
        setup_schema(c)
    before = catalog(fresh_database)
    done = cli(fresh_database, "schema", "uninstall")  # stdin is no terminal: refused
    assert done.returncode == 2, done.stderr
    assert catalog(fresh_database) == before
