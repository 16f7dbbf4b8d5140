"""Operator actions as commands: requeue, bump, purge, reap, cancel, edit, pause, resume, limit,
audit.

Each runs the same ``skconsole.ops`` functions the console does, the same way
(:mod:`skconsole.cli.acting`): preview, confirm, execute on the previewed ids,
report. A job action's command is its spec and a function of its own options
(:func:`~skconsole.cli.acting.job_command`). The sample and audit tables fit the
terminal (``--wide``: every column at full width).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer
from rich.markup import escape

from skconsole import ops, read
from skconsole.cli.acting import (
    confirm_or_exit,
    details_side,
    job_command,
    print_outcome,
    run_type_setting,
    selection_from,
    show_dry_run,
    show_forecast,
)
from skconsole.cli.app import app
from skconsole.cli.options import (
    MAX_LIST_ROWS,
    ActionFlags,
    IncludeFaultedOpt,
    JsonOpt,
    LimitOpt,
    TypeOpt,
    WideOpt,
    check_range,
    check_text,
    cli_actor,
    options_of,
    takes_flags,
)
from skconsole.cli.output import out, print_json
from skconsole.cli.view_table import Listing, column
from skconsole.cli.waves import after_requeue
from skconsole.core.durations import parse_duration
from skconsole.core.errors import ConfigError
from skconsole.core.hung import HungPolicy
from skconsole.core.json_types import Json
from skconsole.core.payload_terms import parse_path
from skconsole.core.text import printable
from skconsole.core.waves import parse_gate, parse_waves
from skconsole.ops.audit_line import what
from skconsole.ops.cancel import MAX_WAIT_S
from skconsole.ops.edit import payload_diff
from skconsole.ops.limit import describe as describe_limits
from skconsole.ops.model import ActionResult, Preview, Selection, count_in
from skconsole.ops.requeue import MAX_SPREAD_S
from skconsole.views import Column


# -- the job actions ------------------------------------------------------------------------
@app.command()
@job_command(ops.REQUEUE, after=after_requeue)
def requeue(
    reset_errors: Annotated[
        bool,
        typer.Option(
            "--reset-errors",
            help="Start the error count again from 0 (else each job keeps its count:"
            " its type's max attempts minus it are the tries it has left)",
        ),
    ] = False,
    spread: Annotated[
        str | None,
        typer.Option(
            "--spread",
            help="Make the jobs due evenly over this long from now (e.g. 10m; at most 7d),"
            " by priority then posting, instead of all at once",
        ),
    ] = None,
    waves: Annotated[
        str | None,
        typer.Option(
            "--waves",
            metavar="1%,10%,50%,100%",
            help="Requeue in canary waves (cumulative shares, the last 100%): the first now,"
            " each next one once every job of the one before finished and --gate of them"
            " succeeded; stored, so the workers carry it on (skconsole waves)",
        ),
    ] = None,
    gate: Annotated[
        str | None,
        typer.Option(
            "--gate",
            metavar="95%",
            help="With --waves: the share of a wave's finished jobs that must succeed for"
            " the next to go (default 95%)",
        ),
    ] = None,
) -> ops.RequeueParams:
    """Post failed jobs again, ready now, spread over --spread, or in canary waves
    (--waves) (statuses 4, 5, 6 by default; 7 when selected)."""
    spread_s = (
        parse_duration(spread, option="--spread", maximum=MAX_SPREAD_S)
        if spread is not None
        else None
    )
    return ops.RequeueParams(
        reset_errors=reset_errors,
        spread_s=spread_s,
        waves=parse_waves(waves) if waves is not None else None,
        gate=parse_gate(gate) if gate is not None else None,
    )


@app.command()
@job_command(ops.BUMP)
def bump(
    by: Annotated[
        int | None, typer.Option("--by", help="Lower the priority number by N (floor 0)")
    ] = None,
    to: Annotated[int | None, typer.Option("--to", help="Set the priority to N")] = None,
    now: Annotated[
        bool,
        typer.Option("--now", help="Make jobs not due yet (delay, back-off, snooze) due at once"),
    ] = False,
) -> ops.BumpParams:
    """Run waiting jobs sooner: lower their priority number (--by N), set it (--to N), or
    make them due at once (--now)."""
    return ops.BumpParams(by=by, to=to, now=now)


@app.command()
@job_command(ops.PURGE, selection=("older_than", "ids", "group", "task_type", "statuses", "where"))
def purge(
    include_faulted: IncludeFaultedOpt = False,
) -> ops.PurgeParams:
    """Delete old final results (3, 6, 7; 5 with --include-faulted), in short batches."""
    return ops.PurgeParams(include_faulted=include_faulted)


@app.command()
@job_command(ops.REAP, selection=("ids", "task_type", "older_than"))
def reap(
    unowned_after: Annotated[
        str,
        typer.Option(
            "--unowned-after", help="Without owner data (Stakhanovise.NET), hung after this long"
        ),
    ] = "1h",
) -> ops.ReapParams:
    """Re-post hung jobs now (as `status inflight` judges them: the worker's lease has
    lapsed, so it has stopped them or is dead), recording why."""
    policy = HungPolicy(parse_duration(unowned_after, option="--unowned-after", minimum=1.0))
    return ops.ReapParams(policy=policy)


@app.command()
@job_command(ops.CANCEL)
def cancel(
    wait: Annotated[
        str,
        typer.Option(
            "--wait", help="How long to wait for workers to stop running jobs (0: do not wait)"
        ),
    ] = "5s",
) -> ops.CancelParams:
    """Cancel jobs: waiting ones leave the queue; running ones (--id, or --status 2) are
    stopped by their worker, or at once if their worker is gone. All end 7 Cancelled."""
    return ops.CancelParams(wait_s=parse_duration(wait, option="--wait", maximum=MAX_WAIT_S))


def _payload(value: Json) -> str | None:
    """A payload as an edit's details hold it: the stored text (None: none)."""
    return value if isinstance(value, str) else None


