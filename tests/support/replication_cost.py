"""What synchronous replication costs a post: single posts and bulk posts on a primary
with an asynchronous standby against one with a synchronous standby, interleaved.

    python -m tests.support.replication_cost --rounds 7

Two pairs (:mod:`tests.support.replication`) run side by side on this machine, each
a primary and a streaming standby on localhost; each round measures one side, then
the other (the order alternates), so both see the same machine. Localhost is the
best case for synchronous replication: across hosts each commit waits one more
network round trip to the standby (and its disk flush; fsync is off here).
"""

from __future__ import annotations

import argparse
import statistics
import time

import psycopg

from skconsole.db.schema import setup_schema
from skconsole.producer import Job, Producer
from tests.support.replication import ReplicatedPair


def _single_posts(dsn: str, n: int) -> list[float]:
    """Latency of ``n`` posts, one statement and one commit each (ms)."""
    latencies = []
    with Producer(dsn) as p:
        for i in range(n):
            started = time.perf_counter()
            p.post("bench.noop", {"i": i})
            latencies.append((time.perf_counter() - started) * 1000.0)
    return latencies


def _bulk_rate(dsn: str, chunks: int, size: int = 1000) -> float:
    """Jobs per second posted in chunks of ``size`` (one COPY and commit each)."""
    with Producer(dsn) as p:
        started = time.perf_counter()
        for _ in range(chunks):
            p.post_many([Job("bench.noop", {"i": i}) for i in range(size)])
        return chunks * size / (time.perf_counter() - started)


def _quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q * 100) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--posts", type=int, default=1000, help="single posts a round")
    parser.add_argument("--chunks", type=int, default=20, help="bulk chunks of 1,000 a round")
    args = parser.parse_args()
    with ReplicatedPair() as asynchronous, ReplicatedPair(synchronous=True) as synchronous:
        sides = {"asynchronous": asynchronous, "synchronous": synchronous}
        for pair in sides.values():
            with psycopg.connect(pair.primary.dsn, autocommit=True) as c:
                setup_schema(c)
            _single_posts(pair.primary.dsn, 100)  # warm up
        p50: dict[str, list[float]] = {name: [] for name in sides}
        p95: dict[str, list[float]] = {name: [] for name in sides}
        bulk: dict[str, list[float]] = {name: [] for name in sides}
        for n in range(args.rounds):
            order = list(sides) if n % 2 == 0 else list(reversed(sides))
            for name in order:
                dsn = sides[name].primary.dsn
                lat = _single_posts(dsn, args.posts)
                p50[name].append(statistics.median(lat))
                p95[name].append(_quantile(lat, 0.95))
                bulk[name].append(_bulk_rate(dsn, args.chunks))
            a, s = "asynchronous", "synchronous"
            print(
                f"round {n + 1}: single post p50 {p50[a][-1]:.3f} vs {p50[s][-1]:.3f} ms"
                f" (x{p50[s][-1] / p50[a][-1]:.2f}), p95 {p95[a][-1]:.3f} vs"
                f" {p95[s][-1]:.3f} ms; bulk {bulk[a][-1]:,.0f} vs {bulk[s][-1]:,.0f} jobs/s"
                f" (x{bulk[s][-1] / bulk[a][-1]:.2f})",
                flush=True,
            )
        med = statistics.median
        print(
            f"median of {args.rounds} rounds: single post p50 {med(p50['asynchronous']):.3f}"
            f" ms asynchronous, {med(p50['synchronous']):.3f} ms synchronous (ratio"
            f" {med([s / a for a, s in zip(p50['asynchronous'], p50['synchronous'], strict=True)]):.2f});"
            f" p95 {med(p95['asynchronous']):.3f} vs {med(p95['synchronous']):.3f} ms;"
            f" bulk {med(bulk['asynchronous']):,.0f} vs {med(bulk['synchronous']):,.0f} jobs/s"
            f" (ratio {med([s / a for a, s in zip(bulk['asynchronous'], bulk['synchronous'], strict=True)]):.2f})"
        )


if __name__ == "__main__":
    main()
