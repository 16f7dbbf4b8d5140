"""The story ``skconsole demo`` tells: a busy queue with problems to triage.

Within seconds of starting, a newcomer should see work moving and something
to fix: several task types at different priorities, delayed jobs, a flaky
handler, handlers failing with a few distinct kinds of error (so there are
failure groups), fatal errors, a handler that hangs past its timeout, and a
worker that crashed holding jobs (so there are hung jobs to reap). The
handlers are those of :mod:`skconsole.demo`.

Engine side: no UI imports. The console starts these helpers and stops them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from psycopg import conninfo, sql

from skconsole import read
from skconsole.db.connect import Database
from skconsole.db.embedded import default_data_dir
from skconsole.db.schema import setup_schema
from skconsole.producer import Job, Producer

log = logging.getLogger("skconsole.demo")

DEMO_DATABASE = "skconsole_demo"
SOURCES = ("checkout@web-1", "checkout@web-2", "billing@cron-1", "mailer@web-3")
FAIL_KINDS = ("timeout", "timeout", "timeout", "declined", "declined", "keyerror", "value")
HANG_JOBS = 3


def demo_data_dir() -> Path:
    """The demo's own embedded server, so its jobs never mix with real ones."""
    return default_data_dir().parent / "demo-pgdata"


def fresh_demo_database(server: Database) -> Database:
    """A new, empty ``skconsole_demo`` database on the demo's own server, with the schema.

    Only ever called on the demo's embedded server: every start tells the same
    story from the beginning instead of piling up the jobs of earlier runs.
    """
    name = sql.Identifier(DEMO_DATABASE)
    with server.connect(application_name="skconsole-demo") as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(name))
    params = conninfo.conninfo_to_dict(server.dsn)
    params["dbname"] = DEMO_DATABASE
    db = Database(
        conninfo.make_conninfo(**params),  # type: ignore[arg-type]
        application_name=server.application_name,
        description=f"{server.description} · database {DEMO_DATABASE}",
        keepalive=server.keepalive,
    )
    with db.connect() as conn:
        setup_schema(conn)
    return db


def _source(rng: random.Random) -> str:
    return rng.choice(SOURCES)


def _sleep_job(rng: random.Random, priority: int = 0, delay: float = 0.0) -> Job:
    return Job(
        "demo.sleep",
        {
            "seconds": round(rng.uniform(0.2, 2.5), 2),
            "to": f"user{rng.randint(1, 99999)}@example.com",
        },
        priority=priority,
        delay=delay,
        source=_source(rng),
    )


def _failing_job(rng: random.Random, kind: str | None = None) -> Job:
    kind = kind or rng.choice(FAIL_KINDS)
    return Job(
        "demo.fail",
        {"kind": kind, "n": rng.randint(10_000, 99_999)},
        priority=rng.choice((0, 1, 2)),
        source=_source(rng),
    )


def _order_job(rng: random.Random) -> Job:
    return Job(
        "demo.order.validate",
        {"order": rng.randint(10_000, 99_999), "amount": rng.randint(5, 500)},
        priority=1,
        source=_source(rng),
    )


def initial_jobs(rng: random.Random) -> list[Job]:
    """About 900 jobs: the backlog the console opens on."""
    jobs: list[Job] = []
    jobs += [_sleep_job(rng, priority=rng.choice((0, 1, 1, 2, 5))) for _ in range(320)]
    jobs += [
        Job(
            "demo.sleep_sync",
            {"seconds": round(rng.uniform(0.1, 0.6), 2)},
            priority=3,
            source=_source(rng),
        )
        for _ in range(80)
    ]
    jobs += [
        Job(
            "demo.flaky",
            {"p": 0.3, "seconds": round(rng.uniform(0.05, 0.4), 2)},
            priority=rng.choice((0, 1)),
            source=_source(rng),
        )
        for _ in range(160)
    ]
    jobs += [_failing_job(rng, kind) for kind in FAIL_KINDS for _ in range(12)]
    jobs += [
        Job("demo.fatal", {"n": rng.randint(100, 999)}, priority=2, source=_source(rng))
        for _ in range(20)
    ]
    jobs += [Job("demo.noop", {"i": i}, priority=9, source=_source(rng)) for i in range(200)]
    # delayed: reminders and retries due over the next minutes ("scheduled" in the console)
    jobs += [_sleep_job(rng, priority=1, delay=rng.uniform(20, 600)) for _ in range(60)]
    # orders: a three-stage pipeline (validate, charge, ship), lineage in the job detail
    jobs += [_order_job(rng) for _ in range(40)]
    rng.shuffle(jobs)
    return jobs