def _show_diff(preview: Preview) -> None:
    """The edit's diff: pretty-printed payloads, removed lines red, added ones green."""
    old, new = details_side(preview.details["old"]), details_side(preview.details["new"])
    for line in payload_diff(_payload(old["payload"]), _payload(new["payload"]) or "")[2:]:
        style = {"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "")
        text = escape(printable(line))
        out.print(f"[{style}]{text}[/]" if style else text, highlight=False)
    if old["priority"] != new["priority"]:
        out.print(f"priority: {old['priority']} -> {new['priority']}", highlight=False)


@app.command()
@takes_flags()
def edit(
    ctx: typer.Context,
    task_id: Annotated[str, typer.Option("--id", help="The job to edit", show_default=False)],
    payload: Annotated[
        str, typer.Option("--payload", metavar="JSON", help="Its new payload", show_default=False)
    ],
    priority: Annotated[
        int | None, typer.Option("--priority", help="Its new priority (0 runs first)")
    ] = None,
    requeue: Annotated[
        bool, typer.Option("--requeue", help="Post a failed job (4-7) again, ready now")
    ] = False,
    reset_errors: Annotated[
        bool, typer.Option("--reset-errors", help="With --requeue: error count from 0")
    ] = False,
    *,
    flags: ActionFlags,
) -> None:
    """Change a waiting or failed job's payload (and priority); --requeue runs it again."""
    params = ops.EditParams(
        payload=payload, priority=priority, requeue=requeue, reset_errors=reset_errors
    )
    sel = selection_from(ctx, [task_id])
    job = sel.ids[0]
    db = options_of(ctx).open("skconsole-edit", write=not flags.dry_run)
    with db.connect() as conn:
        p = ops.EDIT.preview(conn, sel, params)
        if flags.dry_run:
            if flags.as_json:
                print_json(p.as_dict())
            else:
                out.print(f"would edit job {job}{params.phrase()}:", highlight=False)
                _show_diff(p)
            return
        if p.details["no_change"]:
            if flags.as_json:
                details = {**p.json_details(), "unchanged": 1}
                print_outcome(ActionResult("edit", 0, 0, 0, details), sel)
            else:
                out.print(f"job {job} already has that payload and priority: nothing changed")
            return
        if not flags.as_json:
            _show_diff(p)
        confirm_or_exit(f"Edit job {job}{params.phrase()}?", flags.yes)
        result = ops.EDIT.execute(conn, sel, params, actor=cli_actor(), ids=p.ids)
    if flags.as_json:
        print_outcome(result, sel)
    elif result.changed:
        again = " and posted it again, ready now" if result.details.get("requeued") else ""
        out.print(f"edited job {job}{again} (audit #{result.audit_id})", highlight=False)
    else:
        out.print(
            f"job {job} changed state meanwhile (claimed by a worker?) and was left alone "
            f"(audit #{result.audit_id})",
            highlight=False,
        )


TypeArg = Annotated[str | None, typer.Argument(metavar="TYPE", help="The task type")]


def _switch(action: ops.TypeAction) -> Callable[..., None]:
    """The command that pauses or resumes a task type."""

    @takes_flags()
    def command(
        ctx: typer.Context,
        task_type_arg: TypeArg = None,
        task_type: TypeOpt = None,
        *,
        flags: ActionFlags,
    ) -> None:
        _switch_type(ctx, action, task_type_arg or task_type, flags)

    return command


def _switch_type(
    ctx: typer.Context, action: ops.TypeAction, task_type: str | None, flags: ActionFlags
) -> None:
    name = action.name
    if not task_type:
        raise ConfigError(f"{name} needs a task type: skconsole {name} TYPE")
    sel = Selection(task_type=task_type)
    db = options_of(ctx).open(f"skconsole-{name}", write=not flags.dry_run)
    with db.connect() as conn:
        p = action.preview(conn, sel)
        state = "paused" if p.details["paused"] else "running"
        if flags.dry_run:
            show_dry_run(
                p,
                flags.as_json,
                f"{escape(task_type)} is {state} ({p.details['waiting']:,} waiting, "
                f"{p.details['in_flight']:,} in flight); {name} would "
                f"{'change it' if p.count else 'change nothing'}",
            )
            return
        if p.count:
            if not flags.as_json:
                show_forecast(p)
            confirm_or_exit(f"{name.capitalize()} task type {task_type}?", flags.yes)
        result = action.execute(conn, sel, actor=cli_actor())
    if flags.as_json:
        print_outcome(result, sel)
    elif result.changed:
        out.print(
            f"{escape(task_type)} {action.wording.done} (audit #{result.audit_id})",
            highlight=False,
        )
    else:
        out.print(f"{escape(task_type)} was already {state}: nothing changed", highlight=False)


pause = app.command("pause", help="Stop workers claiming a task type (running jobs finish).")(
    _switch(ops.PAUSE)
)
resume = app.command("resume", help="Let workers claim a paused task type again.")(
    _switch(ops.RESUME)
)


def _show_limits(ctx: typer.Context, as_json: bool, wide: bool) -> None:
    db = options_of(ctx).open("skconsole-limit", replica_ok=True)
    with db.connect() as conn:
        rows = read.limits(conn)
    _LIMITS.print(rows, as_json=as_json, wide=wide)


_LIMIT_COLUMNS: tuple[Column[read.TypeLimit], ...] = (
    column("type", lambda r: r.task_type, ident=True),
    column("running", lambda r: f"{r.running:,}", 1, right=True),
    column("concurrency", lambda r: str(r.concurrency or "-"), 2, right=True),
    column("rate", lambda r: r.rate or "-", 3, right=True),
    column("per key", lambda r: r.per_key or "-", 2),
    column("keys at limit", lambda r: r.keys_note or "-", 3),
)

_LIMITS = Listing(
    "limits", _LIMIT_COLUMNS, read.TypeLimit.as_dict, "no task type is limited", title="Limits"
)


@app.command()
@takes_flags(wide=True)
def limit(
    ctx: typer.Context,
    task_type_arg: TypeArg = None,
    task_type: TypeOpt = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency", help="At most N jobs of the type running at once, over all workers"
        ),
    ] = None,
    rate: Annotated[
        str | None,
        typer.Option(
            "--rate", metavar="N/s|N/min", help="At most N claims of the type per interval"
        ),
    ] = None,
    clear: Annotated[
        bool, typer.Option("--clear", help="Remove the type's limits (both, unless one is set)")
    ] = False,
    per: Annotated[
        str | None,
        typer.Option(
            "--per",
            metavar="payload.PATH",
            help="The limits apply to each value of this payload path on its own (a key:"
            " one customer, say); with --clear, remove the per-key limits",
        ),
    ] = None,
    *,
    flags: ActionFlags,
) -> None:
    """Limit a task type across every worker (running jobs, claims per interval), for the
    whole type or per value of a payload path (--per); alone: show the limits. Workers
    follow at their next claim."""
    name = task_type_arg or task_type
    if not name:
        if concurrency is not None or rate is not None or clear or per is not None:
            raise ConfigError("limit needs a task type: skconsole limit TYPE --concurrency N")
        _show_limits(ctx, flags.as_json, flags.wide)
        return
    check_text("TYPE", name)
    params = ops.LimitParams(
        concurrency=concurrency,
        rate=ops.Rate.parse(rate) if rate is not None else None,
        clear_concurrency=clear and concurrency is None,
        clear_rate=clear and rate is None,
        per=parse_path(per) if per is not None else None,
    )
    run_type_setting(
        ctx,
        ops.LIMIT,
        name,
        params,
        describe=describe_limits,
        context=lambda d: f"{d['running']:,} running, {d['waiting']:,} waiting",
        question=f"Limit task type {name}",
        flags=flags,
    )


