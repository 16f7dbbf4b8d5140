"""Periodic jobs under fire: several workers, SIGKILL, downtime, a pause, a locked row.

Real PostgreSQL, real ``skconsole worker`` processes (``--tasks
tests.support.tasks_schedules --types T``: each test ticks one schedule of
its own). Every tick job is counted three ways: its result row (the id must be
uuid5 of the type and the tick, so the tick each job stands for is derived
from its posted time and checked against its id), the schedule's row
(``sk_schedules_t``), and the handlers' own logs (every execution with its
start and end, its pid and its attempt), so a tick lost, posted twice, run
twice or run twice at once shows. Ticks are compared on the server's clock
(``now()``), which is the clock the workers tick by.
"""

from __future__ import annotations

import math
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from skconsole.core.schedule import TICK_NAMESPACE
from skconsole.core.signature import final_exception_line
from skconsole.core.status import JobStatus
from tests.support.tasks_faults import (
    REAP_AFTER_S,
    SHORT_LEASE,
    Execution,
    OutputDrain,
    executions,
    kill_group,
    overlaps,
    wait_exit,
)
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
StartWorker = Callable[..., subprocess.Popen[str]]

#: a tick is posted within this long of its time by a running worker: they look at
#: each tick time (and at least once a second), on the upkeep connection, which a
#: reap or a metrics write may hold up a moment (workers on one host add to the
#: same metrics rows in no fixed order: a deadlock costs the server's
#: deadlock_timeout, 1 s by default)
ON_TIME_S = 1.5


@dataclass(frozen=True)
class TickJob:
    task_id: uuid.UUID
    tick: datetime
    posted: datetime
    status: int
    attempt: int

    @property
    def late_s(self) -> float:
        return (self.posted - self.tick).total_seconds()


def _tick_uuid(task_type: str, tick: datetime) -> uuid.UUID:
    return uuid.uuid5(TICK_NAMESPACE, f"{task_type}@{tick.astimezone(UTC).isoformat()}")


def _floor(at: datetime, every: float) -> datetime:
    return datetime.fromtimestamp(math.floor(at.timestamp() / every) * every, UTC)


def _tick_of(task_type: str, task_id: uuid.UUID, posted: datetime, every: float) -> datetime:
    """The tick a job stands for: the multiple of ``every`` at or before its posting
    whose uuid5 is its id (a job may be posted a moment after the next tick began)."""
    latest = _floor(posted, every)
    for k in range(3):
        tick = latest - timedelta(seconds=k * every)
        if _tick_uuid(task_type, tick) == task_id:
            return tick
    raise AssertionError(
        f"job {task_id} posted at {posted.isoformat()} is not uuid5({task_type}@tick)"
        f" of any tick up to {2 * every:g} s before"
    )


def _tick_jobs(
    conn: Conn, task_type: str, every: float, until: datetime | None = None
) -> list[TickJob]:
    """The type's jobs by tick; with ``until`` (when the workers were told to stop),
    only the ticks up to then: a tick being taken as the stop arrives may still be
    posted (test_a_stopping_worker_takes_no_tick is about the rest)."""
    rows = conn.execute(
        "SELECT task_id, task_posted_at_ts, task_status, coalesce(sk_attempt, 0)"
        " FROM sk_task_results_t WHERE task_type = %s ORDER BY task_posted_at_ts",
        (task_type,),
    ).fetchall()
    jobs = [TickJob(r[0], _tick_of(task_type, r[0], r[1], every), r[1], r[2], r[3]) for r in rows]
    return sorted((j for j in jobs if until is None or j.tick <= until), key=lambda j: j.tick)


def _show(jobs: list[TickJob]) -> str:
    """One line per job: its tick, how late it was posted, its status and attempt."""
    return "".join(
        f"\n  tick {j.tick.time()} posted {j.late_s:+.3f} s status {j.status} attempt {j.attempt}"
        for j in jobs
    )


def _ticks(jobs: list[TickJob]) -> list[datetime]:
    return [j.tick for j in jobs]


def _consecutive(first: datetime, last: datetime, every: float) -> list[datetime]:
    n = round((last - first).total_seconds() / every)
    return [first + timedelta(seconds=k * every) for k in range(n + 1)]


def _server_now(conn: Conn) -> datetime:
    value: datetime = conn.execute("SELECT now()").fetchone()[0]  # type: ignore[index]
    return value


