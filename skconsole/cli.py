"""The ``skconsole`` command line (Typer).

Every command accepts the connection options, before or after its name;
errors that a person can act on are printed as one line with a non-zero exit
code, never as a traceback (set SKCONSOLE_DEBUG=1 to see one).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import psycopg
import typer
from rich.console import Console
from rich.markup import escape

from skconsole.db.connect import Database, connect_error_message
from skconsole.db.embedded import EmbeddedServer, default_data_dir
from skconsole.db.schema import setup_schema
from skconsole.db.target import open_database, resolve_database
from skconsole.durations import parse_duration
from skconsole.errors import ConfigError, ReadOnlyError, SkconsoleError

app = typer.Typer(
    name="skconsole",
    help="A PostgreSQL job queue with a terminal operations console (Stakhanovise.NET layout)."
    " The connection options (--dsn, --data-dir, --no-setup, --read-only) go before or after"
    " the command.",
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    add_completion=False,
)
db_app = typer.Typer(
    help="Run the embedded PostgreSQL server in the background.", no_args_is_help=True
)
app.add_typer(db_app, name="db")

out = Console()
err = Console(stderr=True)


@dataclass
class Options:
    dsn: str | None
    data_dir: Path | None
    setup: bool
    read_only: bool

    def open(self, application_name: str = "skconsole-cli", *, write: bool = False) -> Database:
        if write and self.read_only:
            raise ReadOnlyError("refused: read-only mode (--read-only or SKCONSOLE_READ_ONLY=1)")
        return open_database(
            self.dsn,
            self.data_dir,
            setup=self.setup,
            read_only=self.read_only,
            application_name=application_name,
        )


def _opts(ctx: typer.Context) -> Options:
    opts = ctx.find_root().obj
    assert isinstance(opts, Options)
    return opts


@app.callback(invoke_without_command=True)
def main_options(
    ctx: typer.Context,
    dsn: Annotated[
        str | None,
        typer.Option(
            "--dsn",
            envvar="SKCONSOLE_DSN",
            help="PostgreSQL DSN; default: libpq environment, else embedded server.",
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            envvar="SKCONSOLE_DATA_DIR",
            help=f"Embedded server data directory [default: {default_data_dir()}]",
        ),
    ] = None,
    no_setup: Annotated[
        bool, typer.Option("--no-setup", help="Do not create missing schema objects; fail instead.")
    ] = False,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only",
            envvar="SKCONSOLE_READ_ONLY",
            help="Refuse every write; sessions are read-only too.",
        ),
    ] = False,
    refresh: Annotated[
        str,
        typer.Option(
            "--refresh", help="Console: refresh interval (0.5s to 60s; + and - change it live)."
        ),
    ] = "2s",
    tasks: Annotated[
        str | None,
        typer.Option(
            "--tasks",
            help="Console: run these task handlers (module or module:attr) in an embedded engine.",
        ),
    ] = None,
    workers: Annotated[
        int,
        typer.Option("--workers", min=1, help="Console: jobs the embedded engine runs at once."),
    ] = 4,
) -> None:
    """Without a command: the operations console (`skconsole demo` shows it on a live demo queue)."""
    ctx.obj = Options(dsn=dsn, data_dir=data_dir, setup=not no_setup, read_only=read_only)
    if ctx.invoked_subcommand is None:
        from skconsole.tui.launch import ConsoleOptions, run_console

        code = run_console(
            ConsoleOptions(
                dsn=dsn,
                data_dir=data_dir,
                setup=not no_setup,
                read_only=read_only,
                refresh=_refresh_interval(refresh),
                tasks=tasks,
                workers=workers,
            )
        )
        raise typer.Exit(code)


def _refresh_interval(text: str) -> float:
    seconds = parse_duration(text)
    if not 0.5 <= seconds <= 60:
        raise ConfigError(f"--refresh must be between 0.5s and 60s, got {text!r}")
    return seconds


# -- demo ----------------------------------------------------------------------------
@app.command()
def demo(
    ctx: typer.Context,
    rate: Annotated[
        float, typer.Option("--rate", min=0, help="New demo jobs per second, on average")
    ] = 3.0,
    workers: Annotated[
        int, typer.Option("--workers", min=1, help="Jobs the embedded engine runs at once")
    ] = 8,
    refresh: Annotated[str, typer.Option("--refresh", help="Console refresh interval")] = "2s",
    seed: Annotated[
        int | None, typer.Option("--seed", help="Random seed, for a repeatable backlog")
    ] = None,
) -> None:
    """A live demo: a busy queue with failures and hung jobs, in the console.

    Runs on an embedded server of its own (a `demo-pgdata` directory beside the
    default one) unless --data-dir or an explicit --dsn says otherwise.
    """
    from skconsole.tui.launch import run_demo

    o = _opts(ctx)
    if o.read_only:
        raise ReadOnlyError("refused: the demo posts and runs jobs, and read-only mode is on")
    root = ctx.find_root()
    # a DSN from the environment may point at a real queue: only an explicit --dsn is used
    source = root.get_parameter_source("dsn")
    dsn = o.dsn if source is not None and source.name == "COMMANDLINE" else None
    code = run_demo(
        dsn, o.data_dir, rate=rate, workers=workers, refresh=_refresh_interval(refresh), seed=seed
    )
    raise typer.Exit(code)


# -- setup -------------------------------------------------------------------------
@app.command()
def setup(ctx: typer.Context) -> None:
    """Create the Stakhanovise tables and skconsole's additions (idempotent)."""
    o = _opts(ctx)
    if o.read_only:
        raise ReadOnlyError("refused: setup writes to the database and read-only mode is on")
    db = resolve_database(o.dsn, o.data_dir, application_name="skconsole-setup")
    with db.connect() as conn:
        changed = setup_schema(conn)
    out.print(
        f"schema {'created/updated' if changed else 'already up to date'} on {db.description}"
    )


