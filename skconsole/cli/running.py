"""The commands that run the engine: ``worker`` (headless) and ``bench`` (no-op jobs,
measured)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from skconsole.bench.config import BenchConfig
from skconsole.cli.app import app
from skconsole.cli.options import (
    MAX_BATCH_SIZE,
    MAX_BENCH_JOBS,
    MAX_BENCH_RATE,
    MAX_CONCURRENCY,
    MAX_GRACE_S,
    MAX_LATENCY_JOBS,
    MAX_PROCESSES,
    POLL_BOUNDS_S,
    ConcurrencyOpt,
    JsonOpt,
    ProcessesOpt,
    check_range,
    check_text,
    options_of,
)
from skconsole.core.durations import format_limit, parse_duration
from skconsole.core.errors import ConfigError, ReadOnlyError
from skconsole.db.mapping import DEFAULT_MAPPING
from skconsole.worker.engine import WorkerConfig


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
    processes: ProcessesOpt = 1,
    types: Annotated[
        str | None, typer.Option("--types", help="Only these types, comma-separated")
    ] = None,
    burst: Annotated[
        bool, typer.Option("--burst", help="Exit when no eligible job is left")
    ] = False,
    grace: Annotated[
        str,
        typer.Option("--grace", help="On SIGTERM, how long running jobs may finish (at most 1d)"),
    ] = format_limit(WorkerConfig.grace_period),
    batch_size: Annotated[
        int,
        typer.Option(
            "--batch-size", help=f"Most jobs claimed per round trip (1 to {MAX_BATCH_SIZE:,})"
        ),
    ] = WorkerConfig.batch_size,
    poll: Annotated[
        str,
        typer.Option("--poll", help="Polling interval when no notification arrives (10ms to 1h)"),
    ] = format_limit(WorkerConfig.poll_interval),
    lease: Annotated[
        str,
        typer.Option(
            "--lease",
            help="Liveness lease (5s to 10m): a worker that cannot renew it for 80% of it"
            " stops its jobs; others reap them after 120%",
        ),
    ] = format_limit(WorkerConfig.lease),
    reap_unowned_after: Annotated[
        str | None,
        typer.Option(
            "--reap-unowned-after",
            help="Also reap jobs with no owner recorded (a Stakhanovise.NET consumer's)"
            " processing for longer than this (1s to 30d); off by default: no worker of ours"
            " judges a claim it did not make",
        ),
    ] = None,
    record_keep: Annotated[
        str,
        typer.Option(
            "--record-keep",
            help="How long the per-minute record keeps a minute (1h to 400d); purge and"
            " retention never delete it. Workers with different values trim to the shortest",
        ),
    ] = "14d",
    app_version: Annotated[
        str | None,
        typer.Option(
            "--app-version",
            help="The version of the application code this worker runs, shown in workers and"
            " attempts. Default: $SKCONSOLE_APP_VERSION, else the version of the installed"
            " distribution that provides the --tasks module's top package, else none",
        ),
    ] = None,
) -> None:
    """Run task handlers (headless engine)."""
    from skconsole.worker.app_version import resolve_app_version
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
    keep_s = parse_duration(
        record_keep, option="--record-keep", minimum=3600.0, maximum=400 * 86_400
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
        app_version=resolve_app_version(tasks, app_version).value,
        record_keep=keep_s,
    )
    type_list = tuple(t.strip() for t in types.split(",") if t.strip()) if types else ()
    spec = WorkerSpec(
        tasks=tasks,
        types=type_list,
        dsn=o.dsn,
        data_dir=str(o.data_dir) if o.data_dir else None,
        setup=o.setup,
        config=config,
        mapping=o.mapping or DEFAULT_MAPPING,
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
    ] = BenchConfig.jobs,
    processes: ProcessesOpt = BenchConfig.processes,
    latency_jobs: Annotated[
        int,
        typer.Option(
            "--latency-jobs",
            help=f"Jobs posted one by one for pickup latency (10 to {MAX_LATENCY_JOBS:,})",
        ),
    ] = BenchConfig.latency_jobs,
    rate: Annotated[
        float,
        typer.Option(
            "--rate",
            help=f"Jobs per second for the pickup-latency phase (above 0, at most {MAX_BENCH_RATE:,.0f})",
        ),
    ] = BenchConfig.rate,
    concurrency: ConcurrencyOpt = BenchConfig.concurrency,
    as_json: JsonOpt = False,
) -> None:
    """Measure enqueue rate, drain rate and pickup latency with no-op jobs."""
    from skconsole.bench.throughput import run_bench
    from skconsole.cli.output import err, out

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
