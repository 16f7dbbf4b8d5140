"""What the per-minute record costs the hot path: the same work with its triggers on and
off, alternating within each round (a benchmark, not a test).

``python -m skconsole.bench.record_cost --dsn DSN [--posts 2000] [--jobs 20000] [--rounds 3]``

The record is written by two statement triggers on the results table
(sql/schema/146_skconsole_record.sql); ``ALTER TABLE ... DISABLE TRIGGER`` takes them out
and nothing else, so each pair of figures differs by the record alone. Per round and
side: ``--posts`` single posts (one statement each), ``--jobs`` posted in bulk
(``post_many`` of 1,000: binary COPY), and a drain of ``--jobs`` no-op jobs by one
``skconsole worker`` process (claims and finishes: ``bench.throughput``'s drain, timed
on the server). Each round prints both sides' rates and the ratio with the record over
without it. Run it on a quiet machine: it measures a few per cent.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg
from psycopg import sql

from skconsole.bench.config import BenchConfig
from skconsole.bench.interleave import arguments
from skconsole.bench.throughput import run_bench
from skconsole.db.connect import Database
from skconsole.db.schema import setup_schema
from skconsole.producer import Job, Producer

TRIGGERS = ("sk_record_on_insert", "sk_record_on_update")
TYPE = "bench.record"
CHUNK = 1_000


def set_record(db: Database, on: bool) -> None:
    """The record's triggers on or off (nothing else changes)."""
    verb = sql.SQL("ENABLE" if on else "DISABLE")
    with psycopg.connect(db.dsn, autocommit=True) as c:
        for name in TRIGGERS:
            c.execute(
                sql.SQL("ALTER TABLE sk_task_results_t {} TRIGGER {}").format(
                    verb, sql.Identifier(name)
                )
            )
        c.execute("TRUNCATE sk_tasks_queue_t, sk_task_results_t, sk_record_fresh_t, sk_attempts_t")


def single_posts(db: Database, posts: int) -> float:
    with Producer(db) as p:
        started = time.perf_counter()
        for i in range(posts):
            p.post(TYPE, {"i": i})
        return posts / (time.perf_counter() - started)


def bulk_posts(db: Database, jobs: int) -> float:
    with Producer(db) as p:
        started = time.perf_counter()
        for first in range(0, jobs, CHUNK):
            p.post_many([Job(TYPE, {"i": i}) for i in range(first, min(first + CHUNK, jobs))])
        return jobs / (time.perf_counter() - started)


def drain(db: Database, jobs: int) -> float:
    cfg = BenchConfig(jobs=jobs, processes=1, latency_jobs=20, rate=50.0)
    return float(run_bench(db, cfg)["drain_jobs_per_s"])


def main() -> None:
    parser = arguments(__doc__, size="--jobs", default=20_000)
    parser.add_argument("--posts", type=int, default=2_000)
    args = parser.parse_args()
    db = Database(args.dsn)
    with db.connect() as c:
        setup_schema(c)
    measures: dict[str, Callable[[], float]] = {
        "single posts/s": lambda: single_posts(db, args.posts),
        "bulk jobs/s": lambda: bulk_posts(db, args.jobs),
        "drain jobs/s": lambda: drain(db, args.jobs),
    }
    try:
        for n in range(1, args.rounds + 1):
            for name, measure in measures.items():
                rates = {}
                order = (True, False) if n % 2 else (False, True)
                for on in order:
                    set_record(db, on)
                    rates[on] = measure()
                print(
                    f"round {n} {name}: with the record {rates[True]:,.0f},"
                    f" without {rates[False]:,.0f}, ratio {rates[True] / rates[False]:.3f}",
                    flush=True,
                )
    finally:
        set_record(db, True)


if __name__ == "__main__":
    main()
