"""Advancing a stored waves requeue: one step, written once, run by any process.

A plan (``sk_wave_plans_t``, :mod:`skconsole.core.waves`) is advanced by whichever
process gets there: the command that made it while it runs, a console, every worker's
upkeep (:mod:`skconsole.worker.upkeep`), ``skconsole waves resume``. There is no leader:
each :func:`step` is one transaction that first takes the plan's row ``FOR UPDATE SKIP
LOCKED`` (``waves_take.sql``), so two processes never take the same ids, and a process
that dies mid-step leaves the plan where the last committed step left it. A step does
one of:

- the current wave is being requeued: requeue its next batch of ids with requeue's own
  statement (``ops_requeue.sql``: it re-checks each job's status and the selection's
  filters, and never touches a job already waiting or running), record in the same
  transaction what it requeued and left alone, the wave's audit row (written by its first
  batch, its count raised by the later ones) and how many ids the plan has taken;
- the current wave is requeued: read what its jobs came to (``waves_tally.sql``) and,
  once all finished, decide (:func:`skconsole.core.waves.verdict`): go on to the next
  wave, or stop and say why (with an audit row).

The step is a generator of statements (:class:`Call`) so the one definition runs on a
command's or console's connection (:func:`run`) and on a worker's asynchronous one
(:func:`arun`). This module sits below ``ops`` and the worker: the workers may not import
ops.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

import psycopg
from psycopg.rows import kwargs_row

from skconsole.core.actor import Origin
from skconsole.core.json_types import JsonObject
from skconsole.core.status import JobStatus
from skconsole.core.waves import (
    OPEN,
    QUEUED,
    SETTLED,
    PlanState,
    WaveTally,
    percent,
    state_after_batch,
    verdict,
)
from skconsole.db.audit import MAX_NAME, AuditRow
from skconsole.db.sqlfiles import query

#: the ids one step requeues at most (a requeue's batch)
WAVE_BATCH = 2_000
#: the audit action of a wave's requeue (the requeue's own) and of a plan's stop or cancel
REQUEUE_ACTION = "requeue"
WAVES_ACTION = "waves"


@dataclass(frozen=True)
class Call:
    """One statement of a step: a query's text, its parameters, how to read its rows."""

    statement: LiteralString
    params: dict[str, object]
    row: Callable[..., Any]


#: a step: statements out, their rows back, what it did at the end
Step = Generator[Call, list[Any], "Stepped"]


@dataclass(frozen=True)
class Stepped:
    """What one step did to its plan: ``took`` is False when the plan was over or held by
    another process (nothing done); ``requeued`` jobs this step; the plan's state after."""

    plan_id: int
    took: bool
    state: PlanState | None = None
    wave: int | None = None
    requeued: int = 0
    left_alone: int = 0
    #: the wave's verdict when this step decided one, else what the wave is waiting for
    said: str = ""
    audit_id: int | None = None
    #: this step changed something (requeued a batch or decided a wave)
    moved: bool = False


@dataclass(frozen=True)
class Taken:
    """The plan's row as ``waves_take.sql`` reads it, under its lock."""

    plan_id: int
    state: str
    wave: int
    waves: int
    taken: int
    wave_end: int
    wave_size: int
    gate: float
    cuts: list[float]
    reset_errors: bool
    statuses: list[int]
    task_type: str | None
    signature: str | None
    cutoff: datetime | None
    selection: JsonObject
    plan_user: str
    plan_host: str
    next_ids: list[UUID]
    audit_id: int | None
    wave_requeued: int
    wave_left: int
    previous_reason: str | None


@dataclass(frozen=True)
class _Moved:
    task_id: UUID


@dataclass(frozen=True)
class _Recorded:
    audit_id: int | None
    left_waiting: int
    left_gone: int
    left_other: int
    plans: int


@dataclass(frozen=True)
class _Decided:
    waves: int
    plans: int
    audit_id: int | None


@dataclass(frozen=True)
class Driver:
    """Who advances the plan: the face recorded on the audit rows it writes (the person
    is the plan's maker)."""

    origin: Origin
    batch: int = WAVE_BATCH
    #: added to the audit rows' details: which process carried the plan on
    by: str = field(default="")


def tally_params(plan_id: int, wave: int) -> dict[str, object]:
    return {
        "plan_id": plan_id,
        "wave": wave,
        "settled": [int(s) for s in SETTLED],
        "succeeded": int(JobStatus.PROCESSED),
    }


def requeue_params(plan: Taken, ids: Sequence[UUID]) -> dict[str, object]:
    """``ops_requeue.sql``'s parameters for a batch of the plan's ids: all due now, the
    plan's statuses and filters re-checked."""
    return {
        "ids": list(ids),
        "statuses": plan.statuses,
        "task_type": plan.task_type,
        "signature": plan.signature,
        "cutoff": plan.cutoff,
        "reset_errors": plan.reset_errors,
        "spread_s": 0.0,
        "spread_from": None,
        "position": 0,
        "total": len(ids),
    }


def _row(plan: Taken, driver: Driver, action: str, details: JsonObject) -> AuditRow:
    by: JsonObject = {"by": driver.by} if driver.by else {}
    return AuditRow(
        plan.plan_user[:MAX_NAME],
        plan.plan_host[:MAX_NAME],
        action,
        dict(plan.selection),
        0,
        {**details, **by},
        driver.origin,
    )