def _sleep_to_phase(conn: Conn, every: float, phase: float) -> datetime:
    """Sleep until ``phase`` seconds after a tick (by the server's clock); returns that tick."""
    offset = _server_now(conn).timestamp() - time.time()
    now = time.time() + offset
    tick = math.floor(now / every) * every
    target = tick + phase if now < tick + phase else tick + every + phase
    time.sleep(target - now)
    return datetime.fromtimestamp(target - phase, UTC)


def _schedule_row(conn: Conn, task_type: str) -> tuple[Any, ...] | None:
    return conn.execute(
        "SELECT sch_last_tick_ts, sch_last_task_id, sch_defined_at_ts,"
        " (SELECT count(*) FROM sk_task_results_t WHERE task_type = %s)"
        " FROM sk_schedules_t WHERE task_type = %s",
        (task_type, task_type),
    ).fetchone()


def _alive(conn: Conn) -> int:
    row = conn.execute("SELECT count(*) FROM sk_worker_liveness() WHERE state = 'alive'").fetchone()
    return int(row[0]) if row else 0


class Workers:
    """``skconsole worker`` processes ticking one type; their output is drained."""

    def __init__(self, start_worker: StartWorker, log_dir: Path, task_type: str) -> None:
        self.start_worker = start_worker
        self.log_dir = log_dir
        self.task_type = task_type
        self.procs: list[subprocess.Popen[str]] = []
        self.drains: dict[int, OutputDrain] = {}
        #: how long each stopped worker took to exit after its SIGTERM
        self.stop_took: dict[int, float] = {}

    def start(self) -> subprocess.Popen[str]:
        p = self.start_worker(
            "--tasks",
            "tests.support.tasks_schedules",
            "--types",
            self.task_type,
            "--lease",
            SHORT_LEASE,
            "--grace",
            "5s",
            "--concurrency",
            "4",
            env={"SKTEST_LOG_DIR": str(self.log_dir)},
        )
        self.procs.append(p)
        self.drains[p.pid] = OutputDrain(p)
        return p

    def running(self) -> list[subprocess.Popen[str]]:
        return [p for p in self.procs if p.poll() is None]

    def stop(self) -> None:
        """SIGTERM every running worker; each must end cleanly."""
        live = self.running()
        started = time.monotonic()
        for p in live:
            p.send_signal(signal.SIGTERM)
        for p in live:
            assert wait_exit(p, 30) == 0, self.tail()
            self.stop_took[p.pid] = time.monotonic() - started

    def posters(self) -> dict[int, int]:
        """How many ticks each worker process posted, from its log."""
        return {
            pid: sum(1 for line in d.lines if f"posted {self.task_type}'s job" in line)
            for pid, d in self.drains.items()
        }

    def tail(self) -> str:
        return "\n".join(f"--- worker {pid}:\n{d.tail(20)}" for pid, d in self.drains.items())


def _describe(conn: Conn, workers: Workers, task_type: str) -> Callable[[str], Callable[[], str]]:
    def make(what: str) -> Callable[[], str]:
        def describe() -> str:
            rows = conn.execute(
                "SELECT task_id, task_status, task_posted_at_ts FROM sk_task_results_t"
                " WHERE task_type = %s ORDER BY task_posted_at_ts",
                (task_type,),
            ).fetchall()
            return (
                f"{what}: schedule {_schedule_row(conn, task_type)}, jobs {rows}\n{workers.tail()}"
            )

        return describe

    return make


def _wait_defined(conn: Conn, workers: Workers, task_type: str, every: float) -> datetime:
    """Wait for the schedule's row; returns the tick its definition counted as taken."""
    found: list[tuple[Any, ...]] = []

    def defined() -> bool:
        row = _schedule_row(conn, task_type)
        if row is not None:
            found.append(row)
        return row is not None

    wait_until(defined, 30, workers.tail, interval=0.01)
    last_tick, _, defined_at, posted = found[-1]
    if posted:  # a tick was taken before we looked: the definition's is the one before
        last_tick = min(_ticks(_tick_jobs(conn, task_type, every))) - timedelta(seconds=every)
    # a new schedule starts at the next tick: its latest past tick counts as taken
    assert last_tick <= defined_at < last_tick + timedelta(seconds=every + 0.1), (
        last_tick,
        defined_at,
    )
    return last_tick  # type: ignore[no-any-return]


