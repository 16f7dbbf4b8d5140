"""Monitoring through a silent partition: it must say it cannot see, within its bound.

The exporter and ``skconsole check`` reach the server through a proxy the test
freezes (no RST: their connections just go silent, and the kernel of the proxy
even acknowledges what they send, so TCP keepalives never notice on this path).
Only their own client-side deadline can tell. Past it the exporter serves
``skconsole_exporter_up 0`` without any queue figure (stale figures would keep
every alert quiet) and logs what timed out; ``check`` answers UNKNOWN (exit 3).
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from skconsole.producer import Job, Producer
from tests.conftest import ROOT, skconsole_cmd
from tests.db.test_exporter import exporter_process, queue_jobs, scrape
from tests.support.netproxy import FreezableProxy
from tests.support.waiting import wait_until

#: so .ci/run runs it against every server it tests
pytestmark = pytest.mark.server

#: what a bound may overrun by on a busy test machine (process start, scheduling)
MARGIN_S = 15.0
CYCLE_S = 1.0
#: the bound the reads run with: shorter than the default 10 s, which behaves the same
TIMEOUT_S = 3.0


@contextlib.contextmanager
def queue_table_locked(dsn: str) -> Iterator[psycopg.Connection[Any]]:
    """The queue table locked by a session of the test (ACCESS EXCLUSIVE) until the block
    ends or the test rolls it back: a reader of the queue waits on the server meanwhile."""
    with psycopg.connect(dsn, autocommit=True, application_name="sk-test-locker") as locker:
        locker.execute("BEGIN")
        locker.execute("LOCK TABLE sk_tasks_queue_t IN ACCESS EXCLUSIVE MODE")
        yield locker
        with contextlib.suppress(psycopg.Error):
            locker.execute("ROLLBACK")


def waits_for_a_lock(conn: psycopg.Connection[Any], application: str) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
        " AND wait_event_type = 'Lock' AND datname = current_database()",
        (application,),
    ).fetchone()
    return row is not None and row[0] > 0


def test_the_exporter_serves_up_0_without_queue_figures_once_a_partition_outlasts_its_timeout(
    db: Any, proxy: FreezableProxy
) -> None:
    with Producer(db) as p:
        p.post_many([Job("t.part") for _ in range(3)])
    args = (
        "--dsn",
        proxy.dsn,
        "exporter",
        "--port",
        "0",
        "--interval",
        f"{CYCLE_S:g}s",
        "--timeout",
        f"{TIMEOUT_S:g}s",
    )

    with exporter_process(*args) as (proc, port):
        wait_until(
            lambda: scrape(port)["skconsole_exporter_up"][()] == 1,
            MARGIN_S,
            lambda: scrape(port),
        )
        assert queue_jobs(scrape(port))[("t.part", "ready")] == 3
        proxy.freeze()

        def blind() -> bool:
            s = scrape(port)
            return s["skconsole_exporter_up"][()] == 0 and "skconsole_queue_jobs" not in s

        took = wait_until(blind, TIMEOUT_S + CYCLE_S + MARGIN_S, lambda: scrape(port))
        after = scrape(port)
        assert proc.poll() is None
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    print(f"\nup 0 {took:.1f}s into the partition; the exporter logged:\n{stderr}")

    assert not any(name.startswith("skconsole_table_") for name in after), sorted(after)
    assert "timed out" in stderr, stderr
    assert "Traceback" not in stderr, stderr


def test_check_is_unknown_within_its_timeout_when_the_partition_swallows_an_answer(
    dsn: str, conn: psycopg.Connection[Any], proxy: FreezableProxy
) -> None:
    """The server answers (the lock is released after the freeze), but the answer never
    arrives: statement_timeout cannot help, only check's own deadline."""
    with queue_table_locked(dsn) as locker:
        proc = subprocess.Popen(
            skconsole_cmd("--dsn", proxy.dsn, "check", "--timeout", f"{TIMEOUT_S:g}s"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        try:
            wait_until(lambda: waits_for_a_lock(conn, "skconsole-check"), 60, proc.poll)
            proxy.freeze()
            frozen_at = time.monotonic()
            locker.execute("ROLLBACK")
            out, err = proc.communicate(timeout=TIMEOUT_S + MARGIN_S)
            print(f"\ncheck exited {time.monotonic() - frozen_at:.1f}s into the partition: {out}")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)

    assert proc.returncode == 3, (out, err)
    assert out.startswith("SKCONSOLE UNKNOWN - "), out
    assert "timed out" in out, out
    assert len(out.strip().splitlines()) == 1 and err == "", (out, err)
