"""Drain rate of a worker registered for many task types, against one registered for one.

``python -m skconsole.bench.many_types --dsn DSN [--jobs 30000] [--rounds 3]``

A backlog of one type is drained by a ``skconsole worker`` registered for the
busy type alone, then by one registered for 200 types (the busy one among
them), alternately, each round on the same server: a claim's cost must not
depend on how many types a worker runs. The rate is jobs over the span from
resuming the paused type to the last finalize time the server recorded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

from skconsole.bench.interleave import arguments, interleave
from skconsole.bench.throughput import _set_paused, _wait_for, clean_types
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.producer import Job, Producer
from skconsole.worker.registry import TaskOptions, TaskRegistry

TYPES = [f"bench.many.t{i:03d}" for i in range(200)]
BUSY = TYPES[7]
#: a worker of all 200 types (``--tasks skconsole.bench.many_types:many``)
many = TaskRegistry(TaskOptions(timeout=60.0))
#: a worker of the busy type alone (``--tasks skconsole.bench.many_types:one``)
one = TaskRegistry(TaskOptions(timeout=60.0))


async def noop(payload: Any) -> None:
    """Nothing: the benchmark measures the claim."""


for _name in TYPES:
    many.task(_name)(noop)
one.task(BUSY)(noop)


def drain(db: Database, registry: str, jobs: int) -> float:
    """Jobs per second for one drain of ``jobs`` by a worker of ``registry``."""
    clean_types(db, TYPES)
    _set_paused(db, True, BUSY)
    with Producer(db) as producer:
        producer.post_many([Job(BUSY, None) for _ in range(jobs)])
    cmd = [
        sys.executable, "-m", "skconsole", "worker",
        "--tasks", f"skconsole.bench.many_types:{registry}", "--grace", "5s",
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd,
        env={**os.environ, "SKCONSOLE_DSN": db.dsn},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_for(
            db,
            "SELECT count(*) FROM sk_workers_t WHERE %s = ANY(worker_task_types)"
            " AND worker_stopped_at_ts IS NULL",
            (BUSY,),
            1,
            60,
        )
        with db.connect() as c:
            row = c.execute("SELECT clock_timestamp()").fetchone()
            assert row is not None
            started = row[0]
        _set_paused(db, False, BUSY)
        _wait_for(
            db,
            "SELECT count(*) FROM sk_task_results_t WHERE task_type = %s AND task_status = %s",
            (BUSY, int(JobStatus.PROCESSED)),
            jobs,
            1800,
        )
        with db.connect() as c:
            span = c.execute(
                "SELECT extract(epoch FROM max(task_processing_finalized_at_ts) - %s)"
                " FROM sk_task_results_t WHERE task_type = %s",
                (started, BUSY),
            ).fetchone()
        return jobs / float(span[0]) if span and span[0] else float("nan")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)


def main() -> None:
    args = arguments(__doc__, size="--jobs", default=30_000).parse_args()
    db = Database(args.dsn)
    interleave(
        args.rounds,
        ("1 type", lambda: drain(db, "one", args.jobs)),
        ("200 types", lambda: drain(db, "many", args.jobs)),
        unit=" jobs/s",
    )


if __name__ == "__main__":
    main()