def _check_runs_once(
    jobs: list[TickJob], log_dir: Path, deaths: dict[int, float] | None = None
) -> dict[str, list[Execution]]:
    """Every tick job 3 Processed and executed exactly once, start and end logged."""
    runs = executions(log_dir, deaths)
    assert set(runs) == {str(j.task_id) for j in jobs}, (
        f"the logs' jobs are not the posted jobs: {_show(jobs)}\nruns {list(runs.values())}"
    )
    for j in jobs:
        assert j.status == JobStatus.PROCESSED, j
        job_runs = runs[str(j.task_id)]
        assert not overlaps(job_runs), job_runs
        assert len(job_runs) == 1, f"tick {j.tick} ran {len(job_runs)} times: {job_runs}"
        assert job_runs[0].ended < math.inf and job_runs[0].note == "attempt=1", job_runs
    return runs


def test_three_workers_every_2s_post_and_run_each_tick_once(
    conn: Conn, start_worker: StartWorker, log_dir: Path
) -> None:
    """3 workers on one every="2s" type for about 11 s: one job per tick (id uuid5 of
    type and tick), ticks consecutive multiples of 2 s from the first after the
    definition (a new schedule does not run at once) to the last before the stop,
    each posted on time and executed exactly once, never overlapping."""
    task_type, every = "s.every2", 2.0
    workers = Workers(start_worker, log_dir, task_type)
    workers.start()
    initial = _wait_defined(conn, workers, task_type, every)
    workers.start()
    workers.start()
    wait_until(lambda: _alive(conn) == 3, 30, workers.tail)
    # about 11 s after the definition, half-way between two ticks: 5 ticks posted
    stop_at = initial + timedelta(seconds=5 * every + every / 2)
    time.sleep(max(0.0, (stop_at - _server_now(conn)).total_seconds()))
    stopped = _server_now(conn)
    workers.stop()

    jobs = _tick_jobs(conn, task_type, every, until=stopped)
    ids = [j.task_id for j in jobs]
    assert len(set(ids)) == len(ids)
    first = initial + timedelta(seconds=every)
    expected = _consecutive(first, _floor(stopped, every), every)
    assert _ticks(jobs) == expected, (
        f"one job per tick, none lost, none before the first {first.time()}: {_show(jobs)}"
    )
    assert len(jobs) >= 5
    assert all(0 <= j.late_s < ON_TIME_S for j in jobs), [j.late_s for j in jobs]
    # (a stopping worker may still take a tick: test_a_stopping_worker_takes_no_tick)
    every_job = _tick_jobs(conn, task_type, every)
    last_tick, last_id, _, _ = _schedule_row(conn, task_type)  # type: ignore[misc]
    assert (last_tick, last_id) == (every_job[-1].tick, every_job[-1].task_id), (
        f"stopped {stopped.time()}, exits {workers.stop_took} s after SIGTERM;"
        f" schedule at {last_tick.time()}; all jobs: {_show(every_job)}"
        f"\n{workers.tail()}"
    )
    _check_runs_once(jobs, log_dir)
    print(
        f"\n{len(jobs)} ticks, posted {max(j.late_s for j in jobs) * 1000:.0f} ms late at most;"
        f" ticks posted per worker: {workers.posters()};"
        f" exits {[f'{t:.2f}' for t in workers.stop_took.values()]} s after SIGTERM"
    )