# -- enqueue -------------------------------------------------------------------------
@app.command()
def enqueue(
    ctx: typer.Context,
    task_type: Annotated[str, typer.Argument(metavar="TYPE", help="Task type, e.g. emails.send")],
    payload: Annotated[str, typer.Option("--payload", help="JSON payload")] = "null",
    priority: Annotated[int, typer.Option("--priority", help="Lower runs first; >= 0")] = 0,
    delay: Annotated[
        str, typer.Option("--delay", help="Run no sooner than this from now, e.g. 10s, 5m")
    ] = "0s",
    key: Annotated[
        str | None,
        typer.Option("--key", help="Job key: a waiting job with the same key is not posted twice"),
    ] = None,
    count: Annotated[
        int, typer.Option("--count", help="Post this many copies in one round trip")
    ] = 1,
    source: Annotated[
        str | None, typer.Option("--source", help="Who posts (default: skconsole@host:pid)")
    ] = None,
) -> None:
    """Post jobs."""
    from skconsole.producer import Job, Producer, validate_payload_json

    if count < 1:
        raise ConfigError("--count must be at least 1")
    if key is not None and count > 1:
        raise ConfigError("--key posts one job; it cannot be combined with --count > 1")
    text = validate_payload_json(payload)
    seconds = parse_duration(delay)
    jobs = [
        Job(task_type, priority=priority, delay=seconds, key=key, source=source, payload_json=text)
        for _ in range(count)
    ]
    db = _opts(ctx).open("skconsole-enqueue", write=True)
    with Producer(db) as producer:
        result = producer.post_many(jobs)
    if count == 1:
        state = (
            "posted"
            if result.posted
            else ("re-run requested" if result.rerun_requested else "already waiting (key)")
        )
        out.print(f"{result.ids[0]} {state}")
    else:
        out.print(f"posted {result.posted:,} job(s) of type {task_type}")


