"""``skconsole slo``: show, set and clear the SLOs of a task type (the longest a ready
job of it should wait; the largest share of its finished jobs that may fail).

Setting or clearing one is the ``slo`` operator action (:mod:`skconsole.ops.slo`):
audited with the value before and after, refused in read-only mode, previewed by
``--dry-run``. ``skconsole check`` turns a breach into a CRITICAL (a failure rate
over its max: WARNING; over twice it: CRITICAL).
"""

from __future__ import annotations

from typing import Annotated

import typer

from skconsole import ops
from skconsole.cli.acting import run_type_setting
from skconsole.cli.app import app
from skconsole.cli.options import (
    ActionFlags,
    JsonOpt,
    WideOpt,
    check_text,
    options_of,
    takes_flags,
)
from skconsole.cli.view_table import Listing, column
from skconsole.core.durations import format_age, parse_duration
from skconsole.ops.model import seconds_in
from skconsole.ops.slo import MAX_MAX_WAIT_S, MIN_MAX_WAIT_S, parse_percent
from skconsole.ops.slo import describe as describe_slo
from skconsole.read import flow
from skconsole.views import Column

slo_app = typer.Typer(
    help="The longest a ready job of a task type should wait, and the largest share of its"
    " finished jobs that may fail (watched by `skconsole check`).",
    no_args_is_help=False,
)
app.add_typer(slo_app, name="slo")

TypeArg = Annotated[str, typer.Argument(metavar="TYPE", help="The task type")]


@slo_app.callback(invoke_without_command=True)
def show(ctx: typer.Context, as_json: JsonOpt = False, wide: WideOpt = False) -> None:
    """The task types with an SLO: their oldest ready job and how long until it breaches,
    their failure rate over the last 5 minutes against its max."""
    if ctx.invoked_subcommand is not None:
        return
    db = options_of(ctx).open("skconsole-slo", replica_ok=True)
    with db.connect() as conn:
        rows = [
            f
            for f in flow.flow(conn)
            if f.slo_max_wait_s is not None or f.slo_max_failure_rate is not None
        ]
    _SLOS.print(rows, as_json=as_json, wide=wide)


_COLUMNS: tuple[Column[flow.TypeFlow], ...] = (
    column("type", lambda f: f.task_type, ident=True),
    column("max wait", lambda f: format_age(f.slo_max_wait_s), right=True),
    column("ready", lambda f: ("≈" if f.ready_estimated else "") + f"{f.ready:,}", 2, right=True),
    column("oldest ready", lambda f: format_age(f.oldest_ready_s), 1, right=True),
    column("SLO", lambda f: f.slo_text + (" (paused)" if f.paused else ""), right=True),
    column("max failed", lambda f: flow.percent_text(f.slo_max_failure_rate), 3, right=True),
    column("failed 5m", lambda f: f.failures_text, 2, right=True),
)

_SLOS = Listing(
    "slos",
    _COLUMNS,
    flow.TypeFlow.as_dict,
    "no task type has an SLO (skconsole slo set TYPE --max-wait 30s)",
    title="SLOs",
    style=lambda f: f.worst_state.style,
)


def _change(ctx: typer.Context, name: str, params: ops.SloParams, flags: ActionFlags) -> None:
    """Preview, confirm and set (or clear) one type's SLO, as `limit` does its limits."""
    check_text("TYPE", name)
    run_type_setting(
        ctx,
        ops.SLO,
        name,
        params,
        describe=describe_slo,
        context=lambda d: (
            f"{d['ready']:,} ready, oldest {format_age(seconds_in(d, 'oldest_ready_s'))}"
        ),
        question=f"SLO of task type {name}",
        flags=flags,
    )


@slo_app.command("set")
@takes_flags()
def set_slo(
    ctx: typer.Context,
    task_type: TypeArg,
    max_wait: Annotated[
        str | None,
        typer.Option(
            "--max-wait",
            help="The longest a ready job should wait to be claimed, e.g. 30s, 5m"
            f" ({MIN_MAX_WAIT_S:g}s to {MAX_MAX_WAIT_S / 86_400:g}d)",
        ),
    ] = None,
    max_failure_rate: Annotated[
        str | None,
        typer.Option(
            "--max-failure-rate",
            help="The largest share of the jobs finished in the last 5 minutes that may fail"
            " (Faulted or Fatal), e.g. 10% (above 0%, below 100%); check: WARNING over it,"
            " CRITICAL over twice it",
        ),
    ] = None,
    *,
    flags: ActionFlags,
) -> None:
    """Set the SLOs of a task type (audited); the one not given stays as it is."""
    seconds = (
        None
        if max_wait is None
        else parse_duration(
            max_wait, option="--max-wait", minimum=MIN_MAX_WAIT_S, maximum=MAX_MAX_WAIT_S
        )
    )
    rate = None if max_failure_rate is None else parse_percent(max_failure_rate)
    params = ops.SloParams(max_wait_s=seconds, max_failure_rate=rate)
    _change(ctx, task_type, params, flags)


@slo_app.command("clear")
@takes_flags()
def clear_slo(ctx: typer.Context, task_type: TypeArg, *, flags: ActionFlags) -> None:
    """Remove the SLOs of a task type, max wait and max failure rate (audited)."""
    _change(ctx, task_type, ops.SloParams(clear=True), flags)
