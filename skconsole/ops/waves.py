"""Requeue in canary waves: storing the plan, requeuing its first wave, carrying it on,
cancelling it (``skconsole requeue --waves``, ``skconsole waves``, the console's requeue).

A waves requeue is the requeue action (:data:`skconsole.ops.REQUEUE`) with
``RequeueParams(waves=...)``: its preview is a requeue's; its execution freezes the
selection's ids in the order requeue takes them, stores the plan
(``sk_wave_plans_t``) and requeues the first wave in batches, each with the wave's audit
row, in the plan's own steps (:mod:`skconsole.db.waves`). The rest is carried on by any
process: every worker's upkeep, a command that drives it (:func:`advance`), until a wave
fails its gate, the last wave is requeued, or someone cancels it (:func:`cancel`).
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from psycopg.types.json import Jsonb

from skconsole.core.actor import Actor
from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject
from skconsole.core.waves import OPEN, PlanState, wave_ends, wave_sizes
from skconsole.db.audit import MAX_NAME, AuditRow
from skconsole.db.waves import WAVES_ACTION, Driver, Stepped, run, step
from skconsole.ops.audit import record
from skconsole.ops.common import Conn, signature_of
from skconsole.ops.guard import Privilege, ensure_writable, write_errors
from skconsole.ops.model import ActionResult, Selection
from skconsole.ops.spec import P, Steps
from skconsole.read import waves as read_waves
from skconsole.read.query import fetch

if TYPE_CHECKING:
    from skconsole.ops.job_action import JobAction

PLANS, WAVES = "sk_wave_plans_t", "sk_waves_t"
#: what storing and advancing a plan writes, besides a requeue's own tables
NEEDS: tuple[Privilege, ...] = (
    (PLANS, "insert"),
    (PLANS, "update"),
    (WAVES, "insert"),
    (WAVES, "update"),
)
#: how long a driver waits for a wave another process is requeuing right now
_BUSY_WAIT_S = 0.05


def driver_of(actor: Actor, batch: int | None = None) -> Driver:
    """The driver a process is: its face, and which process (for the audit rows)."""
    by = f"{socket.gethostname()} pid {os.getpid()}"
    return Driver(actor.origin, by=by) if batch is None else Driver(actor.origin, batch, by)


def _created(plan_id: int) -> int:
    return plan_id


@dataclass(frozen=True)
class WavesAsked:
    """What a waves requeue was asked: the cumulative shares, the gate, the error counts."""

    cuts: tuple[float, ...]
    gate: float
    reset_errors: bool


def start_waves(
    action: JobAction[P],
    conn: Conn,
    selection: Selection,
    params: P,
    steps: Steps,
    asked: WavesAsked,
) -> ActionResult:
    """Store the plan for the selection's (or the previewed) ids and requeue its first
    wave; the result counts that wave, its details name the plan."""
    selection, where = action._prepare(conn, selection, params)
    todo = (
        list(dict.fromkeys(steps.ids))
        if steps.ids is not None
        else [r.task_id for r in action._rows(conn, where, None)]
    )
    planned: JsonObject = {}
    if action.plan is not None and todo:
        plan = action.plan(conn, todo, params)
        todo, planned = list(plan.ids), plan.details
    ensure_writable(conn, action.name, (*action.needs.privileges, *NEEDS))
    if not todo:
        return record(
            conn, steps.actor, selection, ActionResult(action.name, 0, 0, 0, params.details())
        )
    ends = wave_ends(asked.cuts, len(todo))
    driver = driver_of(steps.actor, steps.batch_size)
    values: dict[str, object] = {
        "user": steps.actor.user[:MAX_NAME],
        "host": steps.actor.host[:MAX_NAME],
        "origin": steps.actor.origin.value,
        "job_ids": todo,
        "cuts": list(asked.cuts),
        "ends": list(ends),
        "gate": asked.gate,
        "statuses": where["statuses"],
        "task_type": selection.task_type,
        "signature": signature_of(conn, selection.group),
        "cutoff": selection.cutoff,
        "selection": Jsonb(selection.as_dict()),
        "reset_errors": asked.reset_errors,
    }
    with write_errors(action.name), conn.transaction():
        (plan_id,) = fetch(conn, "waves_create", _created, values)
        # the first batch in the plan's own transaction: no other process takes it first
        stepped = run(conn, step(plan_id, driver))
    with write_errors(action.name):
        _first_wave(conn, plan_id, driver, stepped, steps)
    first = read_waves.waves(conn, plan_id)[0]
    details: JsonObject = {
        **params.details(),
        **planned,
        "plan": plan_id,
        "wave": 1,
        "of": len(ends),
        "sizes": list(wave_sizes(ends)),
    }
    return ActionResult(
        action.name,
        ends[0],
        first.requeued,
        first.left_alone,
        {**details, "unchanged": 0},
        first.audit_id,
    )


def _first_wave(conn: Conn, plan_id: int, driver: Driver, stepped: Stepped, steps: Steps) -> None:
    """The rest of the first wave's batches (another process may take some)."""
    while stepped.state is PlanState.RUNNING or not stepped.took:
        if steps.on_progress is not None:
            plan = read_waves.plan(conn, plan_id)
            if plan is not None:
                steps.on_progress(plan.taken, plan.ends[0])
        if not stepped.took:
            plan = read_waves.plan(conn, plan_id)
            if plan is None or plan.wave > 1 or plan.state is not PlanState.RUNNING:
                return
            time.sleep(_BUSY_WAIT_S)
        stepped = run(conn, step(plan_id, driver))


def advance(conn: Conn, plan_id: int, driver: Driver) -> Stepped:
    """Advance a plan as far as it goes now: every batch of its current wave, the verdict
    on a wave whose jobs all finished, the next wave's batches. Returns the last step
    (``took`` False: another process holds the plan, or it is over)."""
    while True:
        with write_errors("requeue"):
            stepped = run(conn, step(plan_id, driver))
        if not (stepped.moved and stepped.state in OPEN):
            return stepped


def cancel(conn: Conn, plan_id: int, actor: Actor) -> int:
    """Cancel an open plan: no wave after the ones requeued goes; the audit row's id.
    ConfigError when there is no such plan or it is over."""
    ensure_writable(conn, "cancel a waves requeue", (*NEEDS[:2],))
    found = read_waves.plan(conn, plan_id)
    if found is None:
        raise ConfigError(f"no waves requeue #{plan_id} (skconsole waves lists them)")
    row = AuditRow(
        actor.user,
        actor.host,
        WAVES_ACTION,
        dict(found.selection),
        0,
        {"plan": plan_id, "state": PlanState.CANCELLED.value, "wave": found.wave},
        actor.origin,
    )
    params = {
        **row.params(),
        "plan_id": plan_id,
        "state": PlanState.CANCELLED.value,
        "reason": f"cancelled by {actor.user}@{actor.host} at wave {found.wave}",
        "open": [s.value for s in OPEN],
    }
    with write_errors("cancel a waves requeue"):
        done = fetch(conn, "waves_cancel", _Cancelled, params)
    if not done:
        now = read_waves.plan(conn, plan_id)
        state = found.state if now is None else now.state
        raise ConfigError(f"waves requeue #{plan_id} is {state.value}: nothing to cancel")
    audit_id = done[0].audit_id
    assert audit_id is not None
    return audit_id


@dataclass(frozen=True)
class _Cancelled:
    plan_id: int
    audit_id: int | None
