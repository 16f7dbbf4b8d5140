"""The console, check and the reading commands on a hot standby.

Each test starts a primary and a streaming standby of its own
(:mod:`tests.support.replication`); workers run on the primary, the console and
the commands read the standby. A standby sees none of the primary's locks, so
a worker's liveness there is its lease alone (its row, replayed): a live worker
is alive, never "connection lost", and a killed one is gone once its lease
lapses, as on the primary. Writes go to the primary when one is named beside
the standby (``--read-dsn``), and are refused in one line when only the standby is.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from skconsole import ops
from skconsole.db.connect import Database
from skconsole.producer import Job, Producer
from skconsole.tui import model
from skconsole.tui.database_source import DatabaseSource
from skconsole.tui.launch import ConsoleOptions, reading_databases
from skconsole.tui.reads import SNAPSHOT
from skconsole.tui.widgets.status_bar import replication_text
from tests.db.test_cli_errors import assert_one_line_error
from tests.support.replication import ReplicatedPair, bin_dir
from tests.support.tasks_faults import SHORT_LEASE
from tests.support.waiting import wait_until

pytestmark = pytest.mark.skipif(bin_dir() is None, reason="no PostgreSQL binaries to start a pair")

#: the shortest lease: a killed worker is gone after 6 s (lease + margin)
LEASE_AND_MARGIN_S = 6.0
LONG_S = 60.0
CLI = Callable[..., subprocess.CompletedProcess[str]]


def _post(pair: ReplicatedPair, long: int, waiting: int) -> None:
    """Jobs posted on the primary, once the standby has replayed them (and the schema: a
    read of the standby before that finds no tables)."""
    with Producer(Database(pair.primary.dsn)) as p:
        p.post_many([Job("slow-async", LONG_S) for _ in range(long)])
        p.post_many([Job("nobody-runs-this", i) for i in range(waiting)])
    wait_until(lambda: _replayed(pair), 30, lambda: "not replayed")


def _snapshot(dsn: str) -> model.Snapshot:
    source = DatabaseSource(Database(dsn, read_only=True))
    try:
        return source.read(SNAPSHOT)
    finally:
        source.close()


def _seen(snap: model.Snapshot) -> tuple[Any, ...]:
    """What the console shows that the primary and the standby must agree on."""
    depth = sorted((d.task_type, d.ready, d.in_flight) for d in snap.depth)
    inflight = sorted((str(j.task_id), j.state.value, j.hung) for j in snap.inflight)
    workers = sorted((str(w.worker_id), w.state.value) for w in snap.workers)
    return depth, inflight, workers


def _replayed(pair: ReplicatedPair) -> bool:
    with psycopg.connect(pair.primary.dsn, autocommit=True) as c:
        row = c.execute(
            "SELECT bool_and(replay_lsn >= pg_current_wal_lsn()) FROM pg_stat_replication"
        ).fetchone()
    return bool(row and row[0])


def test_on_a_standby_the_console_shows_depth_in_flight_and_workers_as_the_primary_does(
    pair: ReplicatedPair, spawn: Callable[..., Any]
) -> None:
    _post(pair, long=2, waiting=30)
    worker = spawn("--dsn", pair.primary.dsn, "--lease", SHORT_LEASE, "--types", "slow-async")
    wait_until(
        lambda: len(_snapshot(pair.primary.dsn).inflight) == 2, 60, lambda: worker.drain.tail()
    )

    def agree() -> bool:
        return _seen(_snapshot(pair.primary.dsn)) == _seen(_snapshot(pair.standby.dsn))

    wait_until(agree, 30, lambda: f"{_seen(_snapshot(pair.standby.dsn))}")
    on_standby = _snapshot(pair.standby.dsn)

    assert [w.state.value for w in on_standby.workers] == ["alive"]
    assert [w.connected for w in on_standby.workers] == [None]  # a standby cannot tell
    assert {j.state.value for j in on_standby.inflight} == {"running"}
    assert {(d.task_type, d.ready) for d in on_standby.depth} >= {("nobody-runs-this", 30)}
    assert on_standby.replication is not None and on_standby.replication.standby
    line = replication_text(on_standby.replication)
    assert line is not None and line.endswith("ago on standby"), line


def test_a_worker_killed_shows_gone_and_its_jobs_hung_on_the_standby_within_its_lease(
    pair: ReplicatedPair, spawn: Callable[..., Any]
) -> None:
    _post(pair, long=2, waiting=0)
    worker = spawn("--dsn", pair.primary.dsn, "--lease", SHORT_LEASE)
    wait_until(
        lambda: len(_snapshot(pair.standby.dsn).inflight) == 2, 60, lambda: worker.drain.tail()
    )

    os.killpg(worker.pid, signal.SIGKILL)
    killed = time.monotonic()
    worker.wait(10)

    def lost() -> bool:
        snap = _snapshot(pair.standby.dsn)
        return [w.state.value for w in snap.workers] == ["gone"] and all(
            j.hung for j in snap.inflight
        )

    wait_until(lost, 60, lambda: f"{_seen(_snapshot(pair.standby.dsn))}", interval=0.2)
    seen_after = time.monotonic() - killed
    print(f"\nthe standby's console saw the killed worker gone {seen_after:.1f}s after SIGKILL")
    assert seen_after <= LEASE_AND_MARGIN_S + 3.0  # + replay, a refresh and a heartbeat


def test_check_on_a_standby_counts_the_primarys_live_workers(
    pair: ReplicatedPair, spawn: Callable[..., Any], run_cli: CLI
) -> None:
    _post(pair, long=1, waiting=0)
    worker = spawn("--dsn", pair.primary.dsn, "--lease", SHORT_LEASE)
    wait_until(
        lambda: len(_snapshot(pair.standby.dsn).inflight) == 1, 60, lambda: worker.drain.tail()
    )

    proc = run_cli("--dsn", pair.standby.dsn, "check", use_dsn=False)

    assert proc.returncode == 0, proc.stdout
    assert "alive_workers=1" in proc.stdout, proc.stdout


def test_an_action_on_a_standby_alone_is_refused_with_one_line_naming_the_primary(
    pair: ReplicatedPair, run_cli: CLI
) -> None:
    _post(pair, long=0, waiting=3)

    proc = run_cli(
        "--dsn",
        pair.standby.dsn,
        "bump",
        "--type",
        "nobody-runs-this",
        "--to",
        "5",
        "--yes",
        use_dsn=False,
    )

    assert_one_line_error(proc, "read-only standby", "--read-dsn")
    assert proc.returncode == 5


def test_the_console_on_a_standby_alone_is_read_only(pair: ReplicatedPair) -> None:
    wait_until(lambda: _replayed(pair), 30, lambda: "not replayed")
    db = Database(pair.standby.dsn, application_name="skconsole-console")

    reads, writes = reading_databases(ConsoleOptions(dsn=pair.standby.dsn), db)

    assert reads is writes and writes.read_only
    assert DatabaseSource(reads, writes=writes).read_only


def test_with_a_read_dsn_the_console_reads_the_standby_and_writes_to_the_primary(
    pair: ReplicatedPair,
) -> None:
    _post(pair, long=0, waiting=5)
    primary = Database(pair.primary.dsn, application_name="skconsole-console")
    options = ConsoleOptions(dsn=pair.primary.dsn, read_dsn=pair.standby.dsn)
    reads, writes = reading_databases(options, primary)
    source = DatabaseSource(reads, writes=writes)
    pair.freeze_replication()  # the standby stops here: what it shows is older
    with Producer(Database(pair.primary.dsn)) as p:
        p.post_many([Job("nobody-runs-this", i) for i in range(7)])

    try:
        ready = {d.task_type: d.ready for d in source.read(SNAPSHOT).depth}
        target = model.Target("type", model.TargetKind.TYPE_JOBS, task_type="nobody-runs-this")
        request = model.ActionRequest(ops.BUMP, target, ops.BumpParams(to=5))
        preview = source.preview(request)
        outcome = source.execute(preview, "tester")
    finally:
        source.close()

    assert not source.read_only
    assert ready["nobody-runs-this"] == 5, "read on the frozen standby"
    assert preview.count == 12, "previewed on the primary"
    assert outcome.changed == 12
    with psycopg.connect(pair.primary.dsn, autocommit=True) as c:
        row = c.execute("SELECT count(*) FROM sk_tasks_queue_t WHERE task_priority = 5").fetchone()
    assert row is not None and row[0] == 12


def test_reading_commands_with_a_read_dsn_read_the_standby_and_actions_write_the_primary(
    pair: ReplicatedPair, run_cli: CLI
) -> None:
    _post(pair, long=0, waiting=5)
    pair.freeze_replication()
    with Producer(Database(pair.primary.dsn)) as p:
        p.post_many([Job("nobody-runs-this", i) for i in range(7)])
    both = ("--dsn", pair.primary.dsn, "--read-dsn", pair.standby.dsn)

    status = run_cli(*both, "status", "depth", "--json", use_dsn=False)
    bumped = run_cli(
        *both, "bump", "--type", "nobody-runs-this", "--to", "5", "--yes", use_dsn=False
    )

    assert status.returncode == 0, status.stderr
    ready = {d["task_type"]: d["ready"] for d in json.loads(status.stdout)["types"]}
    assert ready["nobody-runs-this"] == 5, "read on the frozen standby"
    assert bumped.returncode == 0, bumped.stderr
    with psycopg.connect(pair.primary.dsn, autocommit=True) as c:
        row = c.execute("SELECT count(*) FROM sk_tasks_queue_t WHERE task_priority = 5").fetchone()
    assert row is not None and row[0] == 12, "bumped on the primary"
