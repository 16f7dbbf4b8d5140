"""A failover drill: workers drain a queue while its primary crashes and a lagging
standby is promoted; every execution, fencing token and acknowledged post is counted.

    python -m tests.support.failover_drill --runs 5            # asynchronous, 2 s lost
    python -m tests.support.failover_drill --synchronous --runs 1

Each run starts a primary and a streaming standby of its own
(:mod:`tests.support.replication`), posts ``--jobs`` ``token-async`` jobs (1 % of
them 3-12 s long, the rest instant), starts ``--workers`` ``skconsole worker``
processes on a multi-host DSN (``target_session_attrs=read-write``) and a producer
that keeps posting (each post's id kept once acknowledged). At the run's crash
moment the replication link is frozen, ``--lag`` seconds later the primary is
stopped with ``-m immediate``, ``--promote-after`` seconds later the standby is
promoted. Then it waits until every surviving job is final and reads, from the
handlers' own logs (start, end and token of every execution) and the new
primary's rows:

- overlapping executions of one job;
- fencing tokens given to two executions;
- acknowledged posts the new primary does not have (asynchronous replication
  may lose them; synchronous must not);
- jobs stuck (not final) when the drain ends;
- how long after the promotion the first job started on the new primary.

The same scenario, smaller, is the test ``tests/faults/test_failover.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from skconsole.db.schema import setup_schema
from skconsole.producer import Job, Producer
from tests.support.replication import ReplicatedPair
from tests.support.tasks_faults import Execution, OutputDrain, executions, overlaps

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Report:
    """What one run counted."""

    jobs: int
    executions: int
    overlapping: list[tuple[Execution, Execution]]
    tokens_twice: dict[str, list[Execution]]
    acknowledged: int
    acknowledged_lost: int
    stuck: int
    resumed_after: float | None
    drained_after: float | None
    logs: list[str] = field(default_factory=list)

    def line(self) -> str:
        resumed = "never" if self.resumed_after is None else f"{self.resumed_after:.1f} s"
        drained = "no" if self.drained_after is None else f"{self.drained_after:.1f} s"
        return (
            f"jobs {self.jobs}, executions {self.executions}, overlapping {len(self.overlapping)},"
            f" tokens twice {len(self.tokens_twice)}, acknowledged posts {self.acknowledged}"
            f" (lost {self.acknowledged_lost}), stuck {self.stuck}, first start after the"
            f" promotion {resumed}, drained {drained} after it"
        )


def tokens_given_twice(runs: dict[str, list[Execution]]) -> dict[str, list[Execution]]:
    """Fencing tokens (each execution's note) that two executions were given."""
    by_token: dict[str, list[Execution]] = {}
    for job_runs in runs.values():
        for run in job_runs:
            if run.note:
                by_token.setdefault(run.note, []).append(run)
    return {token: found for token, found in by_token.items() if len(found) > 1}


class Poster:
    """Posts a job every ``interval`` seconds on its own thread, through the multi-host
    DSN, and keeps the ids whose post was acknowledged (its commit returned)."""

    def __init__(self, dsn: str, interval: float = 0.02) -> None:
        self.dsn = dsn
        self.interval = interval
        self.acknowledged: list[uuid.UUID] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Poster:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        producer: Producer | None = None
        while not self._stop.is_set():
            try:
                if producer is None:
                    producer = Producer(self.dsn, source="drill-poster")
                self.acknowledged += producer.post_many([Job("token-async", 0)]).ids
            except Exception:
                if producer is not None:
                    with contextlib.suppress(Exception):
                        producer.close()
                producer = None
                self._stop.wait(0.2)
                continue
            self._stop.wait(self.interval)
        if producer is not None:
            with contextlib.suppress(Exception):
                producer.close()


def _workload(count: int, rng: random.Random) -> list[Job]:
    return [
        Job("token-async", round(rng.uniform(3, 12), 2) if rng.random() < 0.01 else 0)
        for _ in range(count)
    ]


@contextlib.contextmanager
def _workers(dsn: str, count: int, log_dir: Path, args: list[str]) -> Iterator[list[Any]]:
    procs: list[Any] = []
    env = {**os.environ, "SKTEST_LOG_DIR": str(log_dir)}
    try:
        for _ in range(count):
            p = subprocess.Popen(
                [sys.executable, "-m", "skconsole", "--dsn", dsn, "worker",
                 "--tasks", "tests.support.tasks_faults", *args],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT,
                start_new_session=True,
            )  # fmt: skip
            p.drain = OutputDrain(p)  # type: ignore[attr-defined]
            procs.append(p)
        yield procs
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)


