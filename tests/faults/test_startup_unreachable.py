"""A worker started while the server cannot be reached waits for it, and stops when told.

The worker reaches the server through a proxy the test controls: down (nothing
listens: every attempt is refused) or frozen (an attempt is accepted and then
hears nothing until it times out).
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skconsole.core.status import JobStatus
from skconsole.producer import Job, Producer
from tests.support.netproxy import FreezableProxy
from tests.support.tasks_faults import (
    all_final,
    completions,
    status_counts,
    stop_gracefully,
    wait_exit,
)
from tests.support.waiting import wait_until

#: the path to the server is cut: the server is part of what this checks
pytestmark = pytest.mark.server


def _attempts(w: Any) -> int:
    return sum("server unreachable (attempt" in line for line in w.drain.lines)


def test_a_worker_started_while_the_server_is_down_keeps_trying_and_runs_the_jobs_once_it_is_up(
    db: Any,
    conn: psycopg.Connection[Any],
    spawn: Callable[..., Any],
    log_dir: Path,
    proxy: FreezableProxy,
) -> None:
    with Producer(db) as p:
        ids = p.post_many([Job("ok", None) for _ in range(5)]).ids
    proxy.down()
    w = spawn("--dsn", proxy.dsn, "--concurrency", "5")
    wait_until(lambda: _attempts(w) >= 3 or w.poll() is not None, 60, w.drain.tail)
    assert w.poll() is None, "gave up while the server was down\n" + w.drain.tail()

    proxy.up()
    wait_until(lambda: all_final(conn), 60, lambda: f"{status_counts(conn)}\n{w.drain.tail()}")
    assert status_counts(conn) == {JobStatus.PROCESSED: 5}
    assert completions(log_dir) == {str(i): 1 for i in ids}
    stop_gracefully(w)


def test_sigterm_while_a_worker_waits_for_the_server_ends_it_with_exit_code_0(
    spawn: Callable[..., Any], proxy: FreezableProxy
) -> None:
    """Frozen: the worker's first attempt is accepted and then hangs (until its
    connect timeout); SIGTERM in the middle of it ends the worker, nothing claimed."""
    proxy.freeze()
    w = spawn("--dsn", proxy.dsn)
    wait_until(lambda: proxy.accepted >= 1, 60, w.drain.tail)
    w.send_signal(signal.SIGTERM)
    code = wait_exit(w, 60)  # a guard: it ends at once
    assert code == 0, w.drain.tail()
    assert any("before the server was reached" in line for line in w.drain.lines), w.drain.tail()
