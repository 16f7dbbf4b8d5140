"""Limits across real worker processes: two workers of concurrency 20 each never run
more of a limited type than its limit, other types keep flowing, and a change
applies without restarting them."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from skconsole import ops
from skconsole.ops import Actor, LimitParams, Rate, Selection
from tests.db.test_limits import LIMITED, OTHER, post
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
ACTOR = Actor(user="tester", host="test-host")
SAMPLE_S = 0.02


def set_limit(conn: Conn, **kw: Any) -> None:
    ops.LIMIT.execute(conn, Selection(task_type=LIMITED), LimitParams(**kw), actor=ACTOR)


def count(conn: Conn, task_type: str, status: int) -> int:
    row = conn.execute(
        "SELECT count(*) FROM sk_task_results_t WHERE task_type = %s AND task_status = %s",
        (task_type, status),
    ).fetchone()
    return int(row[0]) if row else 0


def waiting(conn: Conn, task_type: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM sk_tasks_queue_t WHERE task_type = %s", (task_type,)
    ).fetchone()
    return int(row[0]) if row else 0


@pytest.fixture
def workers(start_worker: Callable[..., Any]) -> Callable[[], None]:
    """Start two worker processes of concurrency 20 for both types."""

    def start() -> None:
        for _ in range(2):
            start_worker(
                "--tasks", "tests.support.tasks_limits", "--concurrency", "20", "--poll", "100ms"
            )

    return start


def sample_running(conn: Conn, until: Callable[[], bool], timeout: float = 60.0) -> Iterator[int]:
    """The limited type's jobs in 2 Processing, every ~20 ms, until ``until()``."""
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, "the limited type did not drain in time"
        yield count(conn, LIMITED, 2)
        time.sleep(SAMPLE_S)


def test_two_workers_never_run_more_of_a_type_than_its_concurrency_limit(
    conn: Conn, workers: Callable[[], None]
) -> None:
    set_limit(conn, concurrency=2)
    post(conn, LIMITED, 100)
    workers()

    samples = list(sample_running(conn, lambda: count(conn, LIMITED, 3) == 100))

    assert max(samples) == 2  # reached, never passed
    assert len(samples) > 100


def test_other_types_keep_flowing_while_a_limited_type_is_full(
    conn: Conn, workers: Callable[[], None]
) -> None:
    set_limit(conn, concurrency=2)
    post(conn, LIMITED, 100)
    workers()
    wait_until(lambda: count(conn, LIMITED, 2) == 2, timeout=30)

    post(conn, OTHER, 200)

    wait_until(lambda: count(conn, OTHER, 3) == 200, timeout=10)
    assert waiting(conn, LIMITED) > 50  # the limited type still had most of its backlog


def test_a_rate_limit_lets_at_most_n_claims_through_per_window(
    conn: Conn, workers: Callable[[], None]
) -> None:
    set_limit(conn, rate=Rate(5, 1.0))
    post(conn, LIMITED, 20)
    workers()
    wait_until(lambda: count(conn, LIMITED, 3) == 20, timeout=30)

    starts = [
        r[0]
        for r in conn.execute(
            "SELECT extract(epoch FROM task_first_processing_attempted_at_ts)::float8"
            " FROM sk_task_results_t WHERE task_type = %s ORDER BY 1",
            (LIMITED,),
        )
    ]
    windows: list[list[float]] = []
    for at in starts:  # a window opens with the first claim after the last one ended
        if windows and at < windows[-1][0] + 1.0:
            windows[-1].append(at)
        else:
            windows.append([at])
    assert max(len(w) for w in windows) == 5
    assert len(windows) >= 4


def test_a_cleared_limit_lets_the_type_run_at_full_speed(
    conn: Conn, workers: Callable[[], None]
) -> None:
    set_limit(conn, concurrency=1)
    post(conn, LIMITED, 100)
    workers()
    wait_until(lambda: count(conn, LIMITED, 3) >= 2, timeout=30)

    set_limit(conn, clear_concurrency=True)

    samples = list(sample_running(conn, lambda: count(conn, LIMITED, 3) == 100, timeout=10))
    assert max(samples) > 10


def test_a_changed_limit_applies_without_restarting_the_workers(
    conn: Conn, workers: Callable[[], None]
) -> None:
    set_limit(conn, concurrency=1)
    post(conn, LIMITED, 100)
    workers()
    wait_until(lambda: count(conn, LIMITED, 3) >= 2, timeout=30)

    set_limit(conn, concurrency=4)

    samples = list(sample_running(conn, lambda: count(conn, LIMITED, 3) == 100))
    assert max(samples) == 4
