"""``skconsole retention``: show, set and clear how long finished results are kept.

Setting a policy says, before it asks, how many results it makes eligible now
(the workers purge them within a minute). Both changes are the operator action
:data:`skconsole.ops.RETENTION`: checked for write access and audited like a limit.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from skconsole.cli.acting import confirm_or_exit
from skconsole.cli.app import app
from skconsole.cli.options import (
    ActionFlags,
    IncludeFaultedOpt,
    JsonOpt,
    WideOpt,
    YesOpt,
    check_text,
    cli_actor,
    options_of,
    takes_flags,
)
from skconsole.cli.output import out, print_json
from skconsole.cli.view_table import Listing, column
from skconsole.core.durations import format_limit, parse_duration
from skconsole.core.retention import Policy
from skconsole.ops import RETENTION, RetentionParams, Selection, retention
from skconsole.ops.model import count_in
from skconsole.views import Column

retention_app = typer.Typer(
    help="How long finished results are kept (off until a policy is set).",
    no_args_is_help=False,
)
app.add_typer(retention_app, name="retention")

PolicyTypeOpt = Annotated[
    str | None,
    typer.Option("--type", help="The task type (without it: the default, for every other type)"),
]


@retention_app.callback(invoke_without_command=True)
def show(ctx: typer.Context, as_json: JsonOpt = False, wide: WideOpt = False) -> None:
    """The retention policies; the workers purge finished results past them."""
    if ctx.invoked_subcommand is not None:
        return
    db = options_of(ctx).open("skconsole-retention", replica_ok=True)
    with db.connect() as conn:
        policies = retention.policies(conn)
    _POLICIES.print(policies, as_json=as_json, wide=wide)


_COLUMNS: tuple[Column[Policy], ...] = (
    column("type", lambda p: p.task_type if p.task_type is not None else "(default)", ident=True),
    column("keep", lambda p: format_limit(p.older_than_s), right=True),
    column("5 Faulted", lambda p: "purged too" if p.include_faulted else "kept", 2),
    column("set", lambda p: p.set_at.strftime("%Y-%m-%d %H:%M") if p.set_at else "", 3),
    column("by", lambda p: p.set_by or "", 4, flex=True),
)

_POLICIES = Listing(
    "policies",
    _COLUMNS,
    Policy.as_json,
    "no retention policy: finished results are kept until purged"
    " (skconsole retention set --older-than 30d)",
    title="Retention",
)


@retention_app.command("set")
@takes_flags()
def set_policy(
    ctx: typer.Context,
    older_than: Annotated[
        str,
        typer.Option("--older-than", help="Purge finished results older than this, e.g. 30d"),
    ],
    task_type: PolicyTypeOpt = None,
    include_faulted: IncludeFaultedOpt = False,
    *,
    flags: ActionFlags,
) -> None:
    """Set the retention of a task type, or the default."""
    check_text("--type", task_type)
    seconds = parse_duration(older_than, option="--older-than", minimum=60.0)
    policy = Policy(task_type, seconds, include_faulted)
    params = RetentionParams(older_than_s=seconds, include_faulted=include_faulted)
    sel = Selection(task_type=task_type)
    opts = options_of(ctx)
    db = opts.open("skconsole-retention", write=not flags.dry_run)
    with db.connect() as conn:
        eligible = count_in(RETENTION.preview(conn, sel, params).details, "eligible")
        shown = f"{eligible:,}" + ("+" if eligible >= retention.ELIGIBLE_CAP else "")
        if flags.dry_run:
            if flags.as_json:
                print_json({"policy": policy.as_json(), "eligible": eligible, "dry_run": True})
            else:
                out.print(f"would keep {escape(policy.describe())}; {shown} result(s) eligible now")
            return
        confirm_or_exit(
            f"Keep {policy.describe()}? {shown} result(s) are past it now and will be purged"
            " by the workers",
            flags.yes,
        )
        result = RETENTION.execute(conn, sel, params, actor=cli_actor())
    old = retention.replaced(task_type, result.details)
    if flags.as_json:
        print_json(
            {
                "policy": policy.as_json(),
                "replaced": old.as_json() if old else None,
                "eligible": eligible,
            }
        )
        return
    out.print(f"retention set: {escape(policy.describe())}; {shown} result(s) eligible now")


@retention_app.command("clear")
def clear_policy(
    ctx: typer.Context,
    task_type: PolicyTypeOpt = None,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Remove the retention of a task type, or the default."""
    check_text("--type", task_type)
    db = options_of(ctx).open("skconsole-retention", write=True)
    what = escape(task_type) if task_type is not None else "the default"
    confirm_or_exit(f"Remove the retention policy of {what}?", yes)
    with db.connect() as conn:
        result = RETENTION.execute(
            conn, Selection(task_type=task_type), RetentionParams(clear=True), actor=cli_actor()
        )
    old = retention.replaced(task_type, result.details)
    if as_json:
        print_json({"cleared": old.as_json() if old else None})
        return
    out.print(f"retention cleared: {escape(old.describe())}" if old else f"{what} had no policy")
