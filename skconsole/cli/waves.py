"""``skconsole waves``: the waves requeues (``skconsole requeue --waves``), one in detail,
cancel one, drive one from here; and how ``requeue --waves`` follows its plan.

A plan is stored in the database and carried on by any process: every worker's upkeep,
or a command driving it (:func:`follow`, which ``requeue --waves`` runs after its first
wave, and ``waves resume``). Ctrl-C leaves it stored: the workers go on with it.
"""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.markup import escape

from skconsole.cli.acting import confirm_or_exit
from skconsole.cli.app import app
from skconsole.cli.options import (
    MAX_LIST_ROWS,
    ActionFlags,
    JsonOpt,
    LimitOpt,
    WideOpt,
    check_range,
    cli_actor,
    options_of,
    takes_flags,
)
from skconsole.cli.output import err, out, print_json
from skconsole.cli.view_table import Listing, column, print_items
from skconsole.core.errors import ConfigError
from skconsole.core.text import printable
from skconsole.core.waves import PlanState, percent
from skconsole.ops.common import Conn
from skconsole.ops.model import ActionResult
from skconsole.ops.waves import advance, cancel, driver_of
from skconsole.read import waves as read_waves
from skconsole.read.waves import Wave, WavePlan
from skconsole.views import Column

waves_app = typer.Typer(
    help="Requeues in canary waves (requeue --waves): list, show, cancel, resume.",
    no_args_is_help=False,
)
app.add_typer(waves_app, name="waves")

#: how often a command driving a plan looks at it again
POLL_S = 1.0

PlanArg = Annotated[int, typer.Argument(metavar="ID", help="The waves requeue (its #)")]


def _say(text: str) -> None:
    out.print(escape(printable(text)), highlight=False)


def _how_to_go_on(plan_id: int) -> str:
    return (
        f"waves requeue #{plan_id} is stored: the workers carry it on."
        f" `skconsole waves show {plan_id}` follows it, `skconsole waves resume {plan_id}`"
        f" drives it from here, `skconsole waves cancel {plan_id}` stops it"
    )


class _Follower:
    """What a driving command has said of a plan, so it says each thing once."""

    def __init__(self, plan_id: int, said_waves: int) -> None:
        self.plan_id = plan_id
        self.requeued_said = said_waves  # waves whose requeue was said
        self.verdicts_said = 0
        self.progress = ""

    def tell(self, conn: Conn, plan: WavePlan) -> None:
        for wave in read_waves.waves(conn, self.plan_id):
            size = plan.sizes[wave.wave - 1]
            if wave.wave > self.verdicts_said and wave.reason is not None:
                self.verdicts_said = wave.wave
                _say(wave.reason)
            if wave.wave > self.requeued_said and wave.taken >= size:
                self.requeued_said = wave.wave
                audit = f" (audit #{wave.audit_id})" if wave.audit_id is not None else ""
                _say(
                    f"wave {wave.wave} of {plan.waves}: requeued {wave.requeued:,} of {size:,}"
                    f"{wave.left_words()}{audit}"
                )
        if plan.state is PlanState.WAITING:
            tally = read_waves.tally(conn, self.plan_id, plan.wave)
            if tally is not None:
                line = f"wave {plan.wave}: {tally.progress()}"
                if line != self.progress:
                    self.progress = line
                    _say(line)


def follow(conn: Conn, plan_id: int, *, said_waves: int = 0) -> PlanState:
    """Drive the plan from here until it is over, saying each wave's requeue, progress and
    verdict; Ctrl-C leaves it to the workers (exit 130)."""
    driver = driver_of(cli_actor())
    follower = _Follower(plan_id, said_waves)
    try:
        while True:
            advance(conn, plan_id, driver)
            plan = read_waves.plan(conn, plan_id)
            if plan is None:
                raise ConfigError(f"waves requeue #{plan_id} is gone")
            follower.tell(conn, plan)
            if not plan.state.is_open:
                _end(plan)
                return plan.state
            time.sleep(POLL_S)
    except KeyboardInterrupt:
        err.print(escape(_how_to_go_on(plan_id)), highlight=False)
        raise typer.Exit(130) from None