def test_worker_sigkilled_at_a_tick_loses_and_duplicates_none(
    conn: Conn, start_worker: StartWorker, log_dir: Path
) -> None:
    """3 workers on every="1s"; after about 4 s of ticks, SIGKILL the worker that
    posted the latest tick 2 ms after the next tick's time (all three are then
    taking it); the others keep going about 6 s more. Ticks stay consecutive, one
    job each; a tick job the killed worker was running may run once more, only
    after its lease (the at-least-once rule), never at the same time."""
    task_type, every = "s.every1", 1.0
    workers = Workers(start_worker, log_dir, task_type)
    workers.start()
    initial = _wait_defined(conn, workers, task_type, every)
    workers.start()
    workers.start()
    wait_until(lambda: _alive(conn) == 3, 30, workers.tail)
    wait_until(lambda: len(_tick_jobs(conn, task_type, every)) >= 4, 30, workers.tail)

    posted_by = {pid: n for pid, n in workers.posters().items() if n}
    victim_pid = (
        max(posted_by, key=lambda pid: posted_by[pid]) if posted_by else workers.procs[0].pid
    )
    victim = next(p for p in workers.procs if p.pid == victim_pid)
    tick = _sleep_to_phase(conn, every, 0.002)
    killed_at = kill_group(victim)
    # the survivors post the ticks after the kill: a few of them
    wait_until(
        lambda: sum(1 for j in _tick_jobs(conn, task_type, every) if j.tick > tick) >= 3,
        30,
        workers.tail,
    )
    # a tick job the victim held is reaped once its lease lapses, then run again
    wait_until(
        lambda: (
            conn.execute(
                "SELECT count(*) FROM sk_task_results_t WHERE task_type = %s AND task_status <> 3",
                (task_type,),
            ).fetchone()
            == (0,)
        ),
        REAP_AFTER_S + 10,
        workers.tail,
    )
    _sleep_to_phase(conn, every, every / 2)
    stopped = _server_now(conn)
    workers.stop()

    jobs = _tick_jobs(conn, task_type, every, until=stopped)
    expected = _consecutive(initial + timedelta(seconds=every), _floor(stopped, every), every)
    assert _ticks(jobs) == expected, f"a tick lost or posted twice across the kill: {_show(jobs)}"
    assert tick in _ticks(jobs), "the tick taken at the kill was posted"
    runs = executions(log_dir, {victim.pid: killed_at})
    assert set(runs) == {str(j.task_id) for j in jobs}
    again = {t: r for t, r in runs.items() if len(r) > 1}
    for job_runs in runs.values():
        assert not overlaps(job_runs), job_runs
        last = job_runs[-1]
        assert not (last.pid == victim.pid and last.ended == killed_at), (
            f"a run cut short by the kill was never run again: {job_runs}"
        )
    for job_runs in again.values():
        # re-run only because the killed worker had it, and only after its lease lapsed
        assert len(job_runs) == 2 and job_runs[0].pid == victim.pid, job_runs
        assert job_runs[1].started - killed_at >= REAP_AFTER_S - 1.0, job_runs
    assert len(again) <= 1, again
    assert all(j.status == JobStatus.PROCESSED for j in jobs)
    print(
        f"\nkilled pid {victim.pid} at tick {tick.time()} (+2 ms); {len(jobs)} ticks;"
        f" re-run after the kill: {len(again)}; posted per worker {workers.posters()}"
    )


def test_worker_sigkilled_running_a_tick_job_runs_it_again_once_after_its_lease(
    conn: Conn, start_worker: StartWorker, log_dir: Path
) -> None:
    """every="1s", jobs of 0.5 s, 2 workers. SIGKILL the worker running a tick's job
    (found in 2 Processing right after the tick): the survivor goes on posting every
    tick, reaps that job once the victim's lease lapses and runs it again (attempt
    2, one HungJob error), never while the first run could still go on. Every other
    tick's job runs once; no tick is lost or posted twice."""
    task_type, every = "s.kill1", 1.0
    workers = Workers(start_worker, log_dir, task_type)
    workers.start()
    initial = _wait_defined(conn, workers, task_type, every)
    workers.start()
    wait_until(lambda: _alive(conn) == 2, 30, workers.tail)
    wait_until(lambda: len(_tick_jobs(conn, task_type, every)) >= 2, 30, workers.tail)

    tick = _sleep_to_phase(conn, every, 0.0)
    running: list[Any] = []

    def claimed() -> bool:
        running[:] = conn.execute(
            "SELECT r.task_id, w.worker_pid FROM sk_task_results_t r"
            " JOIN sk_workers_t w ON w.worker_id = r.sk_owner_worker_id"
            " WHERE r.task_id = %s AND r.task_status = 2",
            (_tick_uuid(task_type, tick),),
        ).fetchall()
        return bool(running)

    def started() -> bool:  # claimed, and its handler running (logged its start)
        return claimed() and str(running[0][0]) in executions(log_dir)

    wait_until(started, 5, workers.tail, interval=0.002)
    ((job_id, victim_pid),) = running
    victim = next(p for p in workers.procs if p.pid == victim_pid)
    killed_at = kill_group(victim)
    wait_until(
        lambda: (
            conn.execute(
                "SELECT task_status FROM sk_task_results_t WHERE task_id = %s", (job_id,)
            ).fetchone()
            == (3,)
        ),
        REAP_AFTER_S + 10,
        workers.tail,
    )
    _sleep_to_phase(conn, every, every / 2)
    stopped = _server_now(conn)
    workers.stop()

    jobs = _tick_jobs(conn, task_type, every, until=stopped)
    expected = _consecutive(initial + timedelta(seconds=every), _floor(stopped, every), every)
    assert _ticks(jobs) == expected, f"a tick lost or posted twice: {_show(jobs)}"
    assert all(j.status == JobStatus.PROCESSED for j in jobs)
    runs = executions(log_dir, {victim.pid: killed_at})
    assert set(runs) == {str(j.task_id) for j in jobs}
    for task_id, job_runs in runs.items():
        assert not overlaps(job_runs), job_runs
        if task_id != str(job_id):
            assert len(job_runs) == 1 and job_runs[0].note == "attempt=1", job_runs
    first, second = runs[str(job_id)]
    assert (first.pid, first.ended, first.note) == (victim.pid, killed_at, "attempt=1"), first
    assert second.pid != victim.pid and second.note == "attempt=2", second
    assert second.started - killed_at >= REAP_AFTER_S - 1.0, "re-run before the lease lapsed"
    errors, last_error = conn.execute(
        "SELECT task_error_count, task_last_error FROM sk_task_results_t WHERE task_id = %s",
        (job_id,),
    ).fetchone()  # type: ignore[misc]
    assert errors == 1 and final_exception_line(last_error).startswith(
        "skconsole.HungJob: worker gone"
    ), last_error
    print(
        f"\nkilled pid {victim.pid} running tick {tick.time()}'s job; run again"
        f" {second.started - killed_at:.1f} s later; {len(jobs)} ticks, each posted once"
    )