# -- worker --------------------------------------------------------------------------
@app.command()
def worker(
    ctx: typer.Context,
    tasks: Annotated[
        str,
        typer.Option(
            "--tasks", help="Module (or module:attr) with the TaskRegistry, e.g. skconsole.demo"
        ),
    ],
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="Jobs run at once per process")
    ] = 10,
    processes: Annotated[int, typer.Option("--processes", min=1, help="Worker processes")] = 1,
    types: Annotated[
        str | None, typer.Option("--types", help="Only these types, comma-separated")
    ] = None,
    burst: Annotated[
        bool, typer.Option("--burst", help="Exit when no eligible job is left")
    ] = False,
    grace: Annotated[
        str, typer.Option("--grace", help="On SIGTERM, how long running jobs may finish")
    ] = "10s",
    batch_size: Annotated[
        int, typer.Option("--batch-size", min=1, help="Most jobs claimed per round trip")
    ] = 100,
    poll: Annotated[
        str, typer.Option("--poll", help="Polling interval when no notification arrives")
    ] = "1s",
    lease: Annotated[
        str,
        typer.Option(
            "--lease",
            help="Liveness lease (5s to 10m): a worker that cannot renew it for 80% of it"
            " stops its jobs; others reap them after 120%",
        ),
    ] = "10s",
) -> None:
    """Run task handlers (headless engine)."""
    from skconsole.worker.engine import LEASE_MARGIN_SHARE, WorkerConfig
    from skconsole.worker.run import WorkerSpec, configure_logging, run_in_process, run_supervised

    o = _opts(ctx)
    if o.read_only:
        raise ReadOnlyError("refused: a worker writes results and read-only mode is on")
    lease_s = parse_duration(lease)
    if not 5 <= lease_s <= 600:
        raise ConfigError(f"--lease must be between 5s and 10m, got {lease!r}")
    config = WorkerConfig(
        concurrency=concurrency,
        batch_size=batch_size,
        burst=burst,
        grace_period=parse_duration(grace),
        poll_interval=parse_duration(poll),
        lease=lease_s,
        lease_margin=lease_s * LEASE_MARGIN_SHARE,
    )
    type_list = tuple(t.strip() for t in types.split(",") if t.strip()) if types else ()
    spec = WorkerSpec(
        tasks=tasks,
        types=type_list,
        dsn=o.dsn,
        data_dir=str(o.data_dir) if o.data_dir else None,
        setup=o.setup,
        config=config,
    )
    configure_logging()
    code = run_in_process(spec) if processes == 1 else run_supervised(spec, processes)
    raise typer.Exit(code)


# -- bench ---------------------------------------------------------------------------
@app.command()
def bench(
    ctx: typer.Context,
    jobs: Annotated[
        int, typer.Option("--jobs", min=1, help="No-op jobs to post and drain")
    ] = 50_000,
    processes: Annotated[
        int, typer.Option("--processes", min=1, help="Worker processes draining")
    ] = 2,
    latency_jobs: Annotated[
        int,
        typer.Option("--latency-jobs", min=10, help="Jobs posted one by one for pickup latency"),
    ] = 500,
    rate: Annotated[
        float, typer.Option("--rate", help="Jobs per second for the pickup-latency phase")
    ] = 100.0,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1)] = 200,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object")] = False,
) -> None:
    """Measure enqueue rate, drain rate and pickup latency with no-op jobs."""
    from skconsole.bench import BenchConfig, run_bench

    o = _opts(ctx)
    if o.read_only:
        raise ReadOnlyError("refused: the benchmark writes jobs and read-only mode is on")
    db = o.open("skconsole-bench", write=True)
    cfg = BenchConfig(
        jobs=jobs,
        processes=processes,
        latency_jobs=latency_jobs,
        rate=rate,
        concurrency=concurrency,
    )
    result = run_bench(
        db, cfg, progress=None if as_json else lambda m: err.print(f"[dim]{m}[/dim]")
    )
    if as_json:
        print(json.dumps(result))
        return
    out.print(f"server                 {result['server_version']}")
    out.print(f"jobs                   {result['jobs']:,}  processes {result['processes']}")
    out.print(f"enqueue                {result['enqueue_jobs_per_s']:,.0f} jobs/s")
    out.print(f"drain                  {result['drain_jobs_per_s']:,.0f} jobs/s")
    lat = result["pickup_latency_ms"]
    out.print(f"pickup latency         p50 {lat['p50']:.1f} ms  p99 {lat['p99']:.1f} ms")