def _end(plan: WavePlan) -> None:
    if plan.state is PlanState.DONE:
        _say(f"waves requeue #{plan.plan_id} done: {plan.requeued:,} of {plan.jobs:,} requeued")
    elif plan.state is PlanState.STOPPED:
        _say(
            f"waves requeue #{plan.plan_id} stopped at wave {plan.wave} of {plan.waves}, whose"
            f" gate failed: {plan.jobs - plan.taken:,} job(s) of the later waves left as they were"
        )
    else:
        _say(f"waves requeue #{plan.plan_id} {plan.state.value}: {plan.reason or ''}")


def after_requeue(ctx: typer.Context, result: ActionResult, flags: ActionFlags) -> None:
    """``requeue --waves``: its first wave is requeued; say the plan and drive it (not with
    --json, which prints the first wave's result and leaves the rest to the workers)."""
    plan_id = result.details.get("plan")
    if not isinstance(plan_id, int) or flags.as_json:
        return
    try:
        sizes = result.details.get("sizes")
        gate = result.details.get("gate")
        if isinstance(sizes, list) and isinstance(gate, float | int):
            _say(
                f"waves requeue #{plan_id}: waves of {', '.join(f'{s:,}' for s in sizes)} jobs;"
                f" each next one goes once every job of the one before finished and at least"
                f" {percent(float(gate))} of them succeeded (Ctrl-C leaves it to the workers)"
            )
        db = options_of(ctx).open("skconsole-waves", write=True)
        with db.connect() as conn:
            state = follow(conn, plan_id, said_waves=1)
    except KeyboardInterrupt:
        err.print(escape(_how_to_go_on(plan_id)), highlight=False)
        raise typer.Exit(130) from None
    if state is not PlanState.DONE:
        raise typer.Exit(1)


# -- the commands --------------------------------------------------------------------------
_PLAN_COLUMNS: tuple[Column[WavePlan], ...] = (
    column("#", lambda p: str(p.plan_id), right=True, ident=True),
    column("when", lambda p: p.created_at.strftime("%Y-%m-%d %H:%M:%S"), 3),
    column("who", lambda p: f"{p.user}@{p.host}", 4),
    column("where", WavePlan.where, 1),
    column("waves", lambda p: ",".join(percent(c) for c in p.cuts), 2),
    column("gate", lambda p: percent(p.gate), 2, right=True),
    column("requeued", lambda p: f"{p.requeued:,} of {p.jobs:,}", 1, right=True),
    column("why", lambda p: p.reason or "", flex=True),
)

_PLANS = Listing(
    "plans", _PLAN_COLUMNS, WavePlan.as_dict, "no waves requeue yet", title="Waves requeues"
)

_WAVE_COLUMNS: tuple[Column[Wave], ...] = (
    column("wave", lambda w: str(w.wave), right=True, ident=True),
    column("requeued", lambda w: f"{w.requeued:,}", right=True),
    column("left alone", lambda w: f"{w.left_alone:,}", 2, right=True),
    column("finished", lambda w: "-" if w.finished is None else f"{w.finished:,}", 1, right=True),
    column(
        "succeeded", lambda w: "-" if w.succeeded is None else f"{w.succeeded:,}", 1, right=True
    ),
    column("audit", lambda w: "-" if w.audit_id is None else f"#{w.audit_id}", 3, right=True),
    column("verdict", lambda w: w.reason or "", flex=True),
)


@waves_app.callback(invoke_without_command=True)
def list_plans(
    ctx: typer.Context, limit: LimitOpt = 50, as_json: JsonOpt = False, wide: WideOpt = False
) -> None:
    """The waves requeues, newest first: where each is, what it requeued, why it stopped."""
    if ctx.invoked_subcommand is not None:
        return
    check_range("--limit", limit, 1, MAX_LIST_ROWS)
    db = options_of(ctx).open("skconsole-waves", replica_ok=True)
    with db.connect() as conn:
        plans = read_waves.plans(conn, limit=limit)
    _PLANS.print(plans, as_json=as_json, wide=wide)