def test_a_stopping_worker_takes_no_tick(
    conn: Conn, start_worker: StartWorker, log_dir: Path
) -> None:
    """every="1s", jobs of 3 s, one worker. SIGTERM it right after a tick's job
    started: it stops claiming and gives that job its grace (5 s) to finish, about
    3 s, while 3 ticks pass. No worker runs the type any more, so those ticks are
    missed ones: the stopping worker must not take them (posting jobs no one will
    claim until a worker starts again, then all run back to back, where
    missed="once" promises one catch-up and "skip" none)."""
    task_type, every = "s.long1", 1.0
    workers = Workers(start_worker, log_dir, task_type)
    workers.start()
    _wait_defined(conn, workers, task_type, every)
    wait_until(lambda: len(executions(log_dir)) >= 1, 30, workers.tail, interval=0.005)
    term = _server_now(conn)
    workers.stop()

    jobs = _tick_jobs(conn, task_type, every)
    running = [j for j in jobs if j.tick <= term and j.status == JobStatus.PROCESSED]
    assert running, f"the job running at the SIGTERM finished in its grace: {_show(jobs)}"
    late = [j for j in jobs if j.posted > term]
    assert not late, (
        f"the worker, stopping since {term.time()} ({workers.stop_took} s to exit),"
        f" posted {len(late)} tick job(s) that no worker will run: {_show(late)}"
    )


def _registered_at(conn: Conn, before: datetime) -> datetime:
    """When the last worker registered before ``before``: the restarted one."""
    row = conn.execute(
        "SELECT max(worker_started_at_ts) FROM sk_workers_t WHERE worker_started_at_ts <= %s",
        (before,),
    ).fetchone()
    assert row is not None and row[0] is not None
    return row[0]  # type: ignore[no-any-return]


def _downtime(
    conn: Conn, workers: Workers, task_type: str, every: float, missed_ticks: int
) -> tuple[datetime, float]:
    """Run one worker until it posted two ticks, stop it (SIGTERM), stay down while
    ``missed_ticks`` ticks pass, then start a worker again just after a tick.
    Returns the last tick taken before the downtime and when the worker was started."""
    workers.start()
    _wait_defined(conn, workers, task_type, every)
    wait_until(lambda: len(_tick_jobs(conn, task_type, every)) >= 2, 30, workers.tail)
    _sleep_to_phase(conn, every, every / 2)
    workers.stop()
    before = _schedule_row(conn, task_type)[0]  # type: ignore[index]
    for _ in range(missed_ticks):
        _sleep_to_phase(conn, every, 0.05)
    started = _server_now(conn).timestamp()
    workers.start()
    return before, started  # type: ignore[no-any-return]


