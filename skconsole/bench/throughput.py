"""``skconsole bench``: enqueue rate, drain rate and pickup latency with no-op jobs.

Workers are real ``skconsole worker`` processes. The bench type is paused
while the backlog is posted, so the drain is timed from the moment it is
resumed to the last job's finalize time as the server recorded it; pickup
latency is post -> claim (the handler starts right after) from the result
rows, measured with jobs posted one by one at a steady rate to idle workers.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any, LiteralString, TypeVar

import psycopg
from psycopg import sql

from skconsole.bench.config import BENCH_TYPE as BENCH_TYPE
from skconsole.bench.config import BenchConfig as BenchConfig
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.db.pooled import run_outside_transaction
from skconsole.producer import Job, Producer
from skconsole.worker.registry import TaskOptions, TaskRegistry

#: handlers that wait 10 ms as real ones do: on I/O (async) or in a blocking call (sync)
ASYNC_10MS_TYPE = "skconsole.bench.async_10ms"
SYNC_10MS_TYPE = "skconsole.bench.sync_10ms"
BENCH_TYPES = [BENCH_TYPE, ASYNC_10MS_TYPE, SYNC_10MS_TYPE]
#: bound as a parameter: the code of a succeeded job
PROCESSED = int(JobStatus.PROCESSED)
tasks = TaskRegistry(TaskOptions(timeout=60.0))
T = TypeVar("T")


@tasks.task(BENCH_TYPE)
async def noop(payload: Any) -> None:
    """Nothing: the benchmark measures the engine."""


@tasks.task(ASYNC_10MS_TYPE)
async def async_10ms(payload: Any) -> None:
    """10 ms of waiting on I/O, as an HTTP call or a query would."""
    await asyncio.sleep(0.01)


@tasks.task(SYNC_10MS_TYPE)
def sync_10ms(payload: Any) -> None:
    """10 ms in a blocking call (a worker thread), as a sync client library would."""
    time.sleep(0.01)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _spread(values: list[int]) -> dict[str, float | None]:
    if not values:
        return {"min": None, "median": None, "max": None, "seconds": 0}
    return {
        "min": min(values),
        "median": _percentile([float(v) for v in values], 0.5),
        "max": max(values),
        "seconds": len(values),
    }


def clean_types(db: Database, task_types: list[str]) -> None:
    """Delete the jobs and results of a benchmark's types, then vacuum, for a fresh round."""
    with db.connect() as c:
        c.execute("DELETE FROM sk_tasks_queue_t WHERE task_type = ANY(%s)", (task_types,))
        c.execute("DELETE FROM sk_task_results_t WHERE task_type = ANY(%s)", (task_types,))
    with db.connect(autocommit=True) as c:
        for table in ("sk_tasks_queue_t", "sk_task_results_t"):
            run_outside_transaction(c, sql.SQL("VACUUM ANALYZE {}").format(sql.Identifier(table)))


def _set_paused(db: Database, paused: bool, task_type: str = BENCH_TYPE) -> None:
    with db.connect() as c:
        c.execute(
            "INSERT INTO sk_task_types_t (task_type, tt_paused) VALUES (%s, %s) "
            "ON CONFLICT (task_type) DO UPDATE SET tt_paused = EXCLUDED.tt_paused",
            (task_type, paused),
        )
        if not paused:
            c.execute("SELECT pg_notify('sk_task_queue_item_added', '')")


def _wait_for(
    db: Database, statement: Any, params: tuple[Any, ...], want: int, timeout: float
) -> None:
    deadline = time.monotonic() + timeout
    with db.connect() as c:
        while time.monotonic() < deadline:
            row = c.execute(statement, params).fetchone()
            if row and int(row[0]) >= want:
                return
            time.sleep(0.1)
    raise TimeoutError(f"benchmark did not reach {want} within {timeout:.0f}s")


def _wait_for_drain(db: Database, task_type: str, timeout: float) -> None:
    """Until no job of the type waits or runs. Asked twice a second and answered
    from the first index entries: counting millions of processed rows ten times
    a second (parallel workers and all) took a core from the drain it measured."""
    deadline = time.monotonic() + timeout
    with db.connect() as c:
        while time.monotonic() < deadline:
            row = c.execute(
                "SELECT EXISTS (SELECT 1 FROM sk_tasks_queue_t WHERE task_type = %s)"
                " OR EXISTS (SELECT 1 FROM sk_task_results_t"
                " WHERE task_type = %s AND task_status = %s)",
                (task_type, task_type, int(JobStatus.PROCESSING)),
            ).fetchone()
            if row is not None and not row[0]:
                return
            time.sleep(0.5)
    raise TimeoutError(f"the drain did not end within {timeout:.0f}s")


def _column(
    c: psycopg.Connection[Any],
    statement: LiteralString,
    params: tuple[Any, ...],
    convert: Callable[[Any], T],
    *,
    index: int = 0,
) -> list[T]:
    """Column ``index`` of every row the query returns, each passed through ``convert``."""
    return [convert(r[index]) for r in c.execute(statement, params).fetchall()]


