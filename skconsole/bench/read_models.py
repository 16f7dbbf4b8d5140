"""How long each read model takes on a big queue (a benchmark, not a test).

    python -m skconsole.bench.read_models --dsn postgresql://postgres@127.0.0.1:5432/test \
        [--queued 1000000 --results 5000000] [--database skconsole_bench] [--reuse] [--runs 7]

Creates (or, with --reuse, keeps) a database of its own on the server the DSN
points at, fills it in the server with INSERT ... SELECT generate_series
(sql/bench/seed_read_models.sql), vacuums and analyzes it as autovacuum
would, then prints the median time of each read model over --runs runs,
after one warm-up run. The database named by the DSN is never touched.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import psycopg

from skconsole import read
from skconsole.bench.seeded import seeded_database
from skconsole.db.connect import Database

Conn = psycopg.Connection[Any]


def prepare(server_dsn: str, database: str, queued: int, results: int, reuse: bool) -> str:
    """The benchmark database's DSN, seeded (unless --reuse finds it seeded already)."""
    results = max(results, queued)
    return seeded_database(
        server_dsn,
        database,
        seed="bench/seed_read_models",
        settings={"queued": queued, "results": results},
        reuse=reuse,
        what=f"{queued:,} queued / {results:,} results",
    )


def read_models(conn: Conn) -> dict[str, Callable[[], Any]]:
    top = read.failure_groups(conn, limit=1)
    signature = top[0].signature if top else "(no error text)"
    return {
        "depth (auto: sampled when big)": lambda: read.depth(conn),
        "depth (exact)": lambda: read.depth(conn, exact_limit=10**12),
        "statuses (auto: estimated when big)": lambda: read.status_summary(conn),
        "inflight": lambda: read.inflight(conn),
        "failure groups": lambda: read.failure_groups(conn),
        "failure group jobs (largest group)": lambda: read.failure_jobs(conn, signature),
        "execution stats + percentiles": lambda: read.execution_stats(conn),
        "metrics": lambda: read.metrics(conn),
        "workers": lambda: read.workers(conn),
        "history (60 min)": lambda: read.history(conn),
        "overview (skconsole status)": lambda: read.overview(conn),
    }


def measure(dsn: str, runs: int) -> dict[str, dict[str, float]]:
    """Time each read model on a connection set up exactly as the console's (jit off)."""
    out: dict[str, dict[str, float]] = {}
    with Database(dsn).connect(application_name="skconsole-bench") as conn:
        for name, fn in read_models(conn).items():
            fn()  # warm-up: plans, catalog and buffer caches
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                fn()
                times.append((time.perf_counter() - started) * 1000)
            out[name] = {
                "median_ms": statistics.median(times),
                "min_ms": min(times),
                "max_ms": max(times),
            }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", required=True, help="any database on the server to use")
    parser.add_argument(
        "--database", default="skconsole_bench", help="the benchmark's own database"
    )
    parser.add_argument("--queued", type=int, default=1_000_000)
    parser.add_argument("--results", type=int, default=5_000_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--reuse", action="store_true", help="keep an already seeded database")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    dsn = prepare(args.dsn, args.database, args.queued, args.results, args.reuse)
    figures = measure(dsn, args.runs)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{'read model':40s} {'median':>9s} {'min':>9s} {'max':>9s}")
    for name, f in figures.items():
        print(f"{name:40s} {f['median_ms']:7.1f}ms {f['min_ms']:7.1f}ms {f['max_ms']:7.1f}ms")


if __name__ == "__main__":
    main()
