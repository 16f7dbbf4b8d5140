"""Chaos: three workers, a stream of jobs, and everything going wrong at once.

Three real ``skconsole worker`` processes (one of them behind a proxy the test
can freeze) run async and sync handlers that log every execution with its
start and end. While jobs are posted for ``SKCONSOLE_CHAOS_SECONDS`` (20 s in
CI, ~330 jobs a second; 60 s or more for a longer run by hand), a seeded
random schedule (``SKCONSOLE_CHAOS_SEED``) does, at least once each: SIGKILL
of a worker, SIGTERM of a worker, pg_terminate_backend of every skconsole
backend, a fast and an immediate server restart, a row lock on the stats and
metrics rows for twice the workers' lease, an operator's reap, a keyed re-post
of a running job, and a freeze of the proxied worker's connections (a
partition) past its lease. The workers run under the shortest lease (5 s),
which the lock and the freeze outlast as the default one would. Killed
workers are started again, as a supervisor would. Beside the stream, an
application posts jobs of a type with a fleet-wide concurrency limit by key
inside transactions of its own that it keeps open a while (re-posting some
that wait), and halfway through every worker is restarted with a periodic
type's interval changed (a rolling deploy). The edges of the guarantees are in
the mix too: a search index on ``payload.note`` while some jobs carry a 6 KB
note (an index entry PostgreSQL would refuse unbounded), a type limited to one
running job per customer whose running jobs are re-posted by key with another
customer, and fan-in jobs whose first parent's result a retention round purges
while the second parent still runs.

At the end, counted from the database and from the handlers' own logs: every
job 3 Processed, the queue empty, nothing in 2; no two executions of one job
overlapping in time; an execution repeated only when its worker was
killed (SIGKILL, SIGTERM past its grace) or partitioned, or the job was
re-posted by key while it ran (then the newest payload ran last, once); the
periodic type's ticks follow one definition at a time (the old one's before
the new one was published, the new one's after); no two executions of the
per-customer type for one customer overlapping; every fan-in job run once,
though its first parent's row was purged.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import json
import os
import random
import signal
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skconsole import ops
from skconsole.core.errors import ConnectError
from skconsole.core.schedule import Schedule, tick_id
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.ops.find_index import FindIndexParams
from skconsole.producer import Job, Producer
from skconsole.worker.links import Link, LinkLost
from skconsole.worker.metrics import MetricsBuffer
from skconsole.worker.retention import Retention
from tests.conftest import ROOT, skconsole_cmd
from tests.support.netproxy import FreezableProxy
from tests.support.server_control import restart_server
from tests.support.tasks_faults import SHORT_LEASE, OutputDrain, completions, executions, overlaps

SEED = int(os.environ.get("SKCONSOLE_CHAOS_SEED", "1"))
DURATION_S = float(os.environ.get("SKCONSOLE_CHAOS_SECONDS", "20"))
JOBS = int(os.environ.get("SKCONSOLE_CHAOS_JOBS", str(int(DURATION_S * 333))))
FREEZE_S = 8.0
STATS_LOCK_S = 12.0
SLOTS = 3  # slot 0 goes through the proxy
LIMITED_TYPE, LIMITED_CONCURRENCY = "chaos-limited", 3
TICK_TYPE, EVERY_BEFORE, EVERY_AFTER = "chaos-tick", 2.0, 3.0
EVENTS = (
    "sigkill",
    "sigterm",
    "terminate-backends",
    "restart-fast",
    "restart-immediate",
    "stats-lock",
    "operator-reap",
    "keyed-repost",
    "freeze",
    "mutex-repost",
    "retention",
)
MUTEX_TYPE, MUTEX_CUSTOMERS = "chaos-mutex", ("acme", "globex", "initech")
PARENT_TYPE, FAN_INS = "chaos-parent", 4
#: 6,000 characters that do not compress (an index entry is measured compressed)
BIG_NOTE = base64.b64encode(random.Random(SEED).randbytes(4_500)).decode()


@dataclass
class Ledger:
    """What the test did and saw, for the final accounting."""

    posted: list[uuid.UUID] = field(default_factory=list)
    keyed: dict[uuid.UUID, str] = field(default_factory=dict)  # job id -> its key
    reposted: set[uuid.UUID] = field(default_factory=set)
    killed: set[int] = field(default_factory=set)  # SIGKILL and SIGTERM
    exited: dict[int, float] = field(default_factory=dict)  # pid -> when it was seen gone
    #: partitions: [start, end (None while frozen), the pid cut off]
    freezes: list[list[Any]] = field(default_factory=list)
    events: collections.Counter[str] = field(default_factory=collections.Counter)
    reaped_by_operator: int = 0
    #: posted by the application inside its own transactions (committed ones only), and
    #: those it posted again by key (each then runs again if it had finished or was running)
    app_posted: set[uuid.UUID] = field(default_factory=set)
    app_reposted: set[uuid.UUID] = field(default_factory=set)
    #: the per-customer type: job id -> its key; those re-posted with another customer
    mutex: dict[uuid.UUID, str] = field(default_factory=dict)
    mutex_reposted: set[uuid.UUID] = field(default_factory=set)
    #: fan-in jobs and the parents each waits for
    fan_ins: dict[uuid.UUID, list[uuid.UUID]] = field(default_factory=dict)
    purged_by_retention: int = 0


def _query(dsn: str, sql: str, params: Any = None) -> list[Any]:
    """One statement on a fresh connection, retried while the server restarts."""
    for attempt in range(60):
        try:
            with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as c:
                return c.execute(sql, params).fetchall()
        except psycopg.OperationalError:
            if attempt == 59:
                raise
            time.sleep(0.5)
    return []


class Workers:
    """Three worker slots, restarted when they end (as a supervisor would)."""

    def __init__(self, dsn: str, proxy: FreezableProxy, log_dir: Path, ledger: Ledger) -> None:
        self.dsn = dsn
        self.proxy = proxy
        self.log_dir = log_dir
        self.ledger = ledger
        self.procs: list[subprocess.Popen[str] | None] = [None] * SLOTS
        self.all: list[subprocess.Popen[str]] = []
        self.frozen = False
        self.env = {"SKTEST_LOG_DIR": str(log_dir), "SKTEST_CHAOS_EVERY": f"{EVERY_BEFORE:g}s"}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._supervise, daemon=True)

    def start(self) -> None:
        for slot in range(SLOTS):
            self._spawn(slot)
        self._thread.start()

    def _spawn(self, slot: int) -> None:
        dsn = self.proxy.dsn if slot == 0 else self.dsn
        p = subprocess.Popen(
            skconsole_cmd(
                "--dsn",
                dsn,
                "worker",
                "--tasks",
                "tests.support.tasks_chaos",
                "--concurrency",
                "30",
                "--grace",
                "2s",
                "--lease",
                SHORT_LEASE,
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **self.env},
            cwd=ROOT,
            start_new_session=True,
        )
        p.drain = OutputDrain(p)  # type: ignore[attr-defined]
        self.procs[slot] = p
        self.all.append(p)

    def _supervise(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                for slot, p in enumerate(self.procs):
                    if p is not None and p.poll() is not None:
                        self.ledger.exited.setdefault(p.pid, time.time())
                        self.procs[slot] = None
                    if self.procs[slot] is None and not (slot == 0 and self.frozen):
                        self._spawn(slot)
            time.sleep(0.5)

    def pick(self, rng: random.Random, *, direct: bool = False) -> subprocess.Popen[str] | None:
        with self._lock:
            live = [
                p
                for s, p in enumerate(self.procs)
                if p is not None and p.poll() is None and (s > 0 or not direct)
            ]
        return rng.choice(live) if live else None

    def signal(self, rng: random.Random, signum: int) -> int | None:
        p = self.pick(rng)
        if p is None:
            return None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signum)
        self.ledger.killed.add(p.pid)
        if signum == signal.SIGKILL:
            self.ledger.exited.setdefault(p.pid, time.time())
        return p.pid

    def rolling_restart(self, every_s: float) -> None:
        """A deploy: workers started from now on run the new code; each running one is
        stopped (SIGTERM) in turn and replaced by the supervisor."""
        self.env["SKTEST_CHAOS_EVERY"] = f"{every_s:g}s"
        with self._lock:
            running = [p for p in self.procs if p is not None and p.poll() is None]
        for p in running:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
            self.ledger.killed.add(p.pid)
            time.sleep(1.0)

    def slot0_pid(self) -> int | None:
        p = self.procs[0]
        return p.pid if p is not None else None

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for p in self.all:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGTERM)
        for p in self.all:
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)


def _jobs_for(rng: random.Random, n: int, serial: int) -> list[Job]:
    jobs = []
    for i in range(n):
        kind = rng.random()
        long = kind < 0.10
        seconds = rng.uniform(0.5, 3.0) if long else rng.uniform(0.0, 0.02)
        task_type = "chaos-sync" if rng.random() < 0.4 else "chaos-async"
        key = f"chaos-{SEED}-{serial}-{i}" if long and rng.random() < 0.3 else None
        payload: dict[str, Any] = {"s": round(seconds, 3), "v": 1}
        if rng.random() < 0.02:
            payload["note"] = BIG_NOTE  # at the search index's path
        jobs.append(Job(task_type, payload, key=key))
    if rng.random() < 0.5:
        cust = rng.choice(MUTEX_CUSTOMERS)
        jobs.append(
            Job(MUTEX_TYPE, {"cust": cust, "s": round(rng.uniform(0.2, 1.0), 3)},
                key=f"mutex-{SEED}-{serial}")
        )  # fmt: skip
    return jobs


def _post_exactly(dsn: str, jobs: list[Job]) -> None:
    """Post ``jobs``; after a lost connection, post only those the server does not have
    (a blind retry could re-run a keyed job that already finished)."""
    todo = jobs
    for _ in range(60):
        try:
            with Producer(Database(dsn)) as p:
                p.post_many(todo)
            return
        except (psycopg.Error, ConnectError):  # the server restarts, or our session was ended
            time.sleep(0.5)
            with contextlib.suppress(psycopg.Error):
                have = {
                    r[0]
                    for r in _query(
                        dsn,
                        "SELECT task_id FROM sk_task_results_t WHERE task_id = ANY(%s)",
                        ([j.task_id for j in todo],),
                    )
                }
                todo = [j for j in todo if j.task_id not in have]
                if not todo:
                    return
    raise AssertionError("could not post a batch in 30 s")


class Stream:
    """Posts JOBS jobs evenly over DURATION_S in small batches."""

    def __init__(self, dsn: str, ledger: Ledger, rng: random.Random) -> None:
        self.dsn = dsn
        self.ledger = ledger
        self.rng = rng
        self.errors: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def join(self) -> None:
        self._thread.join(DURATION_S + 120)
        assert not self.errors, self.errors

    def _run(self) -> None:
        try:
            ticks = int(DURATION_S * 10)
            per_tick = max(1, JOBS // ticks)
            started = time.monotonic()
            for tick in range(ticks):
                jobs = _jobs_for(self.rng, per_tick, tick)
                _post_exactly(self.dsn, jobs)
                self.ledger.posted.extend(j.task_id for j in jobs)
                for j in jobs:
                    if j.key is not None and j.task_type == MUTEX_TYPE:
                        self.ledger.mutex[j.task_id] = j.key
                    elif j.key is not None:
                        self.ledger.keyed[j.task_id] = j.key
                time.sleep(max(0.0, started + (tick + 1) * 0.1 - time.monotonic()))
        except BaseException as exc:
            self.errors.append(exc)


class Application:
    """A web application posting keyed jobs of the limited type inside its own
    transactions, each kept open a while (its other work), and re-posting some that wait:
    claims must go around what it holds, and other types must keep flowing."""

    def __init__(self, dsn: str, ledger: Ledger, rng: random.Random) -> None:
        self.dsn = dsn
        self.ledger = ledger
        self.rng = rng
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)
        assert not self.errors, self.errors

    def _run(self) -> None:
        serial = 0
        while not self._stop.is_set():
            batch = []
            for _ in range(3):
                serial += 1
                key = f"app-{SEED}-{serial}"
                batch.append(
                    Job(LIMITED_TYPE, {"s": round(self.rng.uniform(0.05, 0.3), 3)}, key=key)
                )
            if serial > 9:  # a key of an earlier batch: the job (usually still waiting) anew
                key = f"app-{SEED}-{serial - self.rng.randint(3, 9)}"
                batch.append(Job(LIMITED_TYPE, {"s": 0.05, "v": 2}, key=key))
            try:
                with (
                    psycopg.connect(self.dsn, connect_timeout=5) as app,
                    Producer(Database(self.dsn)) as producer,
                ):
                    ids = producer.post_many(batch, connection=app).ids
                    time.sleep(self.rng.uniform(0.2, 1.0))  # the rest of its request
                    app.commit()
                self.ledger.app_posted.update(ids)
                self.ledger.app_reposted.update(j.task_id for j in batch if j.payload.get("v") == 2)
            except (psycopg.Error, ConnectError):
                time.sleep(0.5)  # the server restarts or ended our session: nothing committed
            except BaseException as exc:
                self.errors.append(exc)
                return
            time.sleep(0.1)


def _ticks(every_s: float, start: float, end: float) -> dict[uuid.UUID, float]:
    """The tick ids of an interval schedule between two times, with each tick's time."""
    schedule = Schedule(every=every_s)
    out = {}
    tick = schedule.latest_tick(datetime.fromtimestamp(start, UTC))
    while tick.timestamp() <= end:
        out[tick_id(TICK_TYPE, tick)] = tick.timestamp()
        tick = schedule.next_tick(tick)
    return out


