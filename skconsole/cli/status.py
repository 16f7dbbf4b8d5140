"""``skconsole status [VIEW]``: the read models as tables for people and JSON for scripts.

Without a view: the overview (depth, jobs per status, workers), whose JSON
shape is stable. The views are :data:`skconsole.views.VIEWS` (depth, flow,
inflight, failures, stats, metrics, workers, history, schedules, health): each
is read and turned into JSON there; it is drawn here, from its columns when it
is one table, else as :mod:`skconsole.cli.status_tables` says. Estimated
figures are labelled as such. Tables fit the terminal (``--wide``: every column
at full width).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer
from rich.markup import escape

from skconsole.cli.app import app
from skconsole.cli.factors import read_common, show_common
from skconsole.cli.options import (
    MAX_LIST_ROWS,
    MAX_SAMPLE_S,
    GroupOpt,
    JsonOpt,
    LimitOpt,
    WideOpt,
    check_range,
    check_text,
    options_of,
)
from skconsole.cli.output import err, out
from skconsole.cli.status_tables import SHOW
from skconsole.cli.view_table import print_view
from skconsole.core.durations import format_limit, parse_duration, parse_time
from skconsole.core.errors import ConfigError
from skconsole.core.text import quoted
from skconsole.db.layout import DEGRADED_NOTES, has_skconsole_objects
from skconsole.read import flow
from skconsole.views import BY_NAME, OVERVIEW, VIEWS, View, ViewArgs

VIEW_NAMES = tuple(v.name for v in VIEWS)
#: history --minutes: at most one day back
MAX_MINUTES = 1440
#: history --since: at most a year back (the record keeps what upkeep's policy keeps)
MAX_SINCE_S = 366 * 86_400.0
#: history --step: a minute (the record's grain) to 30 days, whole minutes
STEP_BOUNDS_S = (60.0, 30 * 86_400.0)
#: history: at most this many steps in one read (a longer --step reads a longer span)
MAX_STEPS = 10_000
#: flow --window: the rates' sliding window, 10 s to one day
WINDOW_BOUNDS_S = (10.0, 86_400.0)


def draw(view: View[Any], model: Any, wide: bool) -> None:
    """The view as people read it: from its columns when it is one table."""
    if view.table is not None:
        print_view(view.table, model, wide=wide)
    else:
        SHOW[view.name](model, wide)


@app.command()
def status(
    ctx: typer.Context,
    view: Annotated[
        str | None,
        typer.Argument(
            metavar="[VIEW]", help=f"One read model: {', '.join(VIEW_NAMES)}", show_default=False
        ),
    ] = None,
    as_json: JsonOpt = False,
    limit: LimitOpt = 200,
    group: GroupOpt = None,
    minutes: Annotated[
        int, typer.Option("--minutes", help=f"history: minutes back (1 to {MAX_MINUTES:,})")
    ] = 60,
    sample: Annotated[
        str,
        typer.Option(
            "--sample",
            help="metrics: time between the two reads rates come from (0: none; at most 1h)",
        ),
    ] = "1s",
    window: Annotated[
        str,
        typer.Option("--window", help="flow: the rates' sliding window (10s to 1d)"),
    ] = format_limit(flow.WINDOW_S),
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="history: how far back from --until (15m, 1h, 24h, 7d); default: --minutes",
            show_default=False,
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            help="history: the end of the span: a time with its zone"
            " (2027-01-01T06:00:00Z) or how long ago (1h); default: now",
            show_default=False,
        ),
    ] = None,
    step: Annotated[
        str | None,
        typer.Option(
            "--step",
            help="history: one row per step (whole minutes: 1m, 15m, 1h, 1d); default: at"
            " most 170 rows",
            show_default=False,
        ),
    ] = None,
    types: Annotated[
        list[str] | None,
        typer.Option(
            "--type", help="history: only this task type (repeatable)", show_default=False
        ),
    ] = None,
    wide: WideOpt = False,
    common: Annotated[
        bool,
        typer.Option(
            "--common", help="failures --group G: the payload fields and hosts its jobs share"
        ),
    ] = False,
) -> None:
    """Queue depth per type, counts per status, workers, oldest waiting job; or one VIEW.

    --limit: the rows of inflight and failures; --group: the jobs of one failure group;
    --window: the rates of flow; --since, --until, --step, --type: the span, steps and
    types of history (from the per-minute record, which a purge does not delete).
    """
    if view is not None and view not in BY_NAME:
        raise ConfigError(f"unknown view {quoted(view)}: choose one of {', '.join(VIEW_NAMES)}")
    chosen = OVERVIEW if view is None else BY_NAME[view]
    check_range("--limit", limit, 1, MAX_LIST_ROWS)
    check_range("--minutes", minutes, 1, MAX_MINUTES)
    check_text("--group", group)
    sample_s = parse_duration(sample, option="--sample", maximum=MAX_SAMPLE_S)
    low, high = WINDOW_BOUNDS_S
    window_s = parse_duration(window, option="--window", minimum=low, maximum=high)
    if common:
        if view != "failures" or group is None:
            raise ConfigError("--common goes with: status failures --group G")
        found = read_common(options_of(ctx).open("skconsole-status", replica_ok=True), group)
        show_common(found, as_json, wide)
        return
    history = history_args(since, until, step, types or [], minutes)
    args = ViewArgs(
        limit=limit,
        group=group,
        minutes=minutes,
        sample_s=sample_s,
        window_s=window_s,
        since_s=history.since_s,
        until=history.until,
        step_s=history.step_s,
        types=history.types,
    )
    db = options_of(ctx).open("skconsole-status", degraded_ok=True, replica_ok=chosen.replica_ok)
    with db.connect() as conn:
        model = chosen.read(conn, args)
        degraded = not has_skconsole_objects(conn)
    doc = chosen.as_json(model)
    if degraded:  # Stakhanovise.NET's tables alone: say what the views leave out
        doc = {**doc, "degraded": list(DEGRADED_NOTES)}
        if not as_json:
            err.print(escape(" ".join(DEGRADED_NOTES)), style="yellow", highlight=False)
    if as_json:
        # ensure_ascii: rich re-encodes the document, and would otherwise write C1 and
        # bidi controls (which json leaves alone) raw
        out.print_json(json.dumps(doc, default=str), ensure_ascii=True)
        return
    draw(chosen, model, wide)


def history_args(
    since: str | None, until: str | None, step: str | None, types: list[str], minutes: int
) -> ViewArgs:
    """The span, step and types of ``status history``, checked: one clear line for each
    thing wrong (a ConfigError), never a traceback."""
    since_s = (
        None
        if since is None
        else parse_duration(since, option="--since", minimum=60.0, maximum=MAX_SINCE_S)
    )
    end = None if until is None else _instant(until)
    low, high = STEP_BOUNDS_S
    step_s = (
        None if step is None else parse_duration(step, option="--step", minimum=low, maximum=high)
    )
    if step_s is not None and step_s % 60:
        raise ConfigError(
            f"--step must be a whole number of minutes (the record's grain), got {quoted(step or '')}"
        )
    for t in types:
        check_text("--type", t)
    span_s = since_s if since_s is not None else minutes * 60.0
    if step_s is not None and span_s / step_s > MAX_STEPS:
        raise ConfigError(
            f"--step {step} cuts the span into more than {MAX_STEPS:,} rows: use a longer --step"
        )
    return ViewArgs(since_s=since_s, until=end, step_s=step_s, types=tuple(types))


def _instant(text: str) -> datetime:
    """--until: how long ago (1h), or a time with its zone."""
    try:
        ago = parse_duration(text, option="--until", maximum=MAX_SINCE_S)
    except ConfigError:
        if not any(c in text for c in "-:T"):  # a duration typed wrong, not a time
            raise
        return parse_time(text, option="--until", within_s=MAX_SINCE_S)
    return datetime.now(UTC) - timedelta(seconds=ago)
