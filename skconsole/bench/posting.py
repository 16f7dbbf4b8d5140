"""Single posts: ``Producer.post`` against the rawest one-statement post, same server.

``python -m skconsole.bench.posting --dsn DSN [--posts 2000] [--rounds 3]``

The reference is what one post cannot beat on this server: one prepared
statement inserting the result row and the queue row and notifying, on an
autocommit connection (one round trip, nothing checked). The two are
interleaved round by round and the ratio reported per round.
"""

from __future__ import annotations

import time
import uuid

import psycopg

from skconsole.bench.interleave import arguments, interleave
from skconsole.bench.throughput import clean_types
from skconsole.db.connect import Database
from skconsole.producer import Producer

TYPE = "bench.post"
RAW = """
WITH r AS (
    INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,
        task_priority, task_error_count, task_last_error_is_recoverable,
        task_processing_time_milliseconds, task_posted_at_ts)
    VALUES (%(id)s, %(type)s, 'bench', 'null', 1, 0, 0, false, 0, now())
),
q AS (
    INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    VALUES (%(id)s, %(type)s, 'bench', 'null', 0, now(), now())
)
SELECT pg_notify('sk_task_queue_item_added', '')
"""


def clean(db: Database) -> None:
    clean_types(db, [TYPE])


def server_version(dsn: str) -> str:
    with psycopg.connect(dsn) as c:
        version = c.execute("SHOW server_version").fetchone()
    return str(version[0]) if version else "?"


def raw(db: Database, posts: int) -> float:
    with db.connect() as c:
        started = time.perf_counter()
        for _ in range(posts):
            c.execute(RAW, {"id": uuid.uuid4(), "type": TYPE}, prepare=True)
        return posts / (time.perf_counter() - started)


def producer(db: Database, posts: int) -> float:
    with Producer(db) as p:
        p.post(TYPE)  # the connection is opened outside the timing, as raw's is
        started = time.perf_counter()
        for _ in range(posts):
            p.post(TYPE)
        return posts / (time.perf_counter() - started)


def main() -> None:
    args = arguments(__doc__, size="--posts", default=2000).parse_args()
    db = Database(args.dsn)
    print(f"server {server_version(args.dsn)}; {args.posts:,} posts a side per round")
    interleave(
        args.rounds,
        ("raw", lambda: raw(db, args.posts)),
        ("Producer.post", lambda: producer(db, args.posts)),
        unit="/s",
        reset=lambda: clean(db),
    )
    clean(db)


if __name__ == "__main__":
    main()
