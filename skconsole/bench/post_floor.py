"""What the server itself spends on a post: Stakhanovise.NET's two tables against
PgQueuer's one, with no client library in the way (a benchmark, not a test).

``python -m skconsole.bench.post_floor --dsn DSN [--posts 3000] [--jobs 40000] [--rounds 3]``

Each job is made on the server (``gen_random_uuid()``, ``generate_series``), so what is
timed is the server's work and one round trip per statement, the same for every side:

- ``layout``: the two rows a job is in Stakhanovise.NET's layout (its result row and its
  queue row), into a database holding Stakhanovise.NET's own objects only (its setup's
  tables, indexes and lock-handle sequence): the least any library writing that layout
  can do;
- ``skconsole``: the same rows with skconsole's objects beside them (``skconsole setup``:
  its indexes and triggers), and the NOTIFY its posts send;
- ``pgqueuer``: PgQueuer's own enqueue statement on its own schema (its
  ``Queries.install()``: one table, its indexes, its statement-level NOTIFY trigger),
  when PgQueuer is installed (the ``bench`` extra).

Single posts commit one job each (``--posts`` of them); bulk posts commit 1,000 jobs a
statement (``--jobs`` in all). The sides alternate within each round; each round prints
every side's rate and its ratio to PgQueuer's. A library's whole post (its client and
driver included) cannot beat its side here: so the ratio of a side to PgQueuer here
bounds the ratio a library of that layout can reach in ``python -m
skconsole.bench.peers``, where PgQueuer pays for its client too.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path
from typing import LiteralString
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from skconsole.db.connect import Database
from skconsole.db.schema import setup_schema

#: Stakhanovise.NET's own objects, as its setup creates them
LAYOUT_SQL = Path(__file__).resolve().parents[2] / "sql" / "schema" / "010_stakhanovise.sql"
CHUNK = 1_000

#: one job in the layout: its result row and its queue row, one id for both
_TWO_ROWS: LiteralString = """
WITH ids AS MATERIALIZED (SELECT gen_random_uuid() AS id FROM generate_series(1, %(n)s)),
r AS (
    INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,
        task_priority, task_error_count, task_last_error_is_recoverable,
        task_processing_time_milliseconds, task_posted_at_ts)
    SELECT id, 'bench.floor', 'bench', NULL, 1, 0, 0, false, 0, now() FROM ids
),
q AS (
    INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT id, 'bench.floor', 'bench', NULL, 0, now(), now() FROM ids
)
SELECT 1
"""
_NOTIFIED: LiteralString = _TWO_ROWS.replace(
    "SELECT 1\n", "SELECT pg_notify('sk_task_queue_item_added', '')\n"
)
_PGQUEUER: LiteralString = """
INSERT INTO pgqueuer (priority, entrypoint, payload, execute_after, dedupe_key, headers, status)
SELECT 0, 'bench.floor', NULL, now(), NULL, NULL, 'queued' FROM generate_series(1, %(n)s)
RETURNING id
"""


def _database(server: str, name: str) -> str:
    """A new, empty database ``name`` on ``server``'s server: its DSN (a URL for a URL)."""
    with psycopg.connect(server, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    if "://" in server:  # a URL stays one: asyncpg (PgQueuer's driver) takes only URLs
        return urlunsplit(urlsplit(server)._replace(path="/" + quote(name)))
    return make_conninfo(server, dbname=name)


def _drop(server: str, name: str) -> None:
    with psycopg.connect(server, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _install_pgqueuer(dsn: str) -> bool:
    try:
        from skconsole.bench.peers.pgqueuer_peer import PgQueuerPeer
    except ImportError:
        return False
    asyncio.run(PgQueuerPeer().install(dsn))
    return True


def _rate(dsn: str, statement: LiteralString, *, jobs: int, per_statement: int) -> float:
    """Jobs/s of ``statement`` run until ``jobs`` jobs, ``per_statement`` a commit."""
    with psycopg.connect(dsn, autocommit=True, prepare_threshold=0) as c:
        c.execute(statement, {"n": per_statement})  # prepared before the clock starts
        started = time.perf_counter()
        for _ in range(max(1, jobs // per_statement) - 1):
            c.execute(statement, {"n": per_statement})
        return (max(1, jobs // per_statement) - 1) * per_statement / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dsn", required=True, help="any database on the server to use")
    parser.add_argument("--posts", type=int, default=3_000)
    parser.add_argument("--jobs", type=int, default=40_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    names = {
        "layout": "sk_floor_layout",
        "skconsole": "sk_floor_skconsole",
        "pgqueuer": "sk_floor_pgq",
    }
    dsns = {side: _database(args.dsn, name) for side, name in names.items()}
    try:
        with psycopg.connect(dsns["layout"], autocommit=True) as c:
            c.execute(LAYOUT_SQL.read_text(encoding="utf-8").encode())
        with Database(dsns["skconsole"]).connect() as c:
            c.autocommit = True
            setup_schema(c)
        sides: dict[str, LiteralString] = {"layout": _TWO_ROWS, "skconsole": _NOTIFIED}
        if _install_pgqueuer(dsns["pgqueuer"]):
            sides["pgqueuer"] = _PGQUEUER
        for kind, jobs, per in (("single", args.posts, 1), ("bulk", args.jobs, CHUNK)):
            rates: dict[str, list[float]] = {side: [] for side in sides}
            for n in range(1, args.rounds + 1):
                for side, statement in sides.items():
                    rates[side].append(_rate(dsns[side], statement, jobs=jobs, per_statement=per))
                print(
                    f"{kind} round {n}: " + _line({s: r[-1] for s, r in rates.items()}), flush=True
                )
            medians = {s: statistics.median(r) for s, r in rates.items()}
            print(f"{kind} medians: " + _line(medians), flush=True)
    finally:
        for name in names.values():
            _drop(args.dsn, name)


def _line(rates: dict[str, float]) -> str:
    base = rates.get("pgqueuer")
    return ", ".join(
        f"{side} {rate:,.0f} jobs/s" + (f" ({rate / base:.2f}x pgqueuer)" if base else "")
        for side, rate in rates.items()
    )


if __name__ == "__main__":
    main()
