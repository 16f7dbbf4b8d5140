"""Waves requeues (``skconsole waves``): the stored plans, their waves, and what the jobs
of a wave came to (:mod:`skconsole.core.waves`; advanced by :mod:`skconsole.db.waves`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from skconsole.core.actor import Origin
from skconsole.core.json_types import JsonObject
from skconsole.core.waves import PlanState, WaveTally, percent, wave_sizes
from skconsole.db.waves import tally_params
from skconsole.read.query import fetch

Conn = psycopg.Connection[Any]


@dataclass(frozen=True)
class WavePlan:
    """A stored waves requeue and how far it got."""

    plan_id: int
    created_at: datetime
    updated_at: datetime
    user: str
    host: str
    origin: Origin | None
    state: PlanState
    wave: int  # the current wave (from 1)
    cuts: tuple[float, ...]
    ends: tuple[int, ...]
    gate: float
    reset_errors: bool
    selection: JsonObject
    reason: str | None
    jobs: int
    taken: int
    requeued: int

    @staticmethod
    def of(*, origin: str, state: str, cuts: list[float], ends: list[int], **cols: Any) -> WavePlan:
        return WavePlan(
            origin=Origin.of(origin),
            state=PlanState.of(state),
            cuts=tuple(cuts),
            ends=tuple(ends),
            **cols,
        )

    @property
    def waves(self) -> int:
        return len(self.ends)

    @property
    def sizes(self) -> tuple[int, ...]:
        return wave_sizes(self.ends)

    def where(self) -> str:
        """ "wave 2 of 4, requeuing", "wave 2 of 4, waiting for its jobs", "done"."""
        at = f"wave {self.wave} of {self.waves}"
        return {
            PlanState.RUNNING: f"{at}, requeuing",
            PlanState.WAITING: f"{at}, waiting for its jobs",
            PlanState.STOPPED: f"stopped at {at}",
            PlanState.CANCELLED: f"cancelled at {at}",
            PlanState.DONE: f"done: {self.waves} wave(s)",
        }[self.state]

    def as_dict(self) -> JsonObject:
        return {
            "plan_id": self.plan_id,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "user": self.user,
            "host": self.host,
            "origin": None if self.origin is None else self.origin.value,
            "state": self.state.value,
            "wave": self.wave,
            "waves": [percent(c) for c in self.cuts],
            "sizes": list(self.sizes),
            "gate": percent(self.gate),
            "reset_errors": self.reset_errors,
            "selection": self.selection,
            "reason": self.reason,
            "jobs": self.jobs,
            "taken": self.taken,
            "requeued": self.requeued,
        }


@dataclass(frozen=True)
class Wave:
    """One wave of a plan: what it requeued and left alone, and the verdict on it."""

    wave: int
    started_at: datetime
    taken: int
    requeued: int
    left_waiting: int  # already waiting or running (someone else requeued them)
    left_gone: int  # their result rows were gone (purged)
    left_other: int  # otherwise changed (succeeded meanwhile, claimed at that instant)
    audit_id: int | None
    finished: int | None
    succeeded: int | None
    decided_at: datetime | None
    reason: str | None

    @property
    def left_alone(self) -> int:
        return self.left_waiting + self.left_gone + self.left_other

    def left_words(self) -> str:
        """ "; left alone 5: 3 already waiting or running, 2 gone (purged)" ("" if none)."""
        if not self.left_alone:
            return ""
        parts = [
            f"{n:,} {words}"
            for n, words in (
                (self.left_waiting, "already waiting or running"),
                (self.left_gone, "gone (purged)"),
                (self.left_other, "no longer failed"),
            )
            if n
        ]
        return f"; left alone {self.left_alone:,}: " + ", ".join(parts)

    def as_dict(self) -> JsonObject:
        return {
            "wave": self.wave,
            "started_at": self.started_at.isoformat(),
            "taken": self.taken,
            "requeued": self.requeued,
            "left_waiting": self.left_waiting,
            "left_gone": self.left_gone,
            "left_other": self.left_other,
            "audit_id": self.audit_id,
            "finished": self.finished,
            "succeeded": self.succeeded,
            "decided_at": None if self.decided_at is None else self.decided_at.isoformat(),
            "reason": self.reason,
        }


def plans(conn: Conn, *, limit: int = 50) -> list[WavePlan]:
    """The waves requeues, newest first."""
    return fetch(conn, "waves_list", WavePlan.of, {"plan_id": None, "limit": limit})


def plan(conn: Conn, plan_id: int) -> WavePlan | None:
    """One waves requeue (None: no such plan)."""
    found = fetch(conn, "waves_list", WavePlan.of, {"plan_id": plan_id, "limit": 1})
    return found[0] if found else None


def waves(conn: Conn, plan_id: int) -> list[Wave]:
    """A plan's waves so far, in order."""
    return fetch(conn, "waves_waves", Wave, {"plan_id": plan_id})


def tally(conn: Conn, plan_id: int, wave: int) -> WaveTally | None:
    """What the jobs a wave requeued have come to now (None: the wave has not started)."""
    found = fetch(conn, "waves_tally", WaveTally, tally_params(plan_id, wave))
    return found[0] if found else None
