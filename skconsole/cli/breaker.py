"""``skconsole breaker``: list, add, open, close and remove circuit breakers keyed on a
failure signature.

Each change is the operator action :data:`skconsole.ops.BREAKER` (checked for write
access, audited), as the console's key runs it; listing reads :mod:`skconsole.read.breakers`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer
from rich.markup import escape

from skconsole import read
from skconsole.cli.acting import confirm_or_exit, print_outcome, show_dry_run, show_forecast
from skconsole.cli.app import app
from skconsole.cli.options import (
    ActionFlags,
    JsonOpt,
    WideOpt,
    check_text,
    cli_actor,
    options_of,
    takes_flags,
)
from skconsole.cli.output import out
from skconsole.cli.view_table import Listing, column
from skconsole.core.durations import format_age, parse_duration
from skconsole.core.errors import ConfigError
from skconsole.core.payload_terms import parse_term
from skconsole.ops import BREAKER, BreakerCommand, BreakerParams, Selection
from skconsole.ops.breaker import (
    DEFAULT_CANARIES,
    DEFAULT_COOL_DOWN_S,
    MAX_COOL_DOWN_S,
    MAX_WINDOW_S,
)
from skconsole.views import Column

breaker_app = typer.Typer(
    help="Circuit breakers keyed on a failure signature: hold back only the jobs that"
    " would hit a known failure, let canaries through after a cool-down, close when"
    " they succeed (docs/howto/on-call.md).",
    no_args_is_help=False,
)
app.add_typer(breaker_app, name="breaker")

IdArg = Annotated[
    int | None,
    typer.Argument(help="The breaker's id (as `skconsole breaker` lists them)", show_default=False),
]
TypeOpt = Annotated[str | None, typer.Option("--type", help="The task type it holds back")]
SignatureOpt = Annotated[
    str | None,
    typer.Option(
        "--signature", help="The failure group's signature it watches (as panel 3 shows it)"
    ),
]
WhereOpt = Annotated[
    str | None,
    typer.Option(
        "--where",
        help="payload.PATH=VALUE: hold back only the jobs that share it (as F shows it);"
        " without it, every job of the type",
        metavar="<term>",
    ),
]
ThresholdOpt = Annotated[
    int | None,
    typer.Option("--threshold", help="Open by itself at this many failures in --window"),
]
WindowOpt = Annotated[
    str | None, typer.Option("--window", help="The window --threshold counts in, e.g. 60s")
]
CoolDownOpt = Annotated[
    str, typer.Option("--cool-down", help="How long it stays open before letting canaries through")
]
CanariesOpt = Annotated[
    int, typer.Option("--canaries", help="How many held jobs half-open lets through, in all")
]


@breaker_app.callback(invoke_without_command=True)
def show(ctx: typer.Context, as_json: JsonOpt = False, wide: WideOpt = False) -> None:
    """The circuit breakers, those holding jobs back first."""
    if ctx.invoked_subcommand is not None:
        return
    db = options_of(ctx).open("skconsole-breaker", replica_ok=True)
    with db.connect() as conn:
        rows = read.breakers(conn)
    _BREAKERS.print(rows, as_json=as_json, wide=wide)


_COLUMNS: tuple[Column[read.Breaker], ...] = (
    column("id", lambda b: f"#{b.breaker_id}", right=True),
    column("type", lambda b: b.task_type, ident=True),
    column("state", lambda b: b.status_line, 1, flex=True),
    column("signature", lambda b: b.signature, 2, flex=True),
    column("jobs", lambda b: str(b.term) if b.term is not None else "all", 3),
    column(
        "opens at",
        lambda b: f"{b.threshold} in {format_age(b.window_s)}" if b.window_s else "by hand",
        4,
    ),
)

_BREAKERS = Listing(
    "breakers",
    _COLUMNS,
    read.Breaker.as_dict,
    "no circuit breaker (skconsole breaker add --type T --signature S --threshold 20 --window 60s)",
    title="Breakers",
)


def _params(
    command: BreakerCommand,
    breaker_id: int | None,
    task_type: str | None,
    signature: str | None,
    where: str | None,
    threshold: int | None = None,
    window: str | None = None,
    cool_down: str = f"{DEFAULT_COOL_DOWN_S:g}s",
    canaries: int = DEFAULT_CANARIES,
) -> tuple[Selection, BreakerParams]:
    check_text("--type", task_type)
    check_text("--signature", signature)
    if breaker_id is not None and (task_type or signature or where):
        raise ConfigError("name a breaker by its id, or by --type and --signature: not both")
    if breaker_id is None and not (task_type and signature):
        raise ConfigError("name a breaker by its id, or by --type and --signature")
    params = BreakerParams(
        command=command,
        breaker_id=breaker_id,
        signature=signature,
        term=parse_term(where) if where is not None else None,
        threshold=threshold,
        window_s=(
            parse_duration(window, option="--window", minimum=1.0, maximum=MAX_WINDOW_S)
            if window is not None
            else None
        ),
        cool_down_s=parse_duration(cool_down, option="--cool-down", maximum=MAX_COOL_DOWN_S),
        canaries=canaries,
    )
    return Selection(task_type=task_type), params


def _run(ctx: typer.Context, sel: Selection, params: BreakerParams, flags: ActionFlags) -> None:
    db = options_of(ctx).open("skconsole-breaker", write=not flags.dry_run)
    verb = params.command.value
    done = {"open": "opened", "close": "closed", "remove": "removed", "add": "added"}[verb]
    with db.connect() as conn:
        p = BREAKER.preview(conn, sel, params)
        target = f"breaker{params.phrase()}"
        if sel.task_type is not None:
            target += f" of {sel.task_type}"
        if params.command in (BreakerCommand.CLOSE, BreakerCommand.REMOVE):
            effect = f"it holds {p.details['held']:,} job(s) now, given their due times back"
        else:
            effect = (
                f"it holds back {p.details['would_hold']:,} of its"
                f" {p.details['waiting']:,} waiting job(s) when open"
            )
        if flags.dry_run:
            show_forecast(p)
            show_dry_run(
                p,
                flags.as_json,
                f"{escape(verb)} {escape(target)}: {effect};"
                f" {'changes' if p.count else 'changes nothing'}",
            )
            return
        if p.count and params.command is not BreakerCommand.ADD:
            show_forecast(p)
            confirm_or_exit(f"{verb.capitalize()} {target}? {effect.capitalize()}", flags.yes)
        result = BREAKER.execute(conn, sel, params, actor=cli_actor())
    if flags.as_json:
        print_outcome(result, sel)
        return
    number = result.details.get("breaker_id")
    if not result.changed:
        if number is None:
            out.print("no such breaker: nothing changed (`skconsole breaker` lists them)")
        else:
            out.print(f"breaker #{number}: nothing changed (already {done})", highlight=False)
        return
    moved = result.details.get("moved") or 0
    said = {
        BreakerCommand.ADD: "added" if result.details.get("was") is None else "settings changed",
        BreakerCommand.OPEN: f"open; {moved:,} job(s) parked",
        BreakerCommand.CLOSE: f"closed; {moved:,} job(s) given back their due times",
        BreakerCommand.REMOVE: f"removed; {moved:,} job(s) given back their due times",
    }[params.command]
    out.print(f"breaker #{number} {escape(said)} (audit #{result.audit_id})", highlight=False)


@breaker_app.command("add")
@takes_flags()
def add(
    ctx: typer.Context,
    task_type: TypeOpt = None,
    signature: SignatureOpt = None,
    where: WhereOpt = None,
    threshold: ThresholdOpt = None,
    window: WindowOpt = None,
    cool_down: CoolDownOpt = f"{DEFAULT_COOL_DOWN_S:g}s",
    canaries: CanariesOpt = DEFAULT_CANARIES,
    *,
    flags: ActionFlags,
) -> None:
    """Add a breaker, closed: armed to open by itself with --threshold and --window, else
    for opening by hand (run again to change its settings)."""
    sel, params = _params(
        BreakerCommand.ADD,
        None,
        task_type,
        signature,
        where,
        threshold,
        window,
        cool_down,
        canaries,
    )
    _run(ctx, sel, params, flags)


@breaker_app.command("open")
@takes_flags()
def open_breaker(
    ctx: typer.Context,
    breaker_id: IdArg = None,
    task_type: TypeOpt = None,
    signature: SignatureOpt = None,
    where: WhereOpt = None,
    cool_down: CoolDownOpt = f"{DEFAULT_COOL_DOWN_S:g}s",
    canaries: CanariesOpt = DEFAULT_CANARIES,
    *,
    flags: ActionFlags,
) -> None:
    """Open a breaker now (by id, or made from --type, --signature and --where)."""
    sel, params = _params(
        BreakerCommand.OPEN,
        breaker_id,
        task_type,
        signature,
        where,
        cool_down=cool_down,
        canaries=canaries,
    )
    _run(ctx, sel, params, flags)


def _ending(command: BreakerCommand) -> Callable[..., None]:
    """The command that closes a breaker, or closes and deletes it."""

    @takes_flags()
    def run(
        ctx: typer.Context,
        breaker_id: IdArg = None,
        task_type: TypeOpt = None,
        signature: SignatureOpt = None,
        where: WhereOpt = None,
        *,
        flags: ActionFlags,
    ) -> None:
        sel, params = _params(command, breaker_id, task_type, signature, where)
        _run(ctx, sel, params, flags)

    return run


close = breaker_app.command(
    "close", help="Close a breaker now: the jobs it held get their due times back."
)(_ending(BreakerCommand.CLOSE))
remove = breaker_app.command("remove", help="Close a breaker and delete it.")(
    _ending(BreakerCommand.REMOVE)
)
