"""Drain rate by concurrency and batch size, for no-op, 10 ms async and 10 ms sync handlers.

``python -m skconsole.bench.defaults --dsn DSN [--concurrency 10,25,50,100,200]
[--batch-size 100] [--processes 1] [--seconds 8]``

The data behind the worker's default ``--concurrency`` and ``--batch-size``
(docs/howto/sizing-workers.md). Each cell is one ``skconsole bench`` drain
(:func:`skconsole.bench.throughput.run_bench`, no pickup phase) of a backlog
sized to take about ``--seconds`` at the rate the cell can reach at most: a
10 ms handler cannot pass ``concurrency x 100`` jobs/s a process. Cells run
row by row, so handlers are interleaved within each concurrency.
"""

from __future__ import annotations

import argparse

from skconsole.bench.throughput import (
    ASYNC_10MS_TYPE,
    BENCH_TYPE,
    SYNC_10MS_TYPE,
    BenchConfig,
    run_bench,
)
from skconsole.db.connect import Database

HANDLERS = {"no-op": BENCH_TYPE, "10 ms async": ASYNC_10MS_TYPE, "10 ms sync": SYNC_10MS_TYPE}
#: the fastest no-op drain seen here (jobs/s a process): sizes no-op backlogs
NOOP_CEILING = 10_000


def backlog(task_type: str, concurrency: int, processes: int, seconds: float) -> int:
    """Jobs for a drain of about ``seconds`` at the best rate the cell could reach."""
    ceiling = NOOP_CEILING if task_type == BENCH_TYPE else concurrency * 100
    return max(2_000, int(min(ceiling, NOOP_CEILING) * processes * seconds))


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--concurrency", type=_ints, default=[10, 25, 50, 100, 200])
    parser.add_argument("--batch-size", type=_ints, default=[100])
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    db = Database(args.dsn)
    print(f"{args.processes} process(es); jobs/s (drain seconds)")
    print("concurrency | batch | " + " | ".join(HANDLERS))
    for concurrency in args.concurrency:
        for batch_size in args.batch_size:
            cells = []
            for task_type in HANDLERS.values():
                jobs = backlog(task_type, concurrency, args.processes, args.seconds)
                cfg = BenchConfig(
                    jobs=jobs,
                    processes=args.processes,
                    latency_jobs=0,
                    concurrency=concurrency,
                    batch_size=batch_size,
                    task_type=task_type,
                )
                result = run_bench(db, cfg)
                cells.append(f"{result['drain_jobs_per_s']:,.0f} ({result['drain_seconds']:.1f} s)")
            print(f"{concurrency} | {batch_size} | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
