"""The commands that post, run and host: demo, setup, enqueue, worker, bench, and
``db start`` / ``stop`` / ``status`` / ``uri`` (the embedded server)."""

from __future__ import annotations

import itertools
import json
import os
from typing import Annotated

import typer
from rich.markup import escape

from skconsole.cli.app import app, db_app
from skconsole.cli.options import (
    MAX_BATCH_SIZE,
    MAX_BENCH_JOBS,
    MAX_BENCH_RATE,
    MAX_CONCURRENCY,
    MAX_DEMO_RATE,
    MAX_ENQUEUE_COUNT,
    MAX_GRACE_S,
    MAX_LATENCY_JOBS,
    MAX_PROCESSES,
    POLL_BOUNDS_S,
    ConcurrencyOpt,
    check_range,
    check_text,
    options_of,
    refresh_interval,
)
from skconsole.cli.output import err, out, progress_bar
from skconsole.core.durations import parse_duration, parse_time
from skconsole.core.errors import ConfigError, ReadOnlyError
from skconsole.db.embedded import EmbeddedServer
from skconsole.db.schema import setup_schema
from skconsole.db.sqlfiles import active_mapping
from skconsole.db.target import resolve_database
from skconsole.producer import (
    STREAM_CHUNK,
    Job,
    PostCounts,
    Producer,
    dotnet_payload,
    dotnet_type_name,
    validate_payload_json,
)
from skconsole.worker.engine import WorkerConfig


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
    o = options_of(ctx)
    if o.read_only:
        raise ReadOnlyError("refused: the demo posts and runs jobs, and read-only mode is on")
    root = ctx.find_root()
    # a DSN from the environment may point at a real queue: only an explicit --dsn is used
    source = root.get_parameter_source("dsn")
    dsn = o.dsn if source is not None and source.name == "COMMANDLINE" else None
    code = run_demo(
        dsn, o.data_dir, rate=rate, workers=workers, refresh=refresh_interval(refresh), seed=seed
    )
    raise typer.Exit(code)


# -- setup -------------------------------------------------------------------------
@app.command()
def setup(ctx: typer.Context) -> None:
    """Create the Stakhanovise tables and skconsole's additions (idempotent)."""
    o = options_of(ctx)
    if o.read_only:
        raise ReadOnlyError("refused: setup writes to the database and read-only mode is on")
    db = resolve_database(o.dsn, o.data_dir, application_name="skconsole-setup")
    with db.connect() as conn:
        changed = setup_schema(conn)
    out.print(
        f"schema {'created/updated' if changed else 'already up to date'} on {db.description}"
    )


# -- enqueue -------------------------------------------------------------------------
def _dotnet_payload_json(task_type: str, text: str, type_name: str) -> str:
    """``text`` (a JSON object) with ``"$type": type_name`` first, for a .NET consumer."""
    check_text("--dotnet-type", type_name)
    full_name = dotnet_type_name(type_name)
    if task_type != full_name:
        raise ConfigError(
            f"a Stakhanovise.NET consumer runs a {full_name} payload as task type {full_name},"
            f" not {task_type}: post it as TYPE {full_name}"
        )
    fields = json.loads(text)
    if not isinstance(fields, dict):
        raise ConfigError("--dotnet-type needs a JSON object as --payload (the type's properties)")
    return json.dumps(dotnet_payload(fields, type_name), ensure_ascii=False)


