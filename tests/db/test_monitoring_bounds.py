"""The bound of a monitoring read: an exporter cycle and ``skconsole check`` end on time.

A cycle that has not ended within its timeout is given up: a scrape gets
``skconsole_exporter_up 0`` and no queue figure, one line says what timed out,
its connection is shut down (the server ends that session) and the next cycle
connects anew; whatever the given-up cycle read afterwards is never published.
``check`` answers UNKNOWN within its ``--timeout``. (The same through a silent
network partition: tests/faults/test_monitoring_partition.py.)
"""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from prometheus_client.metrics_core import Metric

from skconsole.db.connect import Database
from skconsole.exporter import Exporter
from skconsole.exporter.sources import read_depth
from skconsole.producer import Producer
from tests.support.rows import one_row
from tests.support.waiting import wait_until

from ..conftest import ROOT, skconsole_cmd

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]
TIMEOUT_S = 1.0
#: what a bound may overrun by on a busy test machine
MARGIN_S = 15.0


class Gate:
    """A source that holds its cycle up (client-side, as a silent socket would) while
    closed, and says which backend the cycle reads on."""

    __name__ = "gate"  # what the exporter calls the source in its log line

    def __init__(self) -> None:
        self.open = threading.Event()
        self.open.set()
        self.pids: list[int] = []

    def __call__(self, conn: Conn) -> list[Metric]:
        self.pids.append(conn.info.backend_pid)
        self.open.wait(60)
        return []


@pytest.fixture
def gate() -> Iterator[Gate]:
    g = Gate()
    yield g
    g.open.set()  # let a held-up cycle's thread end


def served(exporter: Exporter) -> dict[str, float]:
    """What a scrape would get now: each family's name and its first sample's value."""
    return {m.name: (m.samples[0].value if m.samples else 0.0) for m in exporter.collect()}


def blind(exporter: Exporter) -> bool:
    now = served(exporter)
    return now["skconsole_exporter_up"] == 0 and "skconsole_queue_jobs" not in now


def exporter_with_gate(dsn: str, db: Database, gate: Gate) -> Exporter:
    with Producer(db) as p:
        p.post("t.bound")
    exporter = Exporter(
        Database(dsn), interval_s=1.0, sources=[read_depth, gate], timeout_s=TIMEOUT_S
    )
    assert exporter.cycle().up and "skconsole_queue_jobs" in served(exporter)
    return exporter


def backend_alive(conn: Conn, pid: int) -> bool:
    conn.execute("SELECT pg_stat_clear_snapshot()")
    return (
        conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone() is not None
    )


def test_a_scrape_during_a_held_up_cycle_gets_up_0_and_no_queue_figures_once_its_timeout_passed(
    dsn: str, db: Database, gate: Gate
) -> None:
    exporter = exporter_with_gate(dsn, db, gate)
    gate.open.clear()
    exporter.start()
    try:
        wait_until(lambda: blind(exporter), timeout=TIMEOUT_S + MARGIN_S)
    finally:
        gate.open.set()
        exporter.stop(MARGIN_S)


def test_a_held_up_cycle_logs_one_line_naming_what_timed_out(
    dsn: str, db: Database, gate: Gate, caplog: pytest.LogCaptureFixture
) -> None:
    exporter = exporter_with_gate(dsn, db, gate)
    gate.open.clear()

    with caplog.at_level(logging.WARNING, logger="skconsole.exporter"):
        snapshot = exporter.cycle()

    assert (snapshot.up, snapshot.families) == (False, ())
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1, lines
    assert "skconsole_exporter_up is 0: timed out after 1s reading gate" in lines[0]


def test_a_given_up_cycles_figures_are_never_published_when_it_ends_late(
    dsn: str, db: Database, gate: Gate
) -> None:
    exporter = exporter_with_gate(dsn, db, gate)
    gate.open.clear()
    given_up = exporter.cycle()
    gate.open.set()  # the held-up read goes on and ends now, past its bound

    wait_until(lambda: not exporter_has_reader(), timeout=MARGIN_S)

    assert exporter.snapshot is given_up
    assert blind(exporter)


def exporter_has_reader() -> bool:
    return any(t.name == "skconsole-exporter-cycle" for t in threading.enumerate())


def test_a_given_up_cycles_session_ends_and_the_next_cycle_reads_on_a_new_one(
    dsn: str, db: Database, conn: Conn, gate: Gate
) -> None:
    exporter = exporter_with_gate(dsn, db, gate)
    gate.open.clear()
    exporter.cycle()
    (held_up,) = set(gate.pids)
    gate.open.set()

    wait_until(lambda: not backend_alive(conn, held_up), timeout=MARGIN_S)
    again = exporter.cycle()

    assert again.up
    assert gate.pids[-1] != held_up


def test_the_exporters_sessions_carry_its_timeout_on_the_server(dsn: str) -> None:
    seen: list[tuple[Any, ...]] = []

    def settings(conn: Conn) -> list[Metric]:
        row = one_row(
            conn,
            "SELECT current_setting('statement_timeout'),"
            " current_setting('idle_in_transaction_session_timeout')",
        )
        seen.append(row)
        return []

    exporter = Exporter(Database(dsn), interval_s=60, sources=[settings], timeout_s=3.0)

    assert exporter.cycle().up
    assert seen == [("3s", "3s")]


# -- check ------------------------------------------------------------------------------------
def test_check_is_unknown_within_its_timeout_when_the_server_holds_it_up(
    dsn: str, conn: Conn
) -> None:
    with psycopg.connect(dsn, autocommit=True, application_name="sk-test-locker") as locker:
        locker.execute("BEGIN")
        locker.execute("LOCK TABLE sk_tasks_queue_t IN ACCESS EXCLUSIVE MODE")
        done = subprocess.run(
            skconsole_cmd("--dsn", dsn, "check", "--timeout", "2s"),
            capture_output=True,
            text=True,
            timeout=2 + MARGIN_S,
            cwd=ROOT,
        )
        locker.execute("ROLLBACK")

    assert done.returncode == 3, done
    assert done.stdout.startswith("SKCONSOLE UNKNOWN - "), done.stdout
    assert len(done.stdout.strip().splitlines()) == 1 and done.stderr == "", done


def test_check_timeout_out_of_bounds_is_unknown_in_one_line(run_cli: CLI) -> None:
    done = run_cli("check", "--timeout", "0")

    assert done.returncode == 3, done
    assert done.stdout == "SKCONSOLE UNKNOWN - --timeout must be between 1s and 1h, got '0'\n"


def test_exporter_timeout_out_of_bounds_is_a_one_line_error(run_cli: CLI) -> None:
    done = run_cli("exporter", "--timeout", "2h")

    assert done.returncode == 2, done
    assert "--timeout must be between 1s and 1h" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
