"""A failover: the primary crashes, a lagging standby is promoted, nothing runs twice at once.

Each test starts a primary and a streaming standby of its own
(:mod:`tests.support.replication`, the machine's PostgreSQL binaries) and
workers on a multi-host DSN (``target_session_attrs=read-write``), which
reconnect to whichever server is writable. The replication link is frozen
before the workers claim, so every claim they make on the old primary is lost
with it: on the promoted standby those jobs look waiting while their first
executions still run. Handlers log each execution's start, end and fencing
token (``token-async``).

- a worker that reaches the new primary at once finds out, at its first lease
  renewal there, that the database lost its claims, and stops those runs before
  the new primary hands the jobs out again (claims are held for lease + margin
  after the new timeline is first seen);
- a worker that cannot reach it fences itself at lease - margin, as in a
  partition, before the hold ends;
- fencing tokens carry the timeline: the sequence rolled back with the WAL,
  yet no token is handed out twice;
- with synchronous replication no acknowledged post is lost.

Leases are the shortest (5 s: a 6 s hold), so each test takes about half a minute.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skconsole.db.connect import Database
from skconsole.db.schema import setup_schema
from skconsole.producer import Job, Producer
from skconsole.tui.database_source import DatabaseSource
from skconsole.tui.reads import SNAPSHOT
from skconsole.tui.widgets.status_bar import failover_text
from skconsole.worker.jobs import token_timeline
from tests.conftest import ROOT, skconsole_cmd
from tests.db.test_exporter import one_cycle
from tests.support.failover_drill import Poster, tokens_given_twice
from tests.support.netproxy import FreezableProxy
from tests.support.replication import ReplicatedPair, bin_dir
from tests.support.tasks_faults import SHORT_LEASE, Execution, executions, overlaps
from tests.support.waiting import wait_until

pytestmark = pytest.mark.skipif(bin_dir() is None, reason="no PostgreSQL binaries to start a pair")

#: lease + margin of a 5 s lease: how long claims are held on the new timeline
HOLD_S = 6.0
#: long enough to still run when the hold ends, had its worker not stopped it
LONG_S = 10.0
LONG_JOBS = 4
SHORT_JOBS = 200


def _post(dsn: str) -> tuple[list[Any], list[Any]]:
    with Producer(dsn) as p:
        long = p.post_many([Job("token-async", LONG_S) for _ in range(LONG_JOBS)]).ids
        short = p.post_many([Job("token-async", 0) for _ in range(SHORT_JOBS)]).ids
    return list(long), list(short)


def _replayed(pair: ReplicatedPair, ids: list[Any]) -> bool:
    """Every one of ``ids`` is on the standby (False while even the schema is not yet:
    a loaded machine replays the setup later than the posts return)."""
    with psycopg.connect(pair.standby.dsn, autocommit=True) as c:
        if c.execute("SELECT to_regclass('sk_task_results_t') IS NULL").fetchone() == (True,):
            return False
        row = c.execute(
            "SELECT count(*) FROM sk_task_results_t WHERE task_id = ANY(%s)", (ids,)
        ).fetchone()
    return bool(row and row[0] == len(ids))


def _unfinished(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute(
            "SELECT (SELECT count(*) FROM sk_task_results_t WHERE task_status <> 3)"
            " + (SELECT count(*) FROM sk_tasks_queue_t)"
        ).fetchone()
    return int(row[0]) if row else -1


def _started(log_dir: Path, ids: list[Any]) -> bool:
    runs = executions(log_dir, deaths={})
    return all(str(i) in runs for i in ids)


def _first_start_after(runs: dict[str, list[Execution]], moment: float) -> float:
    return min(r.started for job in runs.values() for r in job if r.started > moment) - moment


def _crash_and_promote(pair: ReplicatedPair) -> float:
    pair.crash_primary()
    pair.promote()
    return time.time()


def _describe(*workers: Any) -> Callable[[], str]:
    return lambda: "\n".join(f"--- worker {w.pid}:\n{w.drain.tail(25)}" for w in workers)


def test_claims_a_failover_lost_are_not_run_again_until_their_first_runs_have_stopped(
    pair: ReplicatedPair, spawn: Callable[..., Any], log_dir: Path
) -> None:
    long, short = _post(pair.primary.dsn)
    wait_until(lambda: _replayed(pair, long + short), 30, lambda: "the standby never caught up")
    pair.freeze_replication()  # from here on, what the primary commits is lost
    workers = [spawn("--dsn", pair.multi_host_dsn, "--lease", SHORT_LEASE) for _ in range(2)]
    wait_until(lambda: _started(log_dir, long), 60, _describe(*workers))

    promoted = _crash_and_promote(pair)
    wait_until(lambda: _unfinished(pair.standby.dsn) == 0, 90, _describe(*workers))

    runs = executions(log_dir)
    resumed = _first_start_after(runs, promoted)
    print(f"\nthe first job started {resumed:.1f}s after the promotion (hold {HOLD_S:g}s)")
    for task_id in long:
        job_runs = runs[str(task_id)]
        # the first run, stopped when its worker found the claim lost; the second, whole
        assert len(job_runs) == 2, job_runs
        assert overlaps(job_runs) == [], job_runs
        assert job_runs[0].ended - job_runs[0].started < LONG_S, job_runs
        assert token_timeline(int(job_runs[1].note)) == 2, job_runs
    assert all(overlaps(job_runs) == [] for job_runs in runs.values())
    assert tokens_given_twice(runs) == {}
    assert resumed >= HOLD_S
    assert any("has lost the claims of" in line for w in workers for line in w.drain.lines)
    assert all(w.poll() is None for w in workers), _describe(*workers)()


def test_a_worker_that_cannot_reach_the_new_primary_stops_its_jobs_before_the_hold_ends(
    pair: ReplicatedPair, spawn: Callable[..., Any], log_dir: Path
) -> None:
    long, short = _post(pair.primary.dsn)
    wait_until(lambda: _replayed(pair, long + short), 30, lambda: "the standby never caught up")
    to_primary = FreezableProxy(pair.primary.dsn).start()
    to_standby = FreezableProxy(pair.standby.dsn).start()
    try:
        cut_off_dsn = (
            f"postgresql://postgres@127.0.0.1:{to_primary.port},127.0.0.1:{to_standby.port}"
            "/postgres?target_session_attrs=read-write"
        )
        pair.freeze_replication()
        a = spawn("--dsn", cut_off_dsn, "--lease", SHORT_LEASE)
        wait_until(lambda: _started(log_dir, long), 60, _describe(a))
        to_standby.freeze()  # A will find no way to the new primary
        b = spawn("--dsn", pair.multi_host_dsn, "--lease", SHORT_LEASE)
        promoted = _crash_and_promote(pair)
        wait_until(lambda: _unfinished(pair.standby.dsn) == 0, 90, _describe(a, b))
        to_standby.thaw()
        wait_until(
            lambda: any("timeline 2" in line for line in a.drain.lines), 60, _describe(a)
        )  # A learns of the failover once it reaches the new primary, and carries on
    finally:
        to_standby.thaw()
        to_primary.close()
        to_standby.close()

    runs = executions(log_dir)
    print(
        f"\nB started its first job {_first_start_after(runs, promoted):.1f}s after the promotion"
    )
    for task_id in long:
        first, second = runs[str(task_id)]
        assert (first.pid, second.pid) == (a.pid, b.pid), runs[str(task_id)]
        assert second.started - first.ended > 0, runs[str(task_id)]
    assert any("lease not renewed" in line for line in a.drain.lines), a.drain.tail()
    assert tokens_given_twice(runs) == {}
    assert a.poll() is None and b.poll() is None


def test_with_synchronous_replication_no_acknowledged_post_is_lost(
    spawn: Callable[..., Any], log_dir: Path
) -> None:
    with ReplicatedPair(synchronous=True) as pair:
        with psycopg.connect(pair.primary.dsn, autocommit=True) as c:
            setup_schema(c)
        long, _ = _post(pair.primary.dsn)
        poster = Poster(pair.multi_host_dsn).start()
        workers = [spawn("--dsn", pair.multi_host_dsn, "--lease", SHORT_LEASE) for _ in range(2)]
        wait_until(lambda: _started(log_dir, long), 60, _describe(*workers))
        pair.freeze_replication()  # commits now wait for the standby, which hears nothing
        time.sleep(1.0)  # posts, claims and results wait meanwhile: none is acknowledged
        _crash_and_promote(pair)
        wait_until(lambda: len(poster.acknowledged) > 20, 60, _describe(*workers))
        poster.stop()
        acknowledged = list(poster.acknowledged)
        wait_until(lambda: _unfinished(pair.standby.dsn) == 0, 90, _describe(*workers))
        with psycopg.connect(pair.standby.dsn, autocommit=True) as c:
            row = c.execute(
                "SELECT count(*) FROM sk_task_results_t WHERE task_id = ANY(%s)", (acknowledged,)
            ).fetchone()
    runs = executions(log_dir)
    print(f"\n{len(acknowledged)} posts acknowledged, {row[0] if row else 0} on the new primary")
    assert row is not None and row[0] == len(acknowledged)
    assert all(overlaps(job_runs) == [] for job_runs in runs.values())
    assert tokens_given_twice(runs) == {}


def test_check_the_exporter_and_the_console_say_a_failover_happened(
    pair: ReplicatedPair, spawn: Callable[..., Any]
) -> None:
    """Before any worker reaches the new primary, then while claims are held there (a
    30 s lease holds them 36 s: long enough to look)."""
    _post(pair.primary.dsn)
    wait_until(lambda: _recorded(pair.standby.dsn) == 1, 30, lambda: "the standby never caught up")
    _crash_and_promote(pair)

    unseen = _check(pair.multi_host_dsn)
    worker = spawn("--dsn", pair.multi_host_dsn, "--lease", "30s")
    wait_until(lambda: _recorded(pair.standby.dsn) == 2, 60, _describe(worker))
    held = _check(pair.multi_host_dsn)
    samples = one_cycle(pair.multi_host_dsn)
    source = DatabaseSource(Database(pair.multi_host_dsn, read_only=True))
    try:
        line = failover_text(source.read(SNAPSHOT).replication)
    finally:
        source.close()

    assert unseen.returncode == 1, unseen.stdout
    assert "a failover to timeline 2 no worker has reached yet" in unseen.stdout, unseen.stdout
    assert held.returncode == 1, held.stdout
    assert "claims held after a failover to timeline 2" in held.stdout, held.stdout
    assert samples["skconsole_timeline"][()] == 2
    assert samples["skconsole_claims_held_seconds"][()] > 0
    assert line is not None and "failover to timeline 2" in line and "claims held" in line


def _recorded(dsn: str) -> int:
    """The newest timeline the queue's statements have recorded on the server at ``dsn``
    (0: none yet, or a standby that has not replayed the schema yet)."""
    with psycopg.connect(dsn, autocommit=True) as c:
        found = c.execute("SELECT to_regclass('sk_timelines_t') IS NOT NULL").fetchone()
        if not (found and found[0]):
            return 0
        row = c.execute("SELECT max(timeline) FROM sk_timelines_t").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _check(dsn: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        skconsole_cmd("--dsn", dsn, "check"), capture_output=True, text=True, timeout=60, cwd=ROOT
    )