def trickle_jobs(rng: random.Random, n: int) -> list[Job]:
    """New work arriving: mostly fine, some flaky, a little failing or hanging."""
    out: list[Job] = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.50:
            out.append(_sleep_job(rng, priority=rng.choice((0, 1, 2))))
        elif roll < 0.70:
            out.append(Job("demo.flaky", {"p": 0.3}, priority=1, source=_source(rng)))
        elif roll < 0.83:
            out.append(Job("demo.noop", None, priority=5, source=_source(rng)))
        elif roll < 0.93:
            out.append(_failing_job(rng))
        elif roll < 0.96:
            out.append(Job("demo.fatal", {"n": rng.randint(100, 999)}, source=_source(rng)))
        elif roll < 0.97:
            out.append(_sleep_job(rng, priority=1, delay=rng.uniform(30, 300)))
        elif roll < 0.98:
            out.append(_order_job(rng))
        else:
            out.append(Job("demo.hang", {"seconds": 3600}, priority=4, source=_source(rng)))
    return out


class Trickle:
    """A thread posting about ``rate`` jobs per second until stopped; rides out a lost server."""

    def __init__(self, db: Database, rate: float = 3.0, seed: int | None = None) -> None:
        self.db = db
        self.rate = rate
        self.posted = 0
        self._rng = random.Random(seed)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="skconsole-demo-trickle", daemon=True
        )

    def start(self) -> None:
        if self.rate > 0:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def _run(self) -> None:
        producer = Producer(self.db, source="skconsole-demo")
        backoff = 1.0
        try:
            while not self._stop.is_set():
                burst = max(1, int(self._rng.expovariate(1.0 / max(self.rate, 0.1)) + 0.5))
                try:
                    self.posted += producer.post_many(trickle_jobs(self._rng, burst)).posted
                    backoff = 1.0
                except Exception as exc:  # the server may be restarting: keep trying
                    log.warning("demo trickle: %s; retrying in %.0fs", exc, backoff)
                    producer.close()
                    self._stop.wait(backoff)
                    backoff = min(backoff * 2, 10.0)
                    continue
                self._stop.wait(1.0)
        finally:
            producer.close()


class CrashedWorker:
    """A worker killed with SIGKILL while it held jobs: the console shows them hung.

    Posts a few jobs that hang, starts a real ``skconsole worker`` for that type
    only, waits until it holds them, and kills it. The console sees its
    connection gone at once, and its jobs hung once its lease lapses (12 s
    later), until someone reaps them.
    """

    def __init__(self, db: Database, jobs: int = HANG_JOBS, timeout: float = 45.0) -> None:
        self.db = db
        self.jobs = jobs
        self.timeout = timeout
        self.pid: int | None = None
        self.error: str | None = None

    def run(self) -> bool:
        with Producer(self.db, source="batch@cron-2") as producer:
            producer.post_many([Job("demo.hang", {"seconds": 3600}) for _ in range(self.jobs)])
        cmd = [
            sys.executable,
            "-m",
            "skconsole",
            "--dsn",
            self.db.dsn,
            "worker",
            "--tasks",
            "skconsole.demo",
            "--types",
            "demo.hang",
            "--concurrency",
            "10",
        ]
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.pid = proc.pid
        try:
            return self._wait_holding(proc)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)

    def _wait_holding(self, proc: subprocess.Popen[bytes]) -> bool:
        deadline = time.monotonic() + self.timeout
        with self.db.connect(application_name="skconsole-demo") as conn:
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    self.error = f"the demo worker exited early ({proc.returncode})"
                    return False
                held = [w for w in read.workers(conn) if w.pid == proc.pid and w.alive]
                if held and held[0].in_flight >= self.jobs:
                    return True
                time.sleep(0.2)
        self.error = "the demo worker did not claim its jobs in time"
        return False


class DemoScenario:
    """The whole demo: initial backlog, the crash, then a steady trickle."""

    def __init__(self, db: Database, *, rate: float = 3.0, seed: int | None = None) -> None:
        self.db = db
        self.rng = random.Random(seed)
        self.trickle = Trickle(db, rate, seed)
        self.crash = CrashedWorker(db)
        self.ready = threading.Event()  # set once the crash happened (or failed)
        self._thread: threading.Thread | None = None

    def post_initial(self) -> int:
        with Producer(self.db, source="skconsole-demo") as producer:
            return producer.post_many(initial_jobs(self.rng)).posted

    def start(self, on_error: Callable[[str], None] | None = None) -> None:
        """Simulate the crash in the background, then start the trickle."""

        def body() -> None:
            try:
                if not self.crash.run() and on_error is not None and self.crash.error:
                    on_error(self.crash.error)
            except Exception as exc:
                log.warning("demo crash simulation failed: %s", exc)
            finally:
                self.ready.set()
                self.trickle.start()

        self._thread = threading.Thread(target=body, name="skconsole-demo-crash", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.ready.set()
        self.trickle.stop()
