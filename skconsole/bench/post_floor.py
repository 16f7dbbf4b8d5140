"""How far any library writing Stakhanovise.NET's layout can get ahead of PgQueuer's
posts: the least such a post costs, against PgQueuer's own calls (a benchmark, not a test).

``python -m skconsole.bench.post_floor --dsn DSN [--posts 3000] [--jobs 40000] [--rounds 3]``

A job in the layout is two rows (its result row and its queue row, in two tables
with Stakhanovise.NET's indexes, which its dequeue reads). The least a post of one job
costs: one statement writing both, the job's id made on the server, nothing on the
client but the call (``layout``). The least a bulk post costs: one binary COPY into
each table, of rows built from fresh uuid4s, in one transaction (``layout``, as
``bench.bulk_posting``'s raw side). Each is run on a database holding Stakhanovise.NET's
objects only (its setup's tables, indexes and lock-handle sequence), and again with
skconsole's objects beside them and its NOTIFY (``skconsole``). ``pgqueuer`` is
PgQueuer's ``Queries.enqueue`` over asyncpg, as the peers benchmark calls it (one job; a
list of 1,000), on its own schema: its whole post, its client included.

Single posts commit one job each (``--posts`` of them); bulk posts commit 1,000 jobs a
call (``--jobs`` in all). The sides alternate within each round; each round prints every
side's rate and its ratio to PgQueuer's. No post of this layout can beat ``layout``, so
its ratio bounds what ``python -m skconsole.bench.peers`` can show (needs the ``bench``
extra for PgQueuer).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING, LiteralString

import psycopg

from skconsole.bench.bulk_posting import raw_copy
from skconsole.bench.seeded import drop_database, fresh_database
from skconsole.db.connect import Database
from skconsole.db.schema import setup_schema

if TYPE_CHECKING:
    from skconsole.bench.peers.pgqueuer_peer import PgQueuerPeer

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


def _single(dsn: str, statement: LiteralString, posts: int) -> float:
    """Posts/s of ``statement`` (one job, its own commit), ``posts`` times."""
    with psycopg.connect(dsn, autocommit=True, prepare_threshold=0) as c:
        c.execute(statement, {"n": 1})  # prepared before the clock starts
        started = time.perf_counter()
        for _ in range(posts):
            c.execute(statement, {"n": 1})
        return posts / (time.perf_counter() - started)


def _peer() -> PgQueuerPeer | None:
    """PgQueuer's side of the peers benchmark, if PgQueuer is installed."""
    try:
        from skconsole.bench.peers.pgqueuer_peer import PgQueuerPeer
    except ImportError:
        return None
    return PgQueuerPeer()


def _pgqueuer(peer: PgQueuerPeer, dsn: str, posts: int, jobs: int) -> tuple[float, float]:
    """PgQueuer's single posts/s and bulk jobs/s."""

    async def run() -> tuple[float, float]:
        await peer.open(dsn)
        try:
            await peer.post(None)
            started = time.perf_counter()
            for _ in range(posts):
                await peer.post(None)
            single = posts / (time.perf_counter() - started)
            started = time.perf_counter()
            for _ in range(jobs // CHUNK):
                await peer.post_many(CHUNK)
            return single, jobs // CHUNK * CHUNK / (time.perf_counter() - started)
        finally:
            await peer.close()

    return asyncio.run(run())


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
    dsns = {side: fresh_database(args.dsn, name) for side, name in names.items()}
    try:
        with psycopg.connect(dsns["layout"], autocommit=True) as c:
            c.execute(LAYOUT_SQL.read_text(encoding="utf-8").encode())
        with Database(dsns["skconsole"]).connect() as c:
            c.autocommit = True
            setup_schema(c)
        peer = _peer()
        if peer is not None:
            asyncio.run(peer.install(dsns["pgqueuer"]))
        rates: dict[str, dict[str, list[float]]] = {"single": {}, "bulk": {}}
        for n in range(1, args.rounds + 1):
            for side, statement in (("layout", _TWO_ROWS), ("skconsole", _NOTIFIED)):
                rates["single"].setdefault(side, []).append(
                    _single(dsns[side], statement, args.posts)
                )
                rates["bulk"].setdefault(side, []).append(
                    raw_copy(Database(dsns[side]), args.jobs, CHUNK)
                )
            if peer is not None:
                single, bulk = _pgqueuer(peer, dsns["pgqueuer"], args.posts, args.jobs)
                rates["single"].setdefault("pgqueuer", []).append(single)
                rates["bulk"].setdefault("pgqueuer", []).append(bulk)
            for kind in rates:
                print(f"{kind} round {n}: " + _line({s: r[-1] for s, r in rates[kind].items()}))
        for kind, by_side in rates.items():
            medians = {s: statistics.median(r) for s, r in by_side.items()}
            print(f"{kind} medians: " + _line(medians), flush=True)
    finally:
        for name in names.values():
            drop_database(args.dsn, name)


def _line(rates: dict[str, float]) -> str:
    base = rates.get("pgqueuer")
    return ", ".join(
        f"{side} {rate:,.0f} jobs/s" + (f" ({rate / base:.2f}x pgqueuer)" if base else "")
        for side, rate in rates.items()
    )


if __name__ == "__main__":
    main()
