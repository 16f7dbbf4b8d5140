"""Time to first job: from starting ``skconsole worker`` to its handler running a job
that was already waiting.

``python -m skconsole.bench.first_job --dsn DSN [--rounds 7]``

Each round posts one job, starts ``python -m skconsole --dsn DSN worker --tasks
skconsole.bench.first_job --burst`` and reads the wall-clock instant its handler
began (the handler writes it to the file the payload names) against the instant
before the process was started; the worker exits once the queue is empty. Beside
it, each round times a bare interpreter (``python -c pass``) and ``skconsole
--version``, so what the worker adds over starting Python is its own line. One
JSON object: each series' median, min and max (seconds).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skconsole.worker.registry import TaskOptions, TaskRegistry

FIRST_TYPE = "skconsole.bench.first"

tasks = TaskRegistry(TaskOptions(timeout=60.0))


@tasks.task(FIRST_TYPE)
def first(payload: dict[str, str]) -> None:
    """Writes the instant it began to the payload's ``path``."""
    began = time.time()
    Path(payload["path"]).write_text(repr(began), encoding="ascii")


def _timed(argv: list[str]) -> float:
    started = time.time()
    subprocess.run(argv, check=True, capture_output=True, timeout=120)
    return time.time() - started


def first_job(dsn: str, where: Path) -> float:
    """Seconds from starting a worker to its handler running the job posted before it."""
    # imported here: the worker loads this module for its handler, and a worker of an
    # application's tasks module would not import the producer either
    from skconsole.db.connect import Database
    from skconsole.producer import Producer

    mark = where / "began"
    mark.unlink(missing_ok=True)
    with Producer(Database(dsn)) as producer:
        producer.post(FIRST_TYPE, {"path": str(mark)})
    argv = [sys.executable, "-m", "skconsole", "--dsn", dsn, "worker"]
    argv += ["--tasks", "skconsole.bench.first_job", "--types", FIRST_TYPE, "--burst"]
    started = time.time()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not mark.exists():
        raise SystemExit(f"the worker did not run the job: {done.stderr.strip()[-400:]}")
    return float(mark.read_text(encoding="ascii")) - started


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    series: dict[str, list[float]] = {"python": [], "version": [], "first_job": []}
    with tempfile.TemporaryDirectory() as tmp:
        first_job(args.dsn, Path(tmp))  # warm the server's caches and the file system's
        for _ in range(args.rounds):
            series["python"].append(_timed([sys.executable, "-c", "pass"]))
            series["version"].append(_timed([sys.executable, "-m", "skconsole", "--version"]))
            series["first_job"].append(first_job(args.dsn, Path(tmp)))
    print(json.dumps({name: _summary(v) for name, v in series.items()}))


if __name__ == "__main__":
    main()
