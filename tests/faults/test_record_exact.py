"""The per-minute record is exact under load: 4 worker processes finishing 20,000 jobs
that 4 producers post at once (single posts, statement batches and COPY), while
every worker's upkeep rolls the record; afterwards, every minute's count of every
type equals the count made from the job rows and the kept attempts."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import psycopg

from skconsole import read
from skconsole.producer import Job, Producer
from tests.support.tasks_faults import all_final
from tests.support.waiting import wait_until

TOTAL = 20_000
PRODUCERS = 4
#: every 25th job of a producer a single post, the rest in batches of 120 (statements)
#: and of 400 (COPY)
SINGLE_EVERY = 25

Key = tuple[datetime, str]


def _job(i: int) -> Job:
    if i % 20 == 0:
        return Job("fatal", None)
    if i % 20 == 1:
        return Job("flaky-until", 2)  # two recoverable failures, then success
    return Job("ok", {"n": i})


def _produce(dsn: str, first: int, count: int, errors: list[BaseException]) -> None:
    try:
        with Producer(dsn) as p:
            i, end, batch = first, first + count, 120
            while i < end:
                if i % SINGLE_EVERY == 0:
                    job = _job(i)
                    p.post(job.task_type, job.payload)
                    i += 1
                    continue
                n = min(batch, end - i)
                p.post_many([_job(k) for k in range(i, i + n)])
                i += n
                batch = 520 - batch  # 120, 400, 120, ...: statements and COPY in turn
    except BaseException as exc:
        errors.append(exc)


def _from_rows(conn: psycopg.Connection[Any], sql: str) -> dict[Key, int]:
    return {(m, t): n for m, t, n in conn.execute(sql)}  # type: ignore[misc]


def _from_record(rec: read.Record, field: Callable[[read.Counts], int]) -> dict[Key, int]:
    out: dict[Key, int] = {}
    for task_type, per in rec.by_type.items():
        for at, counts in per.items():
            if field(counts):
                out[(at, task_type)] = field(counts)
    return out


def test_every_minutes_counts_equal_the_counts_from_the_rows(
    dsn: str, conn: psycopg.Connection[Any], spawn: Callable[..., Any]
) -> None:
    started = conn.execute("SELECT date_trunc('minute', now())").fetchone()[0]  # type: ignore[index]
    workers = [spawn("--concurrency", "8") for _ in range(4)]
    errors: list[BaseException] = []
    share = TOTAL // PRODUCERS
    producers = [
        threading.Thread(target=_produce, args=(dsn, k * share, share, errors))
        for k in range(PRODUCERS)
    ]
    for t in producers:
        t.start()
    for t in producers:
        t.join()
    assert errors == []
    wait_until(lambda: all_final(conn), timeout=300)
    for w in workers:
        assert w.poll() is None, "a worker exited early"

    until = conn.execute("SELECT now() + interval '1 minute'").fetchone()[0]  # type: ignore[index]
    rec = read.record(conn, since=started - timedelta(minutes=1), until=until)
    rows = {
        "posted": _from_rows(
            conn,
            "SELECT date_trunc('minute', task_posted_at_ts), task_type, count(*)"
            " FROM sk_task_results_t GROUP BY 1, 2",
        ),
        "succeeded": _from_rows(
            conn,
            "SELECT date_trunc('minute', task_processing_finalized_at_ts), task_type, count(*)"
            " FROM sk_task_results_t WHERE task_status = 3 GROUP BY 1, 2",
        ),
        "failed_fatal": _from_rows(
            conn,
            "SELECT date_trunc('minute', task_processing_finalized_at_ts), task_type, count(*)"
            " FROM sk_task_results_t WHERE task_status = 6 GROUP BY 1, 2",
        ),
        "started": _from_rows(
            conn,
            "SELECT date_trunc('minute', a.started_at_ts), r.task_type, count(*)"
            " FROM sk_attempts_t a JOIN sk_task_results_t r USING (task_id) GROUP BY 1, 2",
        ),
        "failed_recoverable": _from_rows(
            conn,
            "SELECT date_trunc('minute', a.ended_at_ts), r.task_type, count(*)"
            " FROM sk_attempts_t a JOIN sk_task_results_t r USING (task_id)"
            " WHERE a.status = 4 GROUP BY 1, 2",
        ),
    }

    for name, counted in rows.items():
        recorded = _from_record(rec, lambda c, name=name: int(getattr(c, name)))  # type: ignore[misc]
        assert recorded == counted, name
    assert rec.total().posted == TOTAL
    assert rec.total().started == TOTAL + 2 * (TOTAL // 20)
    assert rec.total().wait.count == rec.total().started