def _hold_stats_rows(dsn: str, until: float) -> None:
    with contextlib.suppress(psycopg.Error), psycopg.connect(dsn) as locker:
        locker.execute("SELECT * FROM sk_task_execution_time_stats_t FOR UPDATE")
        locker.execute("SELECT * FROM sk_metrics_t FOR UPDATE")
        while time.time() < until:
            time.sleep(0.2)
        locker.rollback()


def _repost_running_keyed(dsn: str, ledger: Ledger) -> bool:
    running = {
        r[0]
        for r in _query(
            dsn,
            "SELECT task_id FROM sk_task_results_t WHERE task_status = 2 AND task_id = ANY(%s)",
            (list(set(ledger.keyed) - ledger.reposted),),
        )
    }
    if not running:
        return False
    task_id = sorted(running)[0]
    row = _query(dsn, "SELECT task_type FROM sk_task_results_t WHERE task_id = %s", (task_id,))
    _post_exactly(dsn, [Job(row[0][0], {"s": 0.01, "v": 2}, key=ledger.keyed[task_id])])
    ledger.reposted.add(task_id)
    return True


def _repost_running_mutex(dsn: str, ledger: Ledger, rng: random.Random) -> bool:
    """Re-post a running job of the per-customer type by its key, for another customer:
    its attempt must still count against the customer it started with."""
    rows = _query(
        dsn,
        "SELECT task_id, sk_try_jsonb(task_payload) ->> 'cust' FROM sk_task_results_t"
        " WHERE task_status = 2 AND task_id = ANY(%s)",
        (list(set(ledger.mutex) - ledger.mutex_reposted),),
    )
    if not rows:
        return False
    task_id, cust = sorted(rows)[0]
    other = rng.choice([c for c in MUTEX_CUSTOMERS if c != cust])
    payload = {"cust": other, "s": 0.3, "v": 2}
    _post_exactly(dsn, [Job(MUTEX_TYPE, payload, key=ledger.mutex[task_id])])
    ledger.mutex_reposted.add(task_id)
    return True