def wave_details(plan: Taken, requeued: int, left: int) -> JsonObject:
    """The details of a wave's audit row: the requeue's, and which wave of which plan."""
    return {
        "requested": plan.wave_size,
        "changed": requeued,
        "skipped_changed_state": left,
        "reset_errors": plan.reset_errors,
        "waves": list(plan.cuts),
        "gate": plan.gate,
        "plan": plan.plan_id,
        "wave": plan.wave,
        "of": plan.waves,
        **({"because": plan.previous_reason} if plan.previous_reason else {}),
    }


def step(plan_id: int, driver: Driver) -> Step:
    """One step of advancing plan ``plan_id`` (run it in one transaction: :func:`run`)."""
    taken: list[Taken] = yield Call(
        query("waves_take"),
        {"plan_id": plan_id, "batch": driver.batch, "open": [s.value for s in OPEN]},
        Taken,
    )
    if not taken:
        return Stepped(plan_id, took=False)
    plan = taken[0]
    if PlanState.of(plan.state) is PlanState.RUNNING:
        return (yield from _requeue_batch(plan, driver))
    return (yield from _judge(plan, driver))


def _requeue_batch(plan: Taken, driver: Driver) -> Step:
    ids = plan.next_ids
    moved_rows: list[_Moved] = (
        (yield Call(query("ops_requeue"), requeue_params(plan, ids), _Moved)) if ids else []
    )
    moved = [r.task_id for r in moved_rows]
    now_taken = plan.taken + len(ids)
    state = state_after_batch(plan.wave, plan.waves, now_taken, plan.wave_end)
    left = len(ids) - len(moved)
    details = wave_details(plan, plan.wave_requeued + len(moved), plan.wave_left + left)
    row = _row(plan, driver, REQUEUE_ACTION, details)
    recorded: list[_Recorded] = yield Call(
        query("waves_requeued"),
        {
            **row.params(),
            "plan_id": plan.plan_id,
            "wave": plan.wave,
            "ids": ids,
            "moved": moved,
            "queued": [int(s) for s in QUEUED],
            "audit_id": plan.audit_id,
            "taken": now_taken,
            "state": state.value,
        },
        _Recorded,
    )
    audit_id = recorded[0].audit_id if recorded else plan.audit_id
    return Stepped(
        plan.plan_id,
        took=True,
        state=state,
        wave=plan.wave,
        requeued=len(moved),
        left_alone=left,
        audit_id=audit_id,
        moved=True,
    )


def _judge(plan: Taken, driver: Driver) -> Step:
    tallies: list[WaveTally] = yield Call(
        query("waves_tally"), tally_params(plan.plan_id, plan.wave), WaveTally
    )
    tally = tallies[0] if tallies else WaveTally(0, 0, 0, 0, None)
    if not tally.decided:
        yield Call(query("waves_checked"), {"plan_id": plan.plan_id}, _PlanId)
        return Stepped(
            plan.plan_id, took=True, state=PlanState.WAITING, wave=plan.wave, said=tally.progress()
        )
    judged = verdict(plan.wave, plan.gate, tally)
    state = PlanState.RUNNING if judged.passed else PlanState.STOPPED
    row = _row(
        plan,
        driver,
        WAVES_ACTION,
        {
            "plan": plan.plan_id,
            "wave": plan.wave,
            "of": plan.waves,
            "state": state.value,
            "reason": judged.reason,
            "gate": plan.gate,
        },
    )
    decided: list[_Decided] = yield Call(
        query("waves_decide"),
        {
            **row.params(),
            "plan_id": plan.plan_id,
            "wave": plan.wave,
            "finished": tally.finished,
            "succeeded": tally.succeeded,
            "reason": judged.reason,
            "state": state.value,
            "next_wave": plan.wave + 1 if judged.passed else plan.wave,
            "stop": not judged.passed,
        },
        _Decided,
    )
    return Stepped(
        plan.plan_id,
        took=True,
        state=state,
        wave=plan.wave,
        said=judged.reason,
        audit_id=decided[0].audit_id if decided else None,
        moved=True,
    )


def run(conn: psycopg.Connection[Any], steps: Step) -> Stepped:
    """Run a step on a connection, in one transaction."""
    with conn.transaction():
        call = next(steps)
        while True:
            with conn.cursor(row_factory=kwargs_row(call.row)) as cur:
                got = cur.execute(call.statement, call.params, prepare=False).fetchall()
            try:
                call = steps.send(got)
            except StopIteration as done:
                result: Stepped = done.value
                return result


async def arun(conn: psycopg.AsyncConnection[Any], steps: Step) -> Stepped:
    """Run a step on an asynchronous connection (a worker's), in one transaction."""
    async with conn.transaction():
        call = next(steps)
        while True:
            async with conn.cursor(row_factory=kwargs_row(call.row)) as cur:
                await cur.execute(call.statement, call.params, prepare=False)
                got = await cur.fetchall()
            try:
                call = steps.send(got)
            except StopIteration as done:
                result: Stepped = done.value
                return result


def describe_cuts(cuts: Sequence[float]) -> str:
    """ "1%,10%,50%,100%"."""
    return ",".join(percent(c) for c in cuts)


@dataclass(frozen=True)
class _PlanId:
    plan_id: int


async def aopen_plans(
    conn: psycopg.AsyncConnection[Any], every_s: float, limit: int = 100
) -> list[int]:
    """The plans a worker may advance now, oldest first: those requeuing a wave, and those
    waiting for one that no process looked at for ``every_s`` seconds."""
    async with conn.cursor(row_factory=kwargs_row(_PlanId)) as cur:
        await cur.execute(query("waves_open"), {"limit": limit, "every_s": every_s})
        return [r.plan_id for r in await cur.fetchall()]