def run_bench(
    db: Database, cfg: BenchConfig, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    with db.connect() as c:
        version = c.execute(
            "SELECT current_setting('server_version'), current_setting('synchronous_commit')"
        ).fetchone()
        assert version is not None
    clean_types(db, BENCH_TYPES)
    _set_paused(db, True, cfg.task_type)
    env = {**os.environ, "SKCONSOLE_DSN": db.dsn}
    cmd = [
        sys.executable, "-m", "skconsole", "worker", "--tasks", "skconsole.bench.throughput:tasks",
        "--concurrency", str(cfg.concurrency), "--batch-size", str(cfg.batch_size),
        "--processes", str(cfg.processes), "--grace", "5s",
    ]  # fmt: skip
    procs = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        _wait_for(
            db,
            "SELECT count(*) FROM sk_workers_t WHERE %s = ANY(worker_task_types) AND worker_stopped_at_ts IS NULL "
            "AND worker_heartbeat_at_ts > now() - interval '10 seconds'",
            (cfg.task_type,),
            cfg.processes,
            60,
        )
        say(f"posting {cfg.jobs:,} jobs")
        job = Job(cfg.task_type, None)
        started = time.perf_counter()
        with Producer(db) as producer:
            producer.post_stream(job.another() for _ in range(cfg.jobs))
        enqueue_s = time.perf_counter() - started
        say(f"draining with {cfg.processes} process(es)")
        with db.connect() as c:
            t0_row = c.execute("SELECT clock_timestamp()").fetchone()
        _set_paused(db, False, cfg.task_type)
        _wait_for_drain(db, cfg.task_type, cfg.timeout)
        with db.connect() as c:
            done = c.execute(
                "SELECT count(*) FROM sk_task_results_t WHERE task_type = %s AND task_status = %s",
                (cfg.task_type, PROCESSED),
            ).fetchone()
            if done is None or done[0] != cfg.jobs:
                raise RuntimeError(f"drained, but {done} of {cfg.jobs} jobs processed")
            row = c.execute(
                "SELECT extract(epoch FROM max(task_processing_finalized_at_ts) - %s),"
                " extract(epoch FROM max(task_processing_finalized_at_ts)"
                " - min(task_first_processing_attempted_at_ts)) "
                "FROM sk_task_results_t WHERE task_type = %s",
                (t0_row[0] if t0_row else None, cfg.task_type),
            ).fetchone()
            seconds = c.execute(
                "SELECT date_trunc('second', task_processing_finalized_at_ts), count(*) "
                "FROM sk_task_results_t WHERE task_type = %s GROUP BY 1 ORDER BY 1",
                (cfg.task_type,),
            ).fetchall()
            per_second = [int(n) for _, n in seconds]
        drain_s = float(row[0]) if row and row[0] else float("nan")
        running_s = float(row[1]) if row and row[1] else float("nan")
        say("drain per second: " + " ".join(map(str, per_second)))
        say(f"pickup latency: {cfg.latency_jobs} jobs at {cfg.rate:g}/s")
        ids = []
        with Producer(db) as producer:
            interval = 1.0 / cfg.rate
            next_at = time.perf_counter()
            for _ in range(cfg.latency_jobs):
                ids.append(producer.post(cfg.task_type, None))
                next_at += interval
                time.sleep(max(0.0, next_at - time.perf_counter()))
        _wait_for(
            db,
            "SELECT count(*) FROM sk_task_results_t WHERE task_id = ANY(%s) AND task_status = %s",
            (ids, PROCESSED),
            len(ids),
            120,
        )
        with db.connect() as c:
            lat = _column(
                c,
                "SELECT extract(epoch FROM task_first_processing_attempted_at_ts - task_posted_at_ts) * 1000 "
                "FROM sk_task_results_t WHERE task_id = ANY(%s)",
                (ids,),
                float,
            )
    finally:
        os.killpg(procs.pid, signal.SIGTERM)
        try:
            procs.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(procs.pid, signal.SIGKILL)
        _set_paused(db, False, cfg.task_type)
    clean_types(db, BENCH_TYPES)
    return {
        "server_version": version[0],
        "synchronous_commit": version[1],
        "jobs": cfg.jobs,
        "processes": cfg.processes,
        "concurrency": cfg.concurrency,
        "enqueue_jobs_per_s": round(cfg.jobs / enqueue_s, 1),
        "drain_jobs_per_s": round(cfg.jobs / drain_s, 1),
        "drain_seconds": round(drain_s, 3),
        # from the first claim, not the resume: the drain without its pickup latency
        "drain_from_first_claim_jobs_per_s": round(cfg.jobs / running_s, 1),
        # whole seconds only (the first and last are partial): does throughput hold?
        "drain_per_second": _spread(per_second[1:-1]),
        "drain_per_second_series": per_second,
        # the server's second of each count, for lining the series up with other samples
        "drain_per_second_at": [at.isoformat() for at, _ in seconds],
        "pickup_latency_ms": {
            "p50": round(_percentile(lat, 0.50), 2),
            "p90": round(_percentile(lat, 0.90), 2),
            "p99": round(_percentile(lat, 0.99), 2),
            "max": round(max(lat), 2) if lat else None,
            "n": len(lat),
        },
    }