def test_missed_once_posts_the_latest_missed_tick_once_after_downtime(
    conn: Conn, start_worker: StartWorker, log_dir: Path
) -> None:
    """every="1s", missed="once": every worker stopped for 3 ticks (a real downtime:
    with a 1 s period it costs 3 s, and the engine keeps no other state than the
    schedule's last tick, so moving it back in SQL would test nothing more). The
    worker started again posts one job for the missed ticks, the latest of them,
    then each tick on time; all of them run once."""
    task_type, every = "s.once1", 1.0
    workers = Workers(start_worker, log_dir, task_type)
    before, started = _downtime(conn, workers, task_type, every, missed_ticks=3)
    wait_until(
        lambda: (
            max(_ticks(_tick_jobs(conn, task_type, every))) >= before + timedelta(seconds=6 * every)
        ),
        30,
        workers.tail,
    )
    _sleep_to_phase(conn, every, every / 2)
    stopped = _server_now(conn)
    workers.stop()

    jobs = _tick_jobs(conn, task_type, every, until=stopped)
    after = [j for j in jobs if j.tick > before]
    catch_up = after[0]
    # the catch-up job: the latest tick when the worker first looked
    assert catch_up.tick == _floor(catch_up.posted, every) or (
        catch_up.tick == _floor(catch_up.posted, every) - timedelta(seconds=every)
        and after[1].tick == _floor(catch_up.posted, every)
    ), catch_up
    assert catch_up.tick >= before + timedelta(seconds=3 * every), "ticks were missed"
    assert catch_up.tick.timestamp() > started - every, "the latest missed tick, not an older one"
    missed = [j for j in jobs if before < j.tick <= catch_up.tick]
    assert missed == [catch_up], "exactly one job for the missed ticks"
    assert _ticks(after) == _consecutive(catch_up.tick, _floor(stopped, every), every)
    assert all(j.late_s < ON_TIME_S for j in after[1:]), [j.late_s for j in after]
    _check_runs_once(jobs, log_dir)
    print(
        f"\ndown from {before.time()} until the worker started at"
        f" {datetime.fromtimestamp(started, UTC).time()}: caught up with tick"
        f" {catch_up.tick.time()} ({catch_up.late_s:.2f} s late), then {len(after) - 1} on time"
    )


def test_missed_skip_posts_no_missed_tick_after_downtime(
    conn: Conn, start_worker: StartWorker, log_dir: Path
) -> None:
    """every="2s", missed="skip": every worker stopped while 2 ticks pass (a real
    downtime), a worker started again 50 ms after a tick. No job for any tick that
    passed while no worker ran (skconsole.core.schedule: 'skip' posts none of them);
    the first job is the next tick, on time, and then each tick once."""
    task_type, every = "s.skip2", 2.0
    workers = Workers(start_worker, log_dir, task_type)
    before, started = _downtime(conn, workers, task_type, every, missed_ticks=2)
    wait_until(
        lambda: (
            max(_ticks(_tick_jobs(conn, task_type, every)))
            >= datetime.fromtimestamp(started, UTC) + timedelta(seconds=2 * every)
        ),
        30,
        workers.tail,
    )
    _sleep_to_phase(conn, every, every / 2)
    stopped = _server_now(conn)
    workers.stop()

    jobs = _tick_jobs(conn, task_type, every, until=stopped)
    _check_runs_once(jobs, log_dir)
    after = [j for j in jobs if j.tick > before]
    assert _ticks(after) == _consecutive(after[0].tick, _floor(stopped, every), every)
    assert all(j.late_s < ON_TIME_S for j in after[1:]), [j.late_s for j in after]
    missed = [
        (j.tick.isoformat(), f"{j.late_s:.2f} s late")
        for j in after
        if j.tick.timestamp() <= started
    ]
    assert not missed, (
        f"missed='skip' posted a tick that passed while no worker ran (worker started at"
        f" {datetime.fromtimestamp(started, UTC).isoformat()}): {missed}"
    )
    # the next tick once the worker runs: the one after its start, or (on a loaded
    # machine, a start slower than a period) the one after it registered
    registered = _registered_at(conn, after[0].tick)
    first_due = _floor(datetime.fromtimestamp(started, UTC), every) + timedelta(seconds=every)
    assert first_due <= after[0].tick <= _floor(registered, every) + timedelta(seconds=every), (
        "the next tick after the start is posted"
    )


