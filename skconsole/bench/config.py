"""What a ``skconsole bench`` run is asked to do: apart from the benchmark itself, so the
command line reads its defaults without importing the benchmark (and what it imports)."""

from __future__ import annotations

from dataclasses import dataclass

BENCH_TYPE = "skconsole.bench.noop"


@dataclass
class BenchConfig:
    jobs: int = 50_000
    processes: int = 2
    latency_jobs: int = 500
    rate: float = 100.0
    concurrency: int = 200
    batch_size: int = 200
    timeout: float = 900.0
    task_type: str = BENCH_TYPE
