"""The ``skconsole`` command line (Typer).

Every command accepts the connection options, before or after its name;
errors that a person can act on are printed as one line with a non-zero exit
code, never as a traceback (set SKCONSOLE_DEBUG=1 to see one).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import psycopg
import typer
from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

from skconsole.db.connect import Database, connect_error_message
from skconsole.db.embedded import EmbeddedServer, default_data_dir
from skconsole.db.schema import setup_schema
from skconsole.db.target import open_database, resolve_database
from skconsole.durations import parse_duration
from skconsole.errors import ConfigError, ReadOnlyError, SkconsoleError
from skconsole.text import is_valid_utf8, printable, quoted

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


class PrintableConsole(Console):
    """A rich Console that never writes a control character it was given as text.

    Task types, errors, hosts and metric ids come from other systems; an ESC or
    a C1 or bidi control among them would reach the terminal raw. Every string
    this console prints (table cells and titles included) passes through
    :func:`skconsole.text.printable` before rich measures it, and every text
    segment is checked again on the way out, so a view added later is safe
    without doing anything. Rich's own control segments (cursor moves of a
    progress bar) are left alone.
    """

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Text:
        return super().render_str(printable(text), *args, **kwargs)

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            text, style, control = segment
            if control or text.isprintable():
                yield segment
            else:
                yield Segment(printable(text, keep_newlines=True), style, control)


out = PrintableConsole()
err = PrintableConsole(stderr=True)

# -- bounds of the options (the README's table of limits) ---------------------------------
#: enqueue --count: jobs posted by one command (they are built in memory first)
MAX_ENQUEUE_COUNT = 1_000_000
#: worker --concurrency, console --workers, demo --workers, bench --concurrency
MAX_CONCURRENCY = 10_000
#: worker --processes, bench --processes
MAX_PROCESSES = 64
#: worker --batch-size: jobs claimed per round trip
MAX_BATCH_SIZE = 10_000
#: worker --poll: between 10 ms and 1 hour
POLL_BOUNDS_S = (0.01, 3600.0)
#: worker --grace: at most 1 day
MAX_GRACE_S = 86_400.0
#: status --limit, audit --limit: rows listed
MAX_LIST_ROWS = 100_000
#: status metrics --sample: at most 1 hour between the two reads
MAX_SAMPLE_S = 3600.0
#: bench --jobs, --latency-jobs, --rate; demo --rate
MAX_BENCH_JOBS = 10_000_000
MAX_LATENCY_JOBS = 100_000
MAX_BENCH_RATE = 100_000.0
MAX_DEMO_RATE = 1_000.0


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def check_range(option: str, value: float, low: float, high: float) -> None:
    """A ConfigError (exit 2) unless ``low <= value <= high`` (NaN never is)."""
    if not low <= value <= high:
        raise ConfigError(
            f"{option} must be between {_number(low)} and {_number(high)}, got {_number(value)}"
        )


def check_text(option: str, value: str | None) -> None:
    """A ConfigError (exit 2) when ``value`` is not UTF-8 text a query can carry."""
    if value is None:
        return
    if not is_valid_utf8(value):
        raise ConfigError(f"{option} is not valid UTF-8 text: {quoted(value)}")
    if "\x00" in value:
        raise ConfigError(f"{option} must not contain NUL characters")


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
        typer.Option(
            "--workers",
            help=f"Console: jobs the embedded engine runs at once (1 to {MAX_CONCURRENCY:,}).",
        ),
    ] = 4,
) -> None:
    """Without a command: the operations console (`skconsole demo` shows it on a live demo queue)."""
    ctx.obj = Options(dsn=dsn, data_dir=data_dir, setup=not no_setup, read_only=read_only)
    if ctx.invoked_subcommand is None:
        from skconsole.tui.launch import ConsoleOptions, run_console

        check_range("--workers", workers, 1, MAX_CONCURRENCY)
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
    seconds = parse_duration(text, option="--refresh")
    if not 0.5 <= seconds <= 60:
        raise ConfigError(f"--refresh must be between 0.5s and 60s, got {quoted(text)}")
    return seconds


# -- demo ----------------------------------------------------------------------------
@app.command()
def demo(
    ctx: typer.Context,
    rate: Annotated[
        float,
        typer.Option(
            "--rate", help=f"New demo jobs per second, on average (0 to {MAX_DEMO_RATE:,.0f})"
        ),
    ] = 3.0,
    workers: Annotated[
        int,
        typer.Option(
            "--workers", help=f"Jobs the embedded engine runs at once (1 to {MAX_CONCURRENCY:,})"
        ),
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
    from skconsole.demo.run import run_demo

    check_range("--rate", rate, 0, MAX_DEMO_RATE)
    check_range("--workers", workers, 1, MAX_CONCURRENCY)
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
        int,
        typer.Option(
            "--count",
            help=f"Post this many copies in one round trip (at most {MAX_ENQUEUE_COUNT:,})",
        ),
    ] = 1,
    source: Annotated[
        str | None, typer.Option("--source", help="Who posts (default: skconsole@host:pid)")
    ] = None,
) -> None:
    """Post jobs."""
    from skconsole.producer import Job, Producer, validate_payload_json

    check_text("TYPE", task_type)
    check_text("--payload", payload)
    check_text("--key", key)
    check_text("--source", source)
    check_range("--count", count, 1, MAX_ENQUEUE_COUNT)
    if key is not None and count > 1:
        raise ConfigError("--key posts one job; it cannot be combined with --count > 1")
    text = validate_payload_json(payload)
    seconds = parse_duration(delay, option="--delay")
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
        out.print(f"posted {result.posted:,} job(s) of type {escape(task_type)}", highlight=False)


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
        int,
        typer.Option(
            "--concurrency", help=f"Jobs run at once per process (1 to {MAX_CONCURRENCY:,})"
        ),
    ] = 10,
    processes: Annotated[
        int, typer.Option("--processes", help=f"Worker processes (1 to {MAX_PROCESSES})")
    ] = 1,
    types: Annotated[
        str | None, typer.Option("--types", help="Only these types, comma-separated")
    ] = None,
    burst: Annotated[
        bool, typer.Option("--burst", help="Exit when no eligible job is left")
    ] = False,
    grace: Annotated[
        str,
        typer.Option("--grace", help="On SIGTERM, how long running jobs may finish (at most 1d)"),
    ] = "10s",
    batch_size: Annotated[
        int,
        typer.Option(
            "--batch-size", help=f"Most jobs claimed per round trip (1 to {MAX_BATCH_SIZE:,})"
        ),
    ] = 100,
    poll: Annotated[
        str,
        typer.Option("--poll", help="Polling interval when no notification arrives (10ms to 1h)"),
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

    check_range("--concurrency", concurrency, 1, MAX_CONCURRENCY)
    check_range("--processes", processes, 1, MAX_PROCESSES)
    check_range("--batch-size", batch_size, 1, MAX_BATCH_SIZE)
    check_text("--types", types)
    grace_s = parse_duration(grace, option="--grace", maximum=MAX_GRACE_S)
    poll_s = parse_duration(
        poll, option="--poll", minimum=POLL_BOUNDS_S[0], maximum=POLL_BOUNDS_S[1]
    )
    o = _opts(ctx)
    if o.read_only:
        raise ReadOnlyError("refused: a worker writes results and read-only mode is on")
    lease_s = parse_duration(lease, option="--lease", minimum=5.0, maximum=600.0)
    config = WorkerConfig(
        concurrency=concurrency,
        batch_size=batch_size,
        burst=burst,
        grace_period=grace_s,
        poll_interval=poll_s,
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
        int,
        typer.Option("--jobs", help=f"No-op jobs to post and drain (1 to {MAX_BENCH_JOBS:,})"),
    ] = 50_000,
    processes: Annotated[
        int, typer.Option("--processes", help=f"Worker processes draining (1 to {MAX_PROCESSES})")
    ] = 2,
    latency_jobs: Annotated[
        int,
        typer.Option(
            "--latency-jobs",
            help=f"Jobs posted one by one for pickup latency (10 to {MAX_LATENCY_JOBS:,})",
        ),
    ] = 500,
    rate: Annotated[
        float,
        typer.Option(
            "--rate",
            help=f"Jobs per second for the pickup-latency phase (above 0, at most {MAX_BENCH_RATE:,.0f})",
        ),
    ] = 100.0,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency", help=f"Jobs run at once per process (1 to {MAX_CONCURRENCY:,})"
        ),
    ] = 200,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object")] = False,
) -> None:
    """Measure enqueue rate, drain rate and pickup latency with no-op jobs."""
    from skconsole.bench.throughput import BenchConfig, run_bench

    check_range("--jobs", jobs, 1, MAX_BENCH_JOBS)
    check_range("--processes", processes, 1, MAX_PROCESSES)
    check_range("--latency-jobs", latency_jobs, 10, MAX_LATENCY_JOBS)
    check_range("--concurrency", concurrency, 1, MAX_CONCURRENCY)
    if not 0 < rate <= MAX_BENCH_RATE:
        raise ConfigError(
            f"--rate must be above 0 and at most {MAX_BENCH_RATE:,.0f} jobs per second,"
            f" got {rate:g}"
        )
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