def test_missed_skip_after_a_long_downtime_posts_no_job(
    conn: Conn, start_worker: StartWorker, log_dir: Path
) -> None:
    """every="1h", missed="skip": a 3-hour downtime, simulated by moving the schedule's
    last tick back 3 periods in SQL (the only state a downtime leaves; an hour
    cannot be waited for). Two workers started again take the missed ticks as
    skipped (the last tick moves to the latest hour, with no job) and never post
    one of them later. In the first minute of an hour this meets the bug shown by
    test_missed_skip_posts_no_missed_tick_after_downtime (the latest missed tick,
    less than 60 s late, is posted)."""
    task_type, every = "s.skip1h", 3600.0
    into_hour = _server_now(conn).timestamp() % every
    if into_hour > every - 10:  # keep the next hour's own tick out of this test
        time.sleep(every - into_hour + 0.5)
    workers = Workers(start_worker, log_dir, task_type)
    workers.start()
    initial = _wait_defined(conn, workers, task_type, every)
    workers.stop()
    conn.execute(
        "UPDATE sk_schedules_t SET sch_last_tick_ts = sch_last_tick_ts - interval '3 hours'"
        " WHERE task_type = %s",
        (task_type,),
    )
    workers.start()
    workers.start()
    wait_until(
        lambda: _schedule_row(conn, task_type)[0] == initial,  # type: ignore[index]
        30,
        workers.tail,
    )
    time.sleep(2.5)  # two more looks by each worker
    workers.stop()
    last_tick, last_id, _, count = _schedule_row(conn, task_type)  # type: ignore[misc]
    assert last_tick == initial == _floor(_server_now(conn), every)
    assert (count, last_id) == (0, None), "missed='skip' posted a job for a missed tick"
    assert executions(log_dir) == {}