@app.command()
def enqueue(
    ctx: typer.Context,
    task_type: Annotated[str, typer.Argument(metavar="TYPE", help="Task type, e.g. emails.send")],
    payload: Annotated[str, typer.Option("--payload", help="JSON payload")] = "null",
    priority: Annotated[int, typer.Option("--priority", help="Lower runs first; >= 0")] = 0,
    delay: Annotated[
        str, typer.Option("--delay", help="Run no sooner than this from now, e.g. 10s, 5m")
    ] = "0s",
    run_at: Annotated[
        str | None,
        typer.Option(
            "--run-at",
            help="Run no sooner than this time, ISO 8601 with a zone, e.g. 2027-01-01T06:00:00Z",
        ),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option("--key", help="Job key: a waiting job with the same key is not posted twice"),
    ] = None,
    count: Annotated[
        int,
        typer.Option(
            "--count",
            help=(
                f"Post this many copies (at most {MAX_ENQUEUE_COUNT:,}); up to"
                f" {STREAM_CHUNK:,} all or none, above that in committed chunks of"
                f" {STREAM_CHUNK:,}"
            ),
        ),
    ] = 1,
    source: Annotated[
        str | None, typer.Option("--source", help="Who posts (default: skconsole@host:pid)")
    ] = None,
    dotnet_type: Annotated[
        str | None,
        typer.Option(
            "--dotnet-type",
            help="For a Stakhanovise.NET consumer: the payload's .NET type,"
            " 'Namespace.Type, Assembly' (written as its \"$type\"; TYPE must be Namespace.Type)",
        ),
    ] = None,
) -> None:
    """Post jobs."""
    check_text("TYPE", task_type)
    check_text("--payload", payload)
    check_text("--key", key)
    check_text("--source", source)
    check_range("--count", count, 1, MAX_ENQUEUE_COUNT)
    if key is not None and count > 1:
        raise ConfigError("--key posts one job; it cannot be combined with --count > 1")
    text = validate_payload_json(payload)
    if dotnet_type is not None:
        text = _dotnet_payload_json(task_type, text, dotnet_type)
    seconds = parse_duration(delay, option="--delay")
    job = Job(
        task_type,
        priority=priority,
        delay=seconds,
        key=key,
        source=source,
        payload_json=text,
        run_at=None if run_at is None else parse_time(run_at, option="--run-at"),
    )
    db = options_of(ctx).open("skconsole-enqueue", write=True)
    with Producer(db) as producer:
        if count == 1:
            result = producer.post_many([job])
            state = (
                "posted"
                if result.posted
                else ("re-run requested" if result.rerun_requested else "already waiting (key)")
            )
            out.print(f"{result.ids[0]} {state}")
            return
        copies = itertools.chain([job], (job.another() for _ in range(count - 1)))
        posted = 0  # committed so far: told after every chunk, the last one included

        def advance(done: PostCounts) -> None:
            nonlocal posted
            posted = done.posted
            shown(posted)

        try:
            with progress_bar(count, f"posting {escape(task_type)}") as shown:
                producer.post_stream(copies, progress=advance)
        except KeyboardInterrupt:
            out.print(f"interrupted: {posted:,} job(s) posted, the rest not", highlight=False)
            raise typer.Exit(130) from None
    out.print(f"posted {posted:,} job(s) of type {escape(task_type)}", highlight=False)


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
    concurrency: ConcurrencyOpt = WorkerConfig.concurrency,
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
    ] = WorkerConfig.batch_size,
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
    reap_unowned_after: Annotated[
        str | None,
        typer.Option(
            "--reap-unowned-after",
            help="Also reap jobs with no owner recorded (a Stakhanovise.NET consumer's)"
            " processing for longer than this (1s to 30d); off by default: no worker of ours"
            " judges a claim it did not make",
        ),
    ] = None,
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
    o = options_of(ctx)
    if o.read_only:
        raise ReadOnlyError("refused: a worker writes results and read-only mode is on")
    lease_s = parse_duration(lease, option="--lease", minimum=5.0, maximum=600.0)
    unowned_s = (
        parse_duration(
            reap_unowned_after, option="--reap-unowned-after", minimum=1.0, maximum=30 * 86_400
        )
        if reap_unowned_after is not None
        else None
    )
    config = WorkerConfig(
        concurrency=concurrency,
        batch_size=batch_size,
        burst=burst,
        grace_period=grace_s,
        poll_interval=poll_s,
        lease=lease_s,
        lease_margin=lease_s * LEASE_MARGIN_SHARE,
        unowned_after=unowned_s,
    )
    type_list = tuple(t.strip() for t in types.split(",") if t.strip()) if types else ()
    spec = WorkerSpec(
        tasks=tasks,
        types=type_list,
        dsn=o.dsn,
        data_dir=str(o.data_dir) if o.data_dir else None,
        setup=o.setup,
        config=config,
        mapping=active_mapping(),
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
    concurrency: ConcurrencyOpt = 200,
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
    o = options_of(ctx)
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
    o = options_of(ctx)
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
