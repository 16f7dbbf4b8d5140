"""Check a requeue's forecast against what happened, on the demo's queue.

    python -m tests.support.forecast_check --dsn postgresql://.../empty_db

Not a test and not a benchmark (nothing asserts a time): it plays an incident on the
demo's queue and prints predicted against actual. On an empty database it sets up the
schema, posts the demo's backlog (:func:`skconsole.demo.scenario.initial_jobs`), starts
the demo's trickle of new jobs and an engine running the demo's handlers. The incident:
a mail partner was down; ``--backlog`` emails (``demo.sleep``) queued up meanwhile, and
``--jobs`` more were cancelled by an operator. The partner is back: the engine works
the backlog off, and after ``--warmup`` seconds (the flow's rates are counts over a
5-minute window: a type that started less than a window ago reads slow; the cancelled
jobs were posted before it) the operator requeues the cancelled emails. The requeue's
preview carries the forecast; the script executes it, watches the type's ready backlog
until it is empty, and prints the forecast's clear time, its error band and the time the
backlog took.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from skconsole import ops, read
from skconsole.core.actor import Actor
from skconsole.db.connect import Database
from skconsole.db.schema import setup_schema
from skconsole.demo.handlers import tasks
from skconsole.demo.scenario import Trickle, initial_jobs
from skconsole.producer import Job, Producer
from skconsole.read.forecast import about, error_text
from skconsole.worker.engine import WorkerConfig
from skconsole.worker.thread import EngineThread

TASK_TYPE = "demo.sleep"
ACTOR = Actor(user="forecast-check", host="demo")


def ready_of(db: Database, task_type: str) -> int:
    with db.connect() as conn:
        row = next((t for t in read.depth(conn).types if t.task_type == task_type), None)
    return row.ready if row is not None else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="an empty database (the schema is added)")
    parser.add_argument("--warmup", type=float, default=330.0, help="seconds before the incident")
    parser.add_argument("--jobs", type=int, default=600, help="jobs cancelled, then requeued")
    parser.add_argument("--backlog", type=int, default=2400, help="emails queued up")
    parser.add_argument("--workers", type=int, default=8, help="the engine's concurrency")
    parser.add_argument("--rate", type=float, default=3.0, help="new demo jobs per second")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--limit", type=float, default=1800.0, help="give up after (s)")
    args = parser.parse_args(argv)

    db = Database(args.dsn, application_name="skconsole-forecast-check")
    with db.connect() as conn:
        setup_schema(conn)
        (jobs,) = conn.execute("SELECT count(*) FROM sk_task_results_t").fetchone() or (0,)
    if jobs:
        print(f"refused: {jobs:,} jobs in that database; give an empty one", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)

    def emails(n: int) -> list[Job]:
        return [
            Job(TASK_TYPE, {"seconds": round(rng.uniform(0.2, 2.5), 2)}, priority=1)
            for _ in range(n)
        ]

    with Producer(db, source="skconsole-demo") as producer:
        producer.post_many(initial_jobs(rng))
    # the incident: the partner is down; emails queue up, and an operator cancels some
    with Producer(db, source="mailer@web-3") as producer:
        producer.post_many(emails(args.backlog))
        ids = tuple(producer.post_many(emails(args.jobs)).ids)
    with db.connect() as conn:
        cancel = ops.CANCEL.preview(conn, ops.Selection(ids=ids))
        ops.CANCEL.execute(conn, cancel.selection, actor=ACTOR, ids=cancel.ids)
    trickle = Trickle(db, args.rate, args.seed)
    engine = EngineThread(
        db, tasks, WorkerConfig(concurrency=args.workers, reap=False, grace_period=3.0)
    )
    engine.start()
    trickle.start()
    try:
        print(f"warming up for {args.warmup:.0f} s ...", file=sys.stderr)
        time.sleep(args.warmup)
        with db.connect() as conn:
            # the partner is back: requeue the cancelled, as the console's R on them does
            selection = ops.Selection(task_type=TASK_TYPE, statuses=(7,))
            preview = ops.REQUEUE.preview(conn, selection)
            started = time.monotonic()
            result = ops.REQUEUE.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)
        forecast = preview.forecast
        print(f"requeued {result.changed:,} of {preview.count:,}", file=sys.stderr)
        print(f"forecast: {forecast.text if forecast else '(none)'}")
        while ready_of(db, TASK_TYPE) > 0 and time.monotonic() - started < args.limit:
            time.sleep(1.0)
        took = time.monotonic() - started
    finally:
        trickle.stop()
        engine.close(10.0)
    mine = next((t for t in forecast.types if t.task_type == TASK_TYPE), None) if forecast else None
    predicted = mine.clear_s if mine is not None else None
    print(f"ready {TASK_TYPE} after the requeue: {mine.backlog if mine else '-'}")
    if mine is not None:
        print(
            f"flow at the preview: {mine.completions} done, {mine.arrivals} posted"
            f" in {mine.window_s:.0f} s"
        )
    print(f"actual: the backlog cleared in {took:.0f} s ({about(took)})")
    if predicted is not None and mine is not None:
        band = mine.error or 0.0
        low, high = predicted * (1 - band), predicted * (1 + band)
        print(
            f"predicted: {predicted:.0f} s ({about(predicted)}, {error_text(mine.error)}:"
            f" {low:.0f}-{high:.0f} s); actual / predicted = {took / predicted:.2f};"
            f" {'within' if low <= took <= high else 'outside'} the band"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