def test_pause_holds_the_schedule_and_resume_posts_one_catch_up(
    conn: Conn,
    start_worker: StartWorker,
    log_dir: Path,
    run_cli: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    """every="3s", missed="once", 2 workers running. `skconsole pause TYPE --yes`
    1 s after a tick: no tick taken or posted while 2 ticks pass (the schedule's
    row does not change). `skconsole resume TYPE --yes` 0.1 s after the second
    (the CLI commits within about 0.4 s, the workers look every second): exactly
    one catch-up job, for the latest tick passed while paused, then every tick
    on time, each run once."""
    task_type, every = "s.pause3", 3.0
    workers = Workers(start_worker, log_dir, task_type)
    workers.start()
    _wait_defined(conn, workers, task_type, every)
    workers.start()
    wait_until(lambda: _alive(conn) == 2, 30, workers.tail)
    wait_until(lambda: len(_tick_jobs(conn, task_type, every)) >= 1, 30, workers.tail)

    _sleep_to_phase(conn, every, 1.0)
    paused = run_cli("pause", task_type, "--yes")
    assert paused.returncode == 0 and f"{task_type} paused" in paused.stdout, paused
    paused_at: datetime = conn.execute(
        "SELECT tt_paused_at_ts FROM sk_task_types_t WHERE task_type = %s", (task_type,)
    ).fetchone()[0]  # type: ignore[index]
    held = _schedule_row(conn, task_type)
    _sleep_to_phase(conn, every, 0.5)
    assert _schedule_row(conn, task_type) == held, "a paused type's tick was taken"
    _sleep_to_phase(conn, every, 0.1)
    assert _schedule_row(conn, task_type) == held, "a paused type's tick was taken"
    resumed = run_cli("resume", task_type, "--yes")
    assert resumed.returncode == 0 and f"{task_type} resumed" in resumed.stdout, resumed
    resumed_at: datetime = conn.execute(
        "SELECT tt_updated_at_ts FROM sk_task_types_t WHERE task_type = %s", (task_type,)
    ).fetchone()[0]  # type: ignore[index]
    assert _alive(conn) == 2
    wait_until(
        lambda: (
            max(_ticks(_tick_jobs(conn, task_type, every)))
            >= _floor(resumed_at, every) + timedelta(seconds=2 * every)
        ),
        30,
        workers.tail,
    )
    _sleep_to_phase(conn, every, every / 2)
    stopped = _server_now(conn)
    workers.stop()

    jobs = _tick_jobs(conn, task_type, every, until=stopped)
    _check_runs_once(jobs, log_dir)
    before = [j for j in jobs if j.tick <= paused_at]
    held_ticks = _consecutive(
        before[-1].tick + timedelta(seconds=every), _floor(resumed_at, every), every
    )
    while_paused = [j for j in jobs if paused_at < j.tick <= resumed_at]
    after = [j for j in jobs if j.tick > resumed_at]
    assert _ticks(before) == _consecutive(before[0].tick, _floor(paused_at, every), every)
    assert len(held_ticks) >= 2, held_ticks
    assert _ticks(while_paused) == held_ticks[-1:], (
        "exactly one catch-up job, for the latest tick passed while paused"
    )
    catch_up = while_paused[0]
    assert resumed_at <= catch_up.posted < catch_up.tick + timedelta(seconds=every), catch_up
    assert _ticks(after) == _consecutive(
        catch_up.tick + timedelta(seconds=every), _floor(stopped, every), every
    )
    assert all(j.late_s < ON_TIME_S for j in before + after), [j.late_s for j in jobs]
    print(
        f"\npaused {paused_at.time()}, resumed {resumed_at.time()}, {len(held_ticks)} ticks held;"
        f" catch-up tick {catch_up.tick.time()} posted {catch_up.late_s:.2f} s late;"
        f" then {len(after)} on time"
    )


def test_schedule_row_locked_across_a_tick_still_posts_it_once(
    dsn: str, conn: Conn, start_worker: StartWorker, log_dir: Path
) -> None:
    """every="2s", 3 workers. A test session holds the schedule's row (SELECT ... FOR
    UPDATE in an open transaction) from 0.5 s before a tick to 1.2 s after it (less
    than the workers' 2 s lock_timeout): all three wait on it to take that tick.
    Released, they take it in turn: exactly one job for it, run once, and the
    ticks around it are on time."""
    task_type, every = "s.lock2", 2.0
    workers = Workers(start_worker, log_dir, task_type)
    workers.start()
    _wait_defined(conn, workers, task_type, every)
    workers.start()
    workers.start()
    wait_until(lambda: _alive(conn) == 3, 30, workers.tail)
    wait_until(lambda: len(_tick_jobs(conn, task_type, every)) >= 1, 30, workers.tail)

    boundary = _sleep_to_phase(conn, every, every - 0.5) + timedelta(seconds=every)
    waiting: list[int] = []
    with psycopg.connect(dsn) as locker:
        locker.execute("SELECT * FROM sk_schedules_t WHERE task_type = %s FOR UPDATE", (task_type,))
        _sleep_to_phase(conn, every, 0.8)
        waiting = [
            r[0]
            for r in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'skconsole-worker-upkeep'"
                " AND datname = current_database() AND wait_event_type = 'Lock'"
                " AND query LIKE %s",
                ("%sk_schedules_t%",),
            ).fetchall()
        ]
        assert not conn.execute(
            "SELECT 1 FROM sk_task_results_t WHERE task_id = %s",
            (_tick_uuid(task_type, boundary),),
        ).fetchall(), "posted while its schedule's row was locked"
        _sleep_to_phase(conn, every, 1.2)
        released = _server_now(conn)
        locker.rollback()
    wait_until(
        lambda: any(j.tick == boundary for j in _tick_jobs(conn, task_type, every)),
        10,
        workers.tail,
    )
    _sleep_to_phase(conn, every, 0.3)  # the tick after it too
    _sleep_to_phase(conn, every, every / 2)
    stopped = _server_now(conn)
    workers.stop()

    assert len(waiting) >= 2, f"only {len(waiting)} worker(s) waited on the row"
    jobs = _tick_jobs(conn, task_type, every, until=stopped)
    _check_runs_once(jobs, log_dir)
    (held,) = [j for j in jobs if j.tick == boundary]
    assert _ticks(jobs) == _consecutive(jobs[0].tick, _floor(stopped, every), every)
    later = [j for j in jobs if j.tick > boundary]
    assert later and all(j.late_s < ON_TIME_S for j in later)
    assert not any("schedules skipped" in line for d in workers.drains.values() for line in d.lines)
    print(
        f"\n{len(waiting)} workers waited on the locked row at tick {boundary.time()};"
        f" released {released.time()}; its job {held.task_id} posted once;"
        f" exits {[f'{t:.2f}' for t in workers.stop_took.values()]} s after SIGTERM"
    )
