"""Limits per key across real worker processes: two workers of concurrency 10 each, 20
keys limited to 1 running each (so neither worker can take every key alone: both take
part); every run recorded by the server's clock proves by
counting that no two runs of one key overlapped and that every job ran once, also
when a worker is SIGKILLed mid-run and its jobs come back through its lease."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import psycopg
import pytest

from skconsole import ops
from skconsole.ops import Actor, LimitParams, Selection
from tests.support.tasks_keys import TYPE
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
ACTOR = Actor(user="tester", host="test-host")
KEYS = [f"customer-{i:02d}" for i in range(20)]
Run = tuple[str, str, int, datetime, datetime | None]  # task, key, pid, started, ended


@pytest.fixture
def runs_table(conn: Conn) -> Iterator[None]:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS sk_test_key_runs (run_id uuid PRIMARY KEY, task_id uuid,"
        " key text, pid integer, started timestamptz NOT NULL DEFAULT clock_timestamp(),"
        " ended timestamptz)"
    )
    conn.execute("TRUNCATE sk_test_key_runs")
    yield
    conn.execute("DROP TABLE IF EXISTS sk_test_key_runs")
    for (name,) in conn.execute(
        "SELECT relname FROM pg_class WHERE relkind = 'i' AND relname LIKE 'sk\\_key\\_%%'"
    ).fetchall():
        conn.execute(f'DROP INDEX IF EXISTS "{name}"')


@pytest.fixture
def workers(
    start_worker: Callable[..., Any], dsn: str, runs_table: None
) -> Callable[[], list[Any]]:
    """Start two worker processes of concurrency 10: half the keys each at most, so both
    always run jobs (one of concurrency 20 could take every key and leave the other idle)."""

    def start() -> list[Any]:
        return [
            start_worker(
                "--tasks",
                "tests.support.tasks_keys",
                "--concurrency",
                "10",
                "--poll",
                "100ms",
                "--lease",
                "5s",  # the shortest: a killed worker's jobs come back sooner
                env={"SKTEST_RUNS_DSN": dsn},
            )
            for _ in range(2)
        ]

    return start


def post(conn: Conn, per_key: int, seconds: float) -> None:
    """``per_key`` jobs of each key, ready now, the keys interleaved."""
    conn.execute(
        "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,"
        " task_priority, task_posted_at_ts, task_locked_until_ts)"
        " SELECT gen_random_uuid(), %s, 'test', json_build_object('customer', k, 's', %s::float8),"
        " 0, now(), now() - interval '1 s' FROM unnest(%s::text[]) AS k, generate_series(1, %s)",
        (TYPE, seconds, KEYS, per_key),
    )


def limit_per_customer(conn: Conn) -> None:
    ops.LIMIT.execute(
        conn, Selection(task_type=TYPE), LimitParams(concurrency=1, per=("customer",)), actor=ACTOR
    )


def processed(conn: Conn) -> int:
    row = conn.execute(
        "SELECT count(*) FROM sk_task_results_t WHERE task_type = %s AND task_status = 3", (TYPE,)
    ).fetchone()
    return int(row[0]) if row else 0


def all_runs(conn: Conn) -> list[Run]:
    return [
        (str(r[0]), r[1], r[2], r[3], r[4])
        for r in conn.execute(
            "SELECT task_id, key, pid, started, ended FROM sk_test_key_runs ORDER BY started"
        ).fetchall()
    ]


def overlaps(runs: list[Run], killed_at: datetime | None = None) -> list[tuple[Run, Run]]:
    """Pairs of runs of one key where the second started before the first ended (a run
    without an end was its killed worker's: it ended by ``killed_at``)."""
    found = []
    last: dict[str, Run] = {}
    for run in runs:  # by start
        before = last.get(run[1])
        if before is not None:
            ended = before[4] or killed_at
            if ended is None or run[3] < ended:
                found.append((before, run))
        last[run[1]] = run
    return found


def test_two_workers_never_run_two_jobs_of_one_key_at_once(
    conn: Conn, workers: Callable[[], list[Any]]
) -> None:
    limit_per_customer(conn)
    post(conn, per_key=5, seconds=0.05)
    workers()

    wait_until(lambda: processed(conn) == 100, timeout=120)

    runs = all_runs(conn)
    assert overlaps(runs) == []
    assert len(runs) == 100 and len({r[0] for r in runs}) == 100  # each job ran exactly once
    assert len({r[2] for r in runs}) == 2  # both workers took part
    # the keys ran side by side: 20 keys of 5 runs each, not one long line
    first_end = min(r[4] for r in runs if r[4] is not None)
    assert sum(r[3] < first_end for r in runs) > 5


def test_a_killed_workers_jobs_come_back_through_its_lease_and_the_limit_still_holds(
    conn: Conn, workers: Callable[[], list[Any]]
) -> None:
    limit_per_customer(conn)
    post(conn, per_key=2, seconds=1.5)
    a, _b = workers()
    wait_until(
        lambda: (
            conn.execute(
                "SELECT count(*) FROM sk_test_key_runs WHERE pid = %s AND ended IS NULL", (a.pid,)
            ).fetchone()
            >= (1,)
        ),
        timeout=60,
    )

    os.killpg(a.pid, signal.SIGKILL)
    a.wait(10)
    killed_at = conn.execute("SELECT clock_timestamp()").fetchone()[0]  # type: ignore[index]

    wait_until(lambda: processed(conn) == 40, timeout=120)
    runs = all_runs(conn)
    cut_short = [r for r in runs if r[4] is None]
    assert cut_short and all(r[2] == a.pid for r in cut_short)
    assert overlaps(runs, killed_at) == []
    finished = [r for r in runs if r[4] is not None]
    # every job ran to its end exactly once: the killed ones again, after the kill
    assert sorted(r[0] for r in finished) == sorted({r[0] for r in runs})
    assert len(finished) == 40
    again = {r[0] for r in cut_short}
    assert all(r[3] > killed_at for r in finished if r[0] in again)