def _retention_round(dsn: str) -> int:
    """One retention round, as a worker's upkeep runs it (its code, its statement)."""

    async def main() -> int:
        link = Link(Database(dsn), "chaos-retention", settings={}, timeout=30.0)
        try:
            return await Retention(link, MetricsBuffer(), "chaos-test").run_once()
        finally:
            await link.close()

    try:
        return asyncio.run(main())
    except (LinkLost, psycopg.Error):
        return 0  # the server restarts: this round purged nothing it committed


def _post_fan_ins(dsn: str, ledger: Ledger) -> None:
    """Fan-in jobs, each after a quick parent and one that runs the whole chaos through:
    the quick one's result is purged by retention while the job still waits."""
    with Producer(Database(dsn)) as p:
        for _ in range(FAN_INS):
            quick = p.post(PARENT_TYPE, {"s": 0.01})
            slow = p.post(PARENT_TYPE, {"s": DURATION_S})
            child = p.post("chaos-async", {"s": 0.01, "v": 1}, after=[quick, slow])
            ledger.fan_ins[child] = [quick, slow]


def _mutex_overlaps(runs: dict[str, list[Any]]) -> list[tuple[Any, Any]]:
    """Executions of the per-customer type for one customer that overlap in time."""
    by_customer: dict[str, list[Any]] = {}
    for job_runs in runs.values():
        for run in job_runs:
            if "/v" in run.note:
                by_customer.setdefault(run.note.split("/")[0], []).append(run)
    found = []
    for customer_runs in by_customer.values():
        customer_runs.sort(key=lambda r: r.started)
        found += overlaps(customer_runs)
    return found


