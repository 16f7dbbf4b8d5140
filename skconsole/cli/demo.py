"""``skconsole demo``: a busy queue with failures and hung jobs, shown in the console."""

from __future__ import annotations

from typing import Annotated

import typer

from skconsole.cli.app import app
from skconsole.cli.options import (
    MAX_CONCURRENCY,
    MAX_DEMO_RATE,
    EngineWorkersOpt,
    RefreshOpt,
    check_range,
    options_of,
    refresh_interval,
)
from skconsole.core.errors import ReadOnlyError
from skconsole.core.extras import require_extra


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
    workers: EngineWorkersOpt = 8,
    refresh: RefreshOpt = "2s",
    seed: Annotated[
        int | None, typer.Option("--seed", help="Random seed, for a repeatable backlog")
    ] = None,
) -> None:
    """A live demo: a busy queue with failures and hung jobs, in the console.

    Runs on an embedded server of its own (a `demo-pgdata` directory beside the
    default one) unless --data-dir or an explicit --dsn says otherwise.
    """
    o = options_of(ctx)
    # a DSN from the environment may point at a real queue: only an explicit --dsn is used
    dsn = o.dsn if o.dsn_given else None
    if dsn is None:
        require_extra("console", "skconsole demo (on its own embedded server)", "embedded")
    else:
        require_extra("console", "skconsole demo")
    from skconsole.demo.run import run_demo

    check_range("--rate", rate, 0, MAX_DEMO_RATE)
    check_range("--workers", workers, 1, MAX_CONCURRENCY)
    if o.read_only:
        raise ReadOnlyError("refused: the demo posts and runs jobs, and read-only mode is on")
    code = run_demo(
        dsn, o.data_dir, rate=rate, workers=workers, refresh=refresh_interval(refresh), seed=seed
    )
    raise typer.Exit(code)
