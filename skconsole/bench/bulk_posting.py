"""Bulk posts: ``Producer.post_many`` against a raw binary COPY of the same rows, same server.

``python -m skconsole.bench.bulk_posting --dsn DSN [--jobs 50000] [--chunk 1000] [--rounds 3]``
``python -m skconsole.bench.bulk_posting --dsn DSN --sizes``

The reference is the least a bulk post can do here: in one transaction, the
server's clock, a binary COPY into each table of rows built from fresh uuid4s,
one NOTIFY. ``post_many`` is timed from the making of its ``Job`` objects (as a
caller pays for them) to its last commit, ``--chunk`` jobs a call. The two are
interleaved round by round and the ratio reported per round.

``--sizes`` compares, for posts of 50 to 5,000 jobs without keys, the two
ways ``post_many`` can write them (one post_jobs.sql statement, or COPY): the
data behind ``COPY_MIN_ROWS``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from functools import partial

from skconsole.bench.interleave import arguments, interleave
from skconsole.bench.posting import TYPE, clean, server_version
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.producer import Job, Producer
from skconsole.producer.plan import QUEUE_TYPES, RESULT_TYPES, Plan, statements

SIZES = (50, 100, 200, 500, 1_000, 5_000)


def raw_copy(db: Database, jobs: int, chunk: int) -> float:
    """Jobs/s of the least a bulk post can do (see the module docstring)."""
    with db.connect() as c:
        started = time.perf_counter()
        for start in range(0, jobs, chunk):
            ids = [uuid.uuid4() for _ in range(min(chunk, jobs - start))]
            with c.transaction():
                row = c.execute(query("db_now")).fetchone()
                assert row is not None
                now = row[0]
                with c.cursor() as cur:
                    with cur.copy(query("copy_results")) as cp:
                        cp.set_types(RESULT_TYPES)
                        for i in ids:
                            cp.write_row((i, TYPE, "bench", "null", 1, 0, 0, False, 0, now))
                    with cur.copy(query("copy_queue")) as cp:
                        cp.set_types(QUEUE_TYPES)
                        for i in ids:
                            cp.write_row((i, TYPE, "bench", "null", 0, now, now))
                    cur.execute(query("notify_posted"))
        return jobs / (time.perf_counter() - started)


def post_many(db: Database, jobs: int, chunk: int) -> float:
    with Producer(db, source="bench") as p:
        p.post(TYPE)  # the connection is opened outside the timing, as raw's is
        started = time.perf_counter()
        for start in range(0, jobs, chunk):
            p.post_many([Job(TYPE) for _ in range(min(chunk, jobs - start))])
        return jobs / (time.perf_counter() - started)


def by_way(db: Database, size: int, posts: int, copy: bool) -> float:
    """Jobs/s of ``posts`` posts of ``size`` keyless jobs, all by COPY or all by statement."""
    with Producer(db, source="bench") as p:
        p.post(TYPE)
        conn = p._connection()
        started = time.perf_counter()
        for _ in range(posts):
            jobs = [Job(TYPE) for _ in range(size)]
            writes = Plan(None, jobs, []) if copy else Plan(None, (), statements(jobs, "bench"))
            with conn.transaction():
                p._write(conn, writes)
        return size * posts / (time.perf_counter() - started)


def _round(db: Database, label: str, measure: Callable[[], float]) -> float:
    clean(db)
    rate = measure()
    print(f"  {label}: {rate:,.0f} jobs/s", flush=True)
    return rate


def main() -> None:
    parser = arguments(__doc__, size="--jobs", default=50_000)
    parser.add_argument("--chunk", type=int, default=1_000)
    parser.add_argument("--sizes", action="store_true", help="statement vs COPY by post size")
    args = parser.parse_args()
    db = Database(args.dsn)
    print(f"server {server_version(args.dsn)}")
    if args.sizes:
        for size in SIZES:
            posts = max(1, 20_000 // size)
            st = _round(db, f"{size} jobs by statement", partial(by_way, db, size, posts, False))
            cp = _round(db, f"{size} jobs by COPY", partial(by_way, db, size, posts, True))
            print(f"size {size}: COPY / statement {cp / st:.2f}", flush=True)
    else:
        print(f"{args.jobs:,} jobs a side per round, {args.chunk:,} a post")
        interleave(
            args.rounds,
            ("raw COPY", lambda: raw_copy(db, args.jobs, args.chunk)),
            ("post_many", lambda: post_many(db, args.jobs, args.chunk)),
            unit=" jobs/s",
            reset=lambda: clean(db),
        )
    clean(db)


if __name__ == "__main__":
    main()