def _do(
    event: str,
    dsn: str,
    workers: Workers,
    proxy: FreezableProxy,
    ledger: Ledger,
    rng: random.Random,
) -> None:
    if event == "sigkill":
        workers.signal(rng, signal.SIGKILL)
    elif event == "sigterm":
        workers.signal(rng, signal.SIGTERM)
    elif event == "terminate-backends":
        _query(
            dsn,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name LIKE 'skconsole%%' AND pid <> pg_backend_pid()"
            " AND datname = current_database()",
        )
    elif event.startswith("restart-"):
        restart_server(dsn, event.removeprefix("restart-"))
    elif event == "stats-lock":
        threading.Thread(
            target=_hold_stats_rows, args=(dsn, time.time() + STATS_LOCK_S), daemon=True
        ).start()
    elif event == "operator-reap":
        proc = subprocess.run(
            skconsole_cmd("--dsn", dsn, "reap", "--yes", "--json"),
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        if proc.returncode == 0:
            ledger.reaped_by_operator += int(json.loads(proc.stdout).get("changed", 0))
    elif event == "keyed-repost":
        deadline = time.monotonic() + 10
        while not _repost_running_keyed(dsn, ledger):
            if time.monotonic() > deadline:
                return  # nothing keyed ran in 10 s: not counted
            time.sleep(0.2)
    elif event == "mutex-repost":
        deadline = time.monotonic() + 10
        while not _repost_running_mutex(dsn, ledger, rng):
            if time.monotonic() > deadline:
                return  # no job of the type ran in 10 s: not counted
            time.sleep(0.2)
    elif event == "retention":
        ledger.purged_by_retention += _retention_round(dsn)
    elif event == "freeze":
        workers.frozen = True  # slot 0 is not restarted while frozen: only this pid is cut off
        window: list[Any] = [time.time(), None, workers.slot0_pid()]
        ledger.freezes.append(window)
        proxy.freeze()

        def thaw() -> None:
            time.sleep(FREEZE_S)
            proxy.thaw()
            window[1] = time.time()
            workers.frozen = False

        threading.Thread(target=thaw, daemon=True).start()
    ledger.events[event] += 1


def _schedule(rng: random.Random) -> list[str]:
    events = list(EVENTS) + [rng.choice(EVENTS) for _ in range(5)]
    rng.shuffle(events)
    return events


def _metric(dsn: str, metric_id: str) -> int:
    rows = _query(
        dsn,
        "SELECT coalesce(sum(metric_value), 0) FROM sk_metrics_t WHERE metric_id = %s",
        (metric_id,),
    )
    return int(rows[0][0])


@pytest.mark.server
@pytest.mark.restarts_server
def test_chaos_loses_no_job_and_runs_none_twice_at_once(
    dsn: str, conn: psycopg.Connection[Any], log_dir: Path
) -> None:
    rng = random.Random(SEED)
    ledger = Ledger()
    conn.execute(
        "INSERT INTO sk_task_types_t (task_type, tt_max_running) VALUES (%s, %s)",
        (LIMITED_TYPE, LIMITED_CONCURRENCY),
    )
    actor = ops.Actor(user="chaos", host="chaos-test")
    ops.LIMIT.execute(
        conn, ops.Selection(task_type=MUTEX_TYPE), ops.LimitParams(concurrency=1, per=("cust",)),
        actor=actor,
    )  # fmt: skip
    ops.RETENTION.execute(
        conn, ops.Selection(task_type=PARENT_TYPE), ops.RetentionParams(older_than_s=1.0),
        actor=actor,
    )  # fmt: skip
    ops.FIND_INDEX_ADD.execute(conn, ops.Selection(), FindIndexParams(("note",)), actor=actor)
    _post_fan_ins(dsn, ledger)
    proxy = FreezableProxy(dsn).start()
    workers = Workers(dsn, proxy, log_dir, ledger)
    stream = Stream(dsn, ledger, random.Random(SEED + 1))
    app = Application(dsn, ledger, random.Random(SEED + 2))
    t0 = time.monotonic()
    wall0 = time.time()
    deployed_at = None
    try:
        workers.start()
        stream.start()
        app.start()
        plan = _schedule(rng)
        gap = DURATION_S / (len(plan) + 1)
        for i, event in enumerate(plan):
            time.sleep(max(0.0, t0 + gap * (i + 1) - time.monotonic()))
            _do(event, dsn, workers, proxy, ledger, rng)
            if deployed_at is None and i >= len(plan) // 2:
                deployed_at = time.time()
                workers.rolling_restart(EVERY_AFTER)
        stream.join()
        app.stop()
        chaos_s = time.monotonic() - t0
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            row = _query(
                dsn,
                "SELECT (SELECT count(*) FROM sk_task_results_t WHERE task_status <> 3),"
                " (SELECT count(*) FROM sk_tasks_queue_t), (SELECT count(*) FROM sk_task_results_t)",
            )[0]
            if row[0] == 0 and row[1] == 0 and row[2] >= len(set(ledger.posted)):
                break
            time.sleep(1.0)
        drained_s = time.monotonic() - t0 - chaos_s
        fences = _metric(dsn, "worker@self-fence-count")
        reaped = _metric(dsn, "reaper@reaped-count")
        fenced_results = _metric(dsn, "worker@fenced-result-count")
    finally:
        proxy.thaw()
        workers.stop()
        proxy.close()

    # every job but the fan-in parents, whose results retention purges
    statuses = dict(
        _query(
            dsn,
            "SELECT task_status, count(*) FROM sk_task_results_t WHERE task_type <> %s GROUP BY 1",
            (PARENT_TYPE,),
        )
    )
    queued = _query(dsn, "SELECT count(*) FROM sk_tasks_queue_t")[0][0]
    runs = executions(log_dir, deaths=ledger.exited)
    done = completions(log_dir)
    ticks = {
        r[0]
        for r in _query(
            dsn, "SELECT task_id FROM sk_task_results_t WHERE task_type = %s", (TICK_TYPE,)
        )
    }
    [[published]] = _query(
        dsn,
        "SELECT extract(epoch FROM sch_defined_at_ts) FROM sk_schedules_t WHERE task_type = %s",
        (TICK_TYPE,),
    )
    end = time.time()
    # a tick of the old definition is taken at the latest a look (1 s) after the new one
    # was published; the new one's latest tick may precede its publication by a period
    old_ticks = {
        t: at for t, at in _ticks(EVERY_BEFORE, wall0, end).items() if at <= float(published) + 2
    }
    new_ticks = {
        t: at
        for t, at in _ticks(EVERY_AFTER, wall0, end).items()
        if at >= float(published) - EVERY_AFTER
    }
    posted = set(ledger.posted) | ledger.app_posted | ticks | set(ledger.fan_ins)
    parents_gone = {p for parents in ledger.fan_ins.values() for p in parents} - {
        r[0] for r in _query(dsn, "SELECT task_id FROM sk_task_results_t")
    }
    mutex_overlapping = _mutex_overlaps(runs)

    overlapping = {t: overlaps(r) for t, r in runs.items() if overlaps(r)}
    causes: collections.Counter[str] = collections.Counter()
    unexplained: dict[str, list[Any]] = {}
    for task_id, job_runs in runs.items():
        for run in job_runs[:-1]:
            if uuid.UUID(task_id) in ledger.reposted and run.note == "v1":
                causes["keyed re-post"] += 1
            elif uuid.UUID(task_id) in ledger.mutex_reposted and run.note.endswith("/v1"):
                causes["keyed re-post (per customer)"] += 1
            elif uuid.UUID(task_id) in ledger.app_reposted:
                causes["keyed re-post (application)"] += 1
            elif run.pid in ledger.killed:
                causes["worker killed"] += 1
            elif any(
                run.pid == pid and run.ended >= start - 5 and (end is None or run.started <= end)
                for start, end, pid in ledger.freezes
            ):
                causes["worker partitioned"] += 1
            else:
                unexplained.setdefault(task_id, job_runs)
    reposted_last = [runs[str(t)][-1].note for t in ledger.reposted if str(t) in runs]

    print(
        f"\nseed {SEED}: {len(posted):,} jobs posted over {chaos_s:.0f}s, all final "
        f"{drained_s:.0f}s later; events {dict(sorted(ledger.events.items()))}"
        f"\nexecutions {sum(len(r) for r in runs.values()):,} for {len(runs):,} jobs; "
        f"re-executions by cause {dict(causes)}; self-fences {fences}; reaped {reaped} "
        f"(by the operator {ledger.reaped_by_operator}); fenced late results {fenced_results}; "
        f"worker processes started {len(workers.all)}; overlapping jobs {len(overlapping)}"
        f"\nper-customer jobs {len(ledger.mutex)} (re-posted for another customer"
        f" {len(ledger.mutex_reposted)}), overlapping per customer {len(mutex_overlapping)};"
        f" fan-ins {len(ledger.fan_ins)}, their parents purged by retention"
        f" {len(parents_gone)} (results purged in all {ledger.purged_by_retention})"
    )
    assert statuses == {JobStatus.PROCESSED: len(posted)}, statuses
    assert queued == 0
    assert set(done) >= {str(t) for t in posted}, "every job ran to completion"
    assert overlapping == {}, list(overlapping.items())[:3]
    assert unexplained == {}, (
        f"killed {sorted(ledger.killed)}, exited {ledger.exited}, freezes {ledger.freezes}: "
        + "; ".join(f"{t}: {r}" for t, r in list(unexplained.items())[:3])
    )
    assert all(note == "v2" for note in reposted_last), reposted_last
    assert mutex_overlapping == [], mutex_overlapping[:3]
    assert parents_gone, "no fan-in parent was purged while its job waited"
    assert all(ledger.events[event] >= 1 for event in EVENTS), ledger.events
    assert ledger.app_posted, "the application posted nothing"
    assert deployed_at is not None and float(published) >= deployed_at - 1
    assert ticks and ticks <= set(old_ticks) | set(new_ticks), (
        f"ticks of neither definition at its time: {sorted(ticks - set(old_ticks) - set(new_ticks))[:3]}"
    )