def _unfinished(dsn: str, ids: list[uuid.UUID]) -> int | None:
    """How many of ``ids`` are not 3 Processed on the server at ``dsn`` (None: unreachable)."""
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=3) as c:
            row = c.execute(
                "SELECT count(*) FROM unnest(%s::uuid[]) AS i(id) LEFT JOIN sk_task_results_t r"
                " ON r.task_id = i.id WHERE r.task_status IS DISTINCT FROM 3",
                (ids,),
            ).fetchone()
    except psycopg.Error:
        return None
    return int(row[0]) if row else None


def _present(dsn: str, ids: list[uuid.UUID]) -> int:
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute(
            "SELECT count(*) FROM sk_task_results_t WHERE task_id = ANY(%s::uuid[])", (ids,)
        ).fetchone()
    return int(row[0]) if row else 0


def run_once(
    *,
    jobs: int,
    workers: int,
    crash_at: float,
    lag: float,
    promote_after: float,
    synchronous: bool,
    worker_args: list[str],
    seed: int,
    drain_timeout: float = 240.0,
) -> Report:
    """One drill: ``crash_at`` seconds after the workers start, the link freezes."""
    rng = random.Random(seed)
    log_dir = Path(tempfile.mkdtemp(prefix="skconsole-drill-"))
    with ReplicatedPair(synchronous=synchronous) as pair:
        with psycopg.connect(pair.primary.dsn, autocommit=True) as c:
            setup_schema(c)
        with Producer(pair.primary.dsn) as p:
            posted = list(p.post_many(_workload(jobs, rng)).ids)
        poster = Poster(pair.multi_host_dsn).start()
        with _workers(pair.multi_host_dsn, workers, log_dir, worker_args) as procs:
            time.sleep(crash_at)
            pair.freeze_replication()
            time.sleep(lag)
            pair.crash_primary()
            time.sleep(promote_after)
            pair.promote()
            promoted = time.time()
            time.sleep(3.0)  # posts acknowledged by the new primary too
            poster.stop()
            new = pair.standby.dsn
            acknowledged = list(poster.acknowledged)
            present = _present(new, acknowledged)
            survivors = posted + acknowledged
            deadline = time.monotonic() + drain_timeout
            drained_after: float | None = None
            left: int | None = None
            while time.monotonic() < deadline:
                left = _unfinished(new, survivors)
                if left is not None and left <= len(acknowledged) - present:
                    drained_after = time.time() - promoted
                    break
                time.sleep(0.5)
            logs = [p.drain.tail(40) for p in procs]
        runs = executions(log_dir)
    after = [r.started for job_runs in runs.values() for r in job_runs if r.started > promoted]
    overlapping = [pair for job_runs in runs.values() for pair in overlaps(job_runs)]
    return Report(
        jobs=len(survivors),
        executions=sum(len(r) for r in runs.values()),
        overlapping=overlapping,
        tokens_twice=tokens_given_twice(runs),
        acknowledged=len(acknowledged),
        acknowledged_lost=len(acknowledged) - present,
        stuck=max(0, (left or 0) - (len(acknowledged) - present)),
        resumed_after=(min(after) - promoted) if after else None,
        drained_after=drained_after,
        logs=logs,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=25_000)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--lag", type=float, default=2.0, help="seconds of WAL the standby misses")
    parser.add_argument("--promote-after", type=float, default=2.0)
    parser.add_argument("--synchronous", action="store_true")
    parser.add_argument("--first-crash", type=float, default=2.0, help="seconds into the drain")
    parser.add_argument("--crash-step", type=float, default=1.5)
    parser.add_argument("--show-logs", action="store_true")
    parser.add_argument("worker_args", nargs="*", help="more arguments for each worker")
    args = parser.parse_args()
    for n in range(args.runs):
        crash_at = args.first_crash + n * args.crash_step
        report = run_once(
            jobs=args.jobs,
            workers=args.workers,
            crash_at=crash_at,
            lag=args.lag,
            promote_after=args.promote_after,
            synchronous=args.synchronous,
            worker_args=args.worker_args,
            seed=n,
        )
        mode = "synchronous" if args.synchronous else "asynchronous"
        print(
            f"run {n + 1} ({mode}, crash {crash_at:.1f} s in, {args.lag:g} s lost): {report.line()}"
        )
        for a, b in report.overlapping[:5]:
            print(f"  overlap {a.task_id}: {a.started:.3f}-{a.ended:.3f} [{a.note}] pid {a.pid}"
                  f" and {b.started:.3f}-{b.ended:.3f} [{b.note}] pid {b.pid}")  # fmt: skip
        if args.show_logs:
            for log in report.logs:
                print(log)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
