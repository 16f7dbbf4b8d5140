"""A long drain: does the rate hold while dead rows pile up behind it?

``python -m skconsole.bench.sustained --dsn DSN [--jobs 3000000] [--processes 2]
[--concurrency N] [--hold-xmin] [--vacuum-cost-delay MS]``

A delete-based queue leaves a dead row in the queue table and an old version in
the results table for every job; if vacuum cannot keep up, claims walk ever
more dead index entries. This drains one big backlog (``skconsole bench``'s
drain, posted by COPY while the type is paused), then prints the per-second
rate (minimum, 5th percentile, median, and min / median: the goal is >= 0.8
with default autovacuum), the pickup latency measured right after, and what
vacuum did meanwhile, and what the server was doing in its slowest seconds
(``drain_sampler``: vacuums running, backends' waits, WAL, autovacuum CPU).
``--vacuum-cost-delay TABLE=MS`` (repeatable) sets a queue table's
``autovacuum_vacuum_cost_delay`` for the run (the schema sets 0: unthrottled)
and puts it back after, to compare a throttled vacuum with an unthrottled one. ``--hold-xmin`` keeps a repeatable-read transaction open
through the run, as a forgotten session or a long report would: vacuum can then
remove nothing, which is the worst case.
"""

from __future__ import annotations

import argparse
import statistics
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from skconsole.bench.drain_sampler import DrainSampler, explain
from skconsole.bench.throughput import BenchConfig, run_bench
from skconsole.db.connect import Database
from skconsole.db.schema import setup_schema
from skconsole.worker.engine import WorkerConfig

VACUUM_STATS = (
    "SELECT relname, n_dead_tup, autovacuum_count, vacuum_count "
    "FROM pg_stat_user_tables WHERE relname IN ('sk_tasks_queue_t', 'sk_task_results_t') "
    "ORDER BY relname"
)


def vacuum_stats(dsn: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn, autocommit=True) as c:
        return c.execute(VACUUM_STATS).fetchall()


TABLES = ("sk_tasks_queue_t", "sk_task_results_t")


def set_vacuum_cost_delay(dsn: str, delays: dict[str, float]) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        for table, ms in delays.items():
            c.execute(
                sql.SQL("ALTER TABLE {} SET (autovacuum_vacuum_cost_delay = {})").format(
                    sql.Identifier(table), sql.Literal(ms)
                )
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--jobs", type=int, default=3_000_000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=WorkerConfig.concurrency)
    parser.add_argument("--batch-size", type=int, default=WorkerConfig.batch_size)
    parser.add_argument("--hold-xmin", action="store_true")
    parser.add_argument("--vacuum-cost-delay", action="append", default=[], metavar="TABLE=MS")
    args = parser.parse_args()
    delays: dict[str, float] = {}
    for item in args.vacuum_cost_delay:
        table, _, ms = item.partition("=")
        if table not in TABLES:
            parser.error(f"--vacuum-cost-delay: TABLE is one of {', '.join(TABLES)}")
        delays[table] = float(ms)
    if delays:
        set_vacuum_cost_delay(args.dsn, delays)
        print(f"autovacuum_vacuum_cost_delay for this run: {delays}")
    with psycopg.connect(args.dsn, autocommit=True) as c:
        setup_schema(c)  # a new database: the tables first, not a traceback
        settings = c.execute(
            "SELECT current_setting('server_version'), current_setting('autovacuum')"
        ).fetchone()
    print(f"server {settings}; {args.jobs:,} jobs, {args.processes} x {args.concurrency}")
    before = vacuum_stats(args.dsn)
    holder = psycopg.connect(args.dsn) if args.hold_xmin else None
    sampler = DrainSampler(args.dsn)
    sampler.start()
    try:
        if holder is not None:
            holder.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            holder.execute("SELECT count(*) FROM sk_workers_t")  # takes the snapshot
        cfg = BenchConfig(
            jobs=args.jobs,
            processes=args.processes,
            concurrency=args.concurrency,
            batch_size=args.batch_size,
            latency_jobs=500,
            timeout=3600.0,
        )
        result = run_bench(Database(args.dsn), cfg, progress=lambda m: print(m[:200], flush=True))
    finally:
        sampler.stop()
        if holder is not None:
            holder.close()
        if delays:
            set_vacuum_cost_delay(args.dsn, dict.fromkeys(delays, 0.0))
    series = result["drain_per_second_series"][1:-1]  # the first and last second are partial
    if not series:
        raise SystemExit(
            "the drain took under 3 s: too short to say anything per second (more --jobs)"
        )
    median = statistics.median(series)
    print(f"posted at {result['enqueue_jobs_per_s']:,.0f} jobs/s")
    print(
        f"drain {result['drain_jobs_per_s']:,.0f} jobs/s over {result['drain_seconds']:.0f} s;"
        f" per second: min {min(series):,}, p5 {statistics.quantiles(series, n=20, method='inclusive')[0]:,.0f},"
        f" median {median:,.0f}, max {max(series):,}; min / median {min(series) / median:.2f}"
    )
    minutes = [sum(series[i : i + 60]) / len(series[i : i + 60]) for i in range(0, len(series), 60)]
    print("mean per minute: " + ", ".join(f"{m:,.0f}" for m in minutes))
    print(f"pickup after the drain (ms): {result['pickup_latency_ms']}")
    print(f"vacuum before: {before}")
    print(f"vacuum after:  {vacuum_stats(args.dsn)}")
    seconds = dict(
        zip(
            map(datetime.fromisoformat, result["drain_per_second_at"]),
            result["drain_per_second_series"],
            strict=True,
        )
    )
    print(explain(sampler.samples, dict(list(seconds.items())[1:-1])))


if __name__ == "__main__":
    main()