@app.command()
def audit(
    ctx: typer.Context,
    limit: LimitOpt = 50,
    action: Annotated[str | None, typer.Option("--action", help="Only this action")] = None,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """The operator actions executed on this queue: who, when, what, how many (newest first)."""
    check_range("--limit", limit, 1, MAX_LIST_ROWS)
    check_text("--action", action)
    db = options_of(ctx).open("skconsole-audit", replica_ok=True)
    with db.connect() as conn:
        rows = ops.audit.entries(conn, limit=limit, action=action)
    _AUDIT.print(rows, as_json=as_json, wide=wide)


_AUDIT_COLUMNS: tuple[Column[ops.audit.AuditEntry], ...] = (
    column("#", lambda r: str(r.audit_id), right=True, ident=True),
    column("when", lambda r: r.at.strftime("%Y-%m-%d %H:%M:%S"), 2),
    column("who", lambda r: r.who, 3),
    column("what", what, flex=True),
    column(
        "left alone",
        lambda r: f"{count_in(r.details or {}, 'skipped_changed_state'):,}",
        4,
        right=True,
    ),
)

_AUDIT = Listing(
    "entries",
    _AUDIT_COLUMNS,
    ops.audit.AuditEntry.as_dict,
    "no operator action recorded yet",
    title="Audit",
)
