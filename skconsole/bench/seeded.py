"""A benchmark's own database, filled by a seed script of ``sql/bench`` (or kept from an
earlier run with ``--reuse``): what the read-model and search benchmarks share.

Seeding a million rows takes a while, so a run may keep a seeded database; anything
else is dropped and made again, never the database the DSN names (it may be the
server's only one).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from psycopg import conninfo, sql

from skconsole.db.schema import setup_schema
from skconsole.db.sqlfiles import load_sql


def dsn_for(dsn: str, database: str) -> str:
    """``dsn`` naming ``database``, in the same form (a URL stays a URL: asyncpg, the
    driver of a peer, takes only URLs)."""
    if "://" in dsn:
        return urlunsplit(urlsplit(dsn)._replace(path="/" + quote(database)))
    params = conninfo.conninfo_to_dict(dsn)
    params["dbname"] = database
    return conninfo.make_conninfo(**params)  # type: ignore[arg-type]


def fresh_database(server_dsn: str, database: str) -> str:
    """A new, empty ``database`` on ``server_dsn``'s server (one left by an earlier run
    is dropped; never the database the DSN names, which may be the server's only one):
    its DSN."""
    if database == conninfo.conninfo_to_dict(server_dsn).get("dbname"):
        raise SystemExit("--database must differ from the DSN's own database")
    drop_database(server_dsn, database)
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    return dsn_for(server_dsn, database)


def drop_database(server_dsn: str, database: str) -> None:
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        name = sql.Identifier(database)
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))


def _seeded(dsn: str) -> bool:
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            row = conn.execute(
                "SELECT to_regclass('sk_task_results_t') IS NOT NULL "
                "AND EXISTS (SELECT 1 FROM sk_task_results_t)"
            ).fetchone()
            return bool(row and row[0])
    except psycopg.OperationalError:
        return False


def seeded_database(
    server_dsn: str,
    database: str,
    *,
    seed: str,
    settings: Mapping[str, int],
    reuse: bool,
    what: str,
) -> str:
    """The DSN of ``database``, seeded by ``sql/<seed>.sql`` with ``settings`` (its
    ``skbench.*`` parameters), then vacuumed; ``reuse`` keeps one already seeded.
    ``what`` says what was seeded, for the line that times it."""
    if database == conninfo.conninfo_to_dict(server_dsn).get("dbname"):
        raise SystemExit("--database must differ from the DSN's own database")
    dsn = dsn_for(server_dsn, database)
    if reuse and _seeded(dsn):
        print(f"reusing {database}")
        return dsn
    dsn = fresh_database(server_dsn, database)
    with psycopg.connect(dsn, autocommit=True) as conn:
        setup_schema(conn)
        started = time.perf_counter()
        conn.execute("SET synchronous_commit = off")
        for key, value in settings.items():
            conn.execute("SELECT set_config(%s, %s, false)", (f"skbench.{key}", str(value)))
        with conn.transaction():
            conn.execute(load_sql(seed))
        print(f"seeded {what} in {time.perf_counter() - started:.0f}s")
        conn.execute("VACUUM ANALYZE sk_tasks_queue_t")
        conn.execute("VACUUM ANALYZE sk_task_results_t")
    return dsn