# -- db ------------------------------------------------------------------------------
def _server(ctx: typer.Context) -> EmbeddedServer:
    o = _opts(ctx)
    if o.dsn:
        raise ConfigError(
            "`skconsole db` manages the embedded server; it does not apply with --dsn"
        )
    return EmbeddedServer(o.data_dir or os.environ.get("SKCONSOLE_DATA_DIR") or None)


@db_app.command("start")
def db_start(ctx: typer.Context) -> None:
    """Start the embedded server in the background (it keeps running until `db stop`)."""
    st = _server(ctx).start_background()
    out.print(f"embedded PostgreSQL running in {st.data_dir}")
    out.print(st.uri or "")


@db_app.command("stop")
def db_stop(ctx: typer.Context) -> None:
    """Stop the embedded server, whoever is using it."""
    server = _server(ctx)
    before = server.status()
    others = [p for p in before.registered_pids if p != before.holder_pid]
    st = server.stop()
    if others:
        err.print(
            f"note: {len(others)} other skconsole process(es) were attached: {', '.join(map(str, others))}"
        )
    out.print("stopped" if not st.running else "still running")


@db_app.command("status")
def db_status(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show whether the embedded server runs, its DSN and who is attached."""
    st = _server(ctx).status()
    if as_json:
        print(json.dumps(st.as_dict()))
        return
    out.print(f"data dir      {st.data_dir}{'' if st.initialized else ' (not initialised)'}")
    out.print(f"running       {'yes, pid ' + str(st.server_pid) if st.running else 'no'}")
    if st.uri:
        out.print(f"dsn           {st.uri}")
    out.print(
        f"held by       {'skconsole db start (pid ' + str(st.holder_pid) + ')' if st.holder_pid else 'no background holder'}"
    )
    out.print(f"attached pids {', '.join(map(str, st.registered_pids)) or '-'}")


@db_app.command("uri")
def db_uri(ctx: typer.Context) -> None:
    """Print the embedded server's DSN (it must be running: `skconsole db start`)."""
    st = _server(ctx).status()
    if not st.running or not st.uri:
        raise ConfigError("the embedded server is not running: start it with `skconsole db start`")
    print(st.uri)


def _fail(message: str) -> None:
    err.print(f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True)


def _register_commands() -> None:
    """Commands that live in modules of their own add themselves to ``app``."""
    import skconsole.cli_ops  # noqa: F401
    from skconsole import cli_status  # noqa: F401


_VALUE_OPTIONS = ("--dsn", "--data-dir")
_FLAG_OPTIONS = ("--no-setup", "--read-only")


def hoist_connection_options(argv: list[str]) -> list[str]:
    """Move the connection options to the front, where Click reads a group's options.

    People type ``skconsole worker --tasks m --dsn ...``; without this Click
    rejects ``--dsn`` there. Order is kept, so when an option is given twice the
    later one still wins. Nothing after ``--`` is touched.
    """
    hoisted: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i:])
            break
        if arg in _FLAG_OPTIONS or (arg.partition("=")[0] in _VALUE_OPTIONS and "=" in arg):
            hoisted.append(arg)
        elif arg in _VALUE_OPTIONS and i + 1 < len(argv):
            hoisted += [arg, argv[i + 1]]
            i += 1
        else:
            rest.append(arg)
        i += 1
    return hoisted + rest


def main() -> None:
    """Entry point: run the app, turning expected failures into one clear line."""
    debug = bool(os.environ.get("SKCONSOLE_DEBUG"))
    try:
        _register_commands()
        app(args=hoist_connection_options(sys.argv[1:]), prog_name="skconsole")
    except SkconsoleError as exc:
        if debug:
            raise
        _fail(str(exc))
        sys.exit(exc.exit_code)
    except psycopg.OperationalError as exc:
        if debug:
            raise
        _fail(connect_error_message("", exc))
        sys.exit(3)
    except psycopg.Error as exc:
        if debug:
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        _fail(f"database error: {first}")
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
