"""How long ``skconsole find`` takes on a big results table, with and without a search index
(a benchmark, not a test: run it by hand, on a machine of its own).

    python -m skconsole.bench.find --dsn postgresql://postgres@127.0.0.1:5432/postgres \
        [--results 1000000] [--database skconsole_bench_find] [--reuse] [--runs 5]

Creates (or, with --reuse, keeps) a database of its own on the server the DSN
points at, fills it in the server (sql/bench/seed_find.sql: eight types, payloads
with a customer id, a region and a nested tier, some not JSON), analyzes it,
then times searches bounded by type, by age and by limit alone, first without
and then with the search index (``find-index add payload.customer.id --type
bench.find3``'s statement), and prints each median and
the plan of the indexed search. The database named by the DSN is never touched.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import psycopg

from skconsole import read
from skconsole.bench.seeded import seeded_database
from skconsole.core.find_query import FindQuery
from skconsole.core.payload_terms import parse_terms
from skconsole.db.connect import Database

Conn = psycopg.Connection[Any]
INDEX = "sk_find_bench"
#: The index ``skconsole find-index add payload.customer.id --type bench.find3`` makes
#: (ops/find_index.py's create_statement; bench may not import ops), under a name of its own.
CREATE = (
    "CREATE INDEX CONCURRENTLY sk_find_bench ON sk_task_results_t"
    " ((sk_try_jsonb(task_payload) #>> ARRAY['customer', 'id']::text[]))"
    " WHERE task_type = 'bench.find3'::text"
)

SEARCHES: dict[str, FindQuery] = {
    "customer, bounded by type": FindQuery(
        where=parse_terms(["payload.customer.id=4203"]), task_type="bench.find3"
    ),
    "customer, last hour": FindQuery(
        where=parse_terms(["payload.customer.id=4203"]), since_seconds=3600
    ),
    "customer, limit only": FindQuery(where=parse_terms(["payload.customer.id=4203"]), limit=10),
    "error text, bounded by type": FindQuery(error="ORD-1234", task_type="bench.find2"),
}


def prepare(server_dsn: str, database: str, results: int, reuse: bool) -> str:
    """The benchmark database's DSN, seeded (unless --reuse keeps a seeded one)."""
    return seeded_database(
        server_dsn,
        database,
        seed="bench/seed_find",
        settings={"results": results},
        reuse=reuse,
        what=f"{results:,} results",
    )


def timed(conn: Conn, runs: int) -> dict[str, float]:
    """The median milliseconds of each search (after one warm-up run)."""
    medians: dict[str, float] = {}
    for name, q in SEARCHES.items():
        read.find(conn, q, timeout_ms=120_000)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            read.find(conn, q, timeout_ms=120_000)
            times.append((time.perf_counter() - started) * 1000)
        medians[name] = statistics.median(times)
    return medians


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", required=True, help="any database on the server to use")
    parser.add_argument("--database", default="skconsole_bench_find")
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reuse", action="store_true", help="keep an already seeded database")
    args = parser.parse_args(argv)

    dsn = prepare(args.dsn, args.database, args.results, args.reuse)
    with Database(dsn).connect(application_name="skconsole-bench") as conn:
        conn.execute("SET statement_timeout = 0")
        conn.execute("DROP INDEX CONCURRENTLY IF EXISTS sk_find_bench")
        before = timed(conn, args.runs)
        started = time.perf_counter()
        conn.execute(CREATE)
        built = time.perf_counter() - started
        after = timed(conn, args.runs)
        plan = read.explain(conn, SEARCHES["customer, bounded by type"], timeout_ms=120_000)
    print(f"index {INDEX} built in {built:.1f}s")
    print(f"{'search':32s} {'no index':>10s} {'index':>10s}")
    for name in SEARCHES:
        print(f"{name:32s} {before[name]:8.1f}ms {after[name]:8.1f}ms")
    print("plan of the indexed search:")
    for line in plan:
        print("  " + line)


if __name__ == "__main__":
    main()