@waves_app.command("show")
def show(
    ctx: typer.Context, plan_id: PlanArg, as_json: JsonOpt = False, wide: WideOpt = False
) -> None:
    """One waves requeue: each wave's requeue and verdict, and how the current one goes."""
    db = options_of(ctx).open("skconsole-waves", replica_ok=True)
    with db.connect() as conn:
        plan = read_waves.plan(conn, plan_id)
        if plan is None:
            raise ConfigError(f"no waves requeue #{plan_id} (skconsole waves lists them)")
        waves = read_waves.waves(conn, plan_id)
        tally = read_waves.tally(conn, plan_id, plan.wave) if plan.state.is_open else None
    if as_json:
        current = None if tally is None else tally.progress()
        print_json(
            {**plan.as_dict(), "waves_so_far": [w.as_dict() for w in waves], "current": current}
        )
        return
    sizes = ", ".join(f"{s:,}" for s in plan.sizes)
    _say(
        f"waves requeue #{plan.plan_id} by {plan.user}@{plan.host}: {plan.where()};"
        f" waves of {sizes} jobs, gate {percent(plan.gate)}"
    )
    if plan.reason:
        _say(plan.reason)
    print_items(_WAVE_COLUMNS, waves, title=None, wide=wide)
    if tally is not None:
        _say(f"wave {plan.wave}: {tally.progress()}")


@waves_app.command("cancel")
@takes_flags()
def cancel_command(ctx: typer.Context, plan_id: PlanArg, *, flags: ActionFlags) -> None:
    """Stop a waves requeue: no further wave goes (the jobs already requeued run)."""
    db = options_of(ctx).open("skconsole-waves", write=not flags.dry_run)
    with db.connect() as conn:
        plan = read_waves.plan(conn, plan_id)
        if plan is None:
            raise ConfigError(f"no waves requeue #{plan_id} (skconsole waves lists them)")
        if flags.dry_run:
            _say(f"waves requeue #{plan_id}: {plan.where()}; cancel would stop it")
            return
        confirm_or_exit(f"Cancel waves requeue #{plan_id} ({plan.where()})?", flags.yes)
        audit_id = cancel(conn, plan_id, cli_actor())
    if flags.as_json:
        print_json({"plan_id": plan_id, "state": PlanState.CANCELLED.value, "audit_id": audit_id})
    else:
        _say(f"waves requeue #{plan_id} cancelled: no further wave goes (audit #{audit_id})")


@waves_app.command("resume")
def resume(
    ctx: typer.Context,
    plan_id: Annotated[
        int | None,
        typer.Argument(metavar="[ID]", help="The waves requeue (without it: the one open)"),
    ] = None,
) -> None:
    """Drive a waves requeue from here until it is over (the workers carry it on too)."""
    db = options_of(ctx).open("skconsole-waves", write=True)
    with db.connect() as conn:
        if plan_id is None:
            open_plans = [p for p in read_waves.plans(conn) if p.state.is_open]
            if len(open_plans) != 1:
                ids = ", ".join(f"#{p.plan_id}" for p in open_plans) or "none"
                raise ConfigError(f"waves resume needs an ID: open waves requeues: {ids}")
            plan_id = open_plans[0].plan_id
        plan = read_waves.plan(conn, plan_id)
        if plan is None:
            raise ConfigError(f"no waves requeue #{plan_id} (skconsole waves lists them)")
        if not plan.state.is_open:
            raise ConfigError(f"waves requeue #{plan_id} is {plan.state.value}: nothing to resume")
        _say(f"waves requeue #{plan_id}: {plan.where()}")
        state = follow(conn, plan_id)
    if state is not PlanState.DONE:
        raise typer.Exit(1)
