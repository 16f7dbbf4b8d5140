"""The engine through a pooler in transaction mode against the same server reached directly.

``python -m skconsole.bench.pooler --dsn DIRECT --through POOLED [--jobs 20000] [--rounds 3]``

``--through`` reaches the server of ``--dsn`` through PgBouncer (or a managed pooler)
in transaction mode. Each round runs :func:`~skconsole.bench.throughput.run_bench`
once directly and once through the pooler, interleaved: the enqueue rate, the drain
rate of ``skconsole worker`` processes and the pickup latency of jobs posted one by
one (through the pooler a worker polls: no LISTEN reaches it). The ratios
(pooled / direct) are the figures to read. The drain is timed from the resume of
the paused backlog, as ``skconsole bench`` does, and from the first claim: a pooled
worker learns of the resume at its next poll (up to a second later), which the
pickup latency already counts.
"""

from __future__ import annotations

import argparse
from typing import Any

from skconsole.bench.throughput import BenchConfig, run_bench
from skconsole.db.connect import Database


def _line(label: str, r: dict[str, Any]) -> str:
    lat = r["pickup_latency_ms"]
    return (
        f"  {label:<7} enqueue {r['enqueue_jobs_per_s']:>9,.0f}/s  drain {r['drain_jobs_per_s']:>7,.0f}/s"
        f" (from the first claim {r['drain_from_first_claim_jobs_per_s']:>7,.0f}/s)"
        f"  pickup p50 {lat['p50']:>6.1f} ms  p99 {lat['p99']:>6.1f} ms"
    )


def _ratio(pooled: dict[str, Any], direct: dict[str, Any], key: str) -> str:
    return f"{pooled[key] / direct[key]:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dsn", required=True, help="the server, reached directly")
    parser.add_argument("--through", required=True, help="the same server through the pooler")
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--latency-jobs", type=int, default=200)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cfg = BenchConfig(
        jobs=args.jobs, processes=args.processes, latency_jobs=args.latency_jobs, rate=args.rate
    )
    sides = (("direct", Database(args.dsn)), ("pooled", Database(args.through)))
    for n in range(1, args.rounds + 1):
        results = {label: run_bench(db, cfg) for label, db in sides}
        direct, pooled = results["direct"], results["pooled"]
        print(f"round {n}:")
        for label, r in results.items():
            print(_line(label, r))
        print(
            f"  pooled/direct: enqueue {_ratio(pooled, direct, 'enqueue_jobs_per_s')}"
            f"  drain {_ratio(pooled, direct, 'drain_jobs_per_s')}"
            f" (from the first claim {_ratio(pooled, direct, 'drain_from_first_claim_jobs_per_s')})",
            flush=True,
        )


if __name__ == "__main__":
    main()
