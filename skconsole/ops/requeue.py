"""Requeue: failed or cancelled jobs back to the queue as status 1, ready now or spread.

4 Error jobs (still queued, backing off) are made ready; 5 Faulted, 6 Fatal and
7 Cancelled ones are posted again from their result rows. The state is
re-checked in the statement itself: a job that a worker finished or claimed
meanwhile is left alone, never resurrected or posted twice.

Attempts: a job keeps its error count unless ``reset_errors`` (then it starts
from 0). A worker parks a job as 5 Faulted once its errors reach its type's
``max_attempts`` (the retry limit the workers record in ``sk_task_types_t``), so
a kept count leaves a job ``max_attempts - errors`` tries (at least one: a
requeued job always runs once). The preview and the result say so
(:class:`Attempts`).

Spread: with ``spread_s``, the jobs are made due evenly over ``[now, now +
spread)``, in a stable order (priority, then when they were posted), so a
recovering partner is not hit by all of them at once: the n-th of N is due at
``now + spread * n / N``, where ``now`` is read once before the first batch.
The due time is the queue row's ``task_locked_until_ts``, which a claim (this
engine's and Stakhanovise.NET's) waits for, as for any delayed job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from uuid import UUID

from skconsole.core.durations import check_seconds, format_limit
from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject
from skconsole.core.status import FAILED, JobStatus
from skconsole.core.waves import DEFAULT_GATE, check_gate, check_waves, percent
from skconsole.ops.common import Conn
from skconsole.ops.guard import QUEUE, RESULTS
from skconsole.ops.job_action import JobAction, Plan, Queries, StatusRule
from skconsole.ops.model import ActionResult, Selection
from skconsole.ops.spec import Needs, Params, Steps, Wording
from skconsole.ops.waves import WavesAsked, start_waves
from skconsole.read.query import fetch

#: The longest a requeue may be spread over: 7 days.
MAX_SPREAD_S = 7 * 86_400.0


def _plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _range(low: int, high: int) -> str:
    return f"{low:,}" if low == high else f"{low:,}-{high:,}"


@dataclass(frozen=True)
class Attempts:
    """What requeuing does to the attempts of some jobs: their error counts now, their
    types' retry limit (``max_attempts``; None: no worker recorded one for some of them)
    and the tries each would have left, kept or reset."""

    jobs: int
    errors_min: int
    errors_max: int
    limit_min: int | None  # the smallest retry limit of their types (None: unknown)
    limit_max: int | None
    left_min: int | None  # tries left with the error counts kept (None: unknown)
    left_max: int | None

    @staticmethod
    def of(rows: Sequence[tuple[int, int | None]]) -> Attempts:
        """From each job's (error count, retry limit or None)."""
        errors = [e for e, _ in rows] or [0]
        known = all(limit is not None for _, limit in rows) and bool(rows)
        limits = [limit for _, limit in rows if limit is not None]
        left = [max(limit - e, 1) for e, limit in rows if limit is not None]
        return Attempts(
            len(rows),
            min(errors),
            max(errors),
            min(limits) if known else None,
            max(limits) if known else None,
            min(left) if known else None,
            max(left) if known else None,
        )

    def as_json(self) -> JsonObject:
        return asdict(self)

    @staticmethod
    def from_json(value: object) -> Attempts | None:
        """The attempts a preview's or a result's details hold (None: none, or not these)."""
        if not isinstance(value, Mapping):
            return None

        def number(key: str) -> int | None:
            v = value.get(key)
            return v if isinstance(v, int) and not isinstance(v, bool) else None

        jobs, low, high = number("jobs"), number("errors_min"), number("errors_max")
        if jobs is None or low is None or high is None:
            return None
        return Attempts(
            jobs,
            low,
            high,
            number("limit_min"),
            number("limit_max"),
            number("left_min"),
            number("left_max"),
        )

    @property
    def each(self) -> str:
        """ "each job" or "the jobs" (one job: "the job")."""
        return "the job" if self.jobs == 1 else "each job"

    def errors_text(self) -> str:
        """Their error counts now: "3 errors each", "1-3 errors", "1 error"."""
        if self.errors_min == self.errors_max:
            suffix = "" if self.jobs == 1 else " each"
            return _plural(self.errors_max, "error", "errors") + suffix
        return f"{_range(self.errors_min, self.errors_max)} errors"

    def limit_text(self) -> str:
        """Their types' retry limit: "4 attempts", "3-5 attempts", or not known."""
        if self.limit_min is None or self.limit_max is None:
            return "not known (no worker of their type has recorded max_attempts)"
        if self.limit_min == self.limit_max:
            return _plural(self.limit_max, "attempt", "attempts")
        return f"{_range(self.limit_min, self.limit_max)} attempts"

    def tries(self, reset: bool) -> str | None:
        """The tries each job has after the requeue: "each job has 1 try left" (counts
        kept), "each job has 4 tries" (reset); None when the retry limit is not known."""
        low, high = (self.limit_min, self.limit_max) if reset else (self.left_min, self.left_max)
        if low is None or high is None:
            return None
        left = "" if reset else " left"
        if low == high:
            return f"{self.each} has {_plural(high, 'try', 'tries')}{left}"
        return f"{_range(low, high)} tries{left}"

    def kept(self) -> str:
        """With the counts kept: "error counts kept: each job has 1 try left"."""
        tries = self.tries(False)
        return (
            f"error counts kept ({self.errors_text()})"
            if tries is None
            else (f"error counts kept: {tries}")
        )

    def reset(self) -> str:
        """With the counts reset: "error counts reset to 0: each job has 4 tries"."""
        tries = self.tries(True)
        return "error counts reset to 0" + ("" if tries is None else f": {tries}")

    def outcome(self, reset: bool) -> str:
        return self.reset() if reset else self.kept()


def waves_text(cuts: Sequence[float], gate: float) -> str:
    """ "in waves 1%,10%,50%,100% gated at 95%"."""
    return f"in waves {','.join(percent(c) for c in cuts)} gated at {percent(gate)}"


def spread_text(seconds: float) -> str:
    """ "due over the next 10m"."""
    return f"due over the next {format_limit(seconds)}"


@dataclass(frozen=True)
class RequeueParams(Params):
    """``reset_errors``: start the error count again from 0; ``spread_s``: make the jobs
    due evenly over this many seconds from now (None or 0: all at once); ``waves``: requeue
    in canary waves (the cumulative shares, :mod:`skconsole.core.waves`), the next wave
    only while at least ``gate`` of the last one's finished jobs succeeded (None: the
    default gate, 95%)."""

    reset_errors: bool = False
    spread_s: float | None = None
    waves: tuple[float, ...] | None = None
    gate: float | None = None

    def __post_init__(self) -> None:
        if self.spread_s is not None:
            check_seconds(self.spread_s, option="--spread", maximum=MAX_SPREAD_S)
        if self.waves is not None:
            # read back from an audit row's details as a list
            object.__setattr__(self, "waves", check_waves(tuple(self.waves)))
            if self.spread:
                raise ConfigError(
                    "--spread and --waves do not go together: each wave is requeued at once"
                )
        if self.gate is not None:
            if self.waves is None:
                raise ConfigError("--gate goes with --waves (the share each wave must pass)")
            check_gate(self.gate)

    @property
    def gate_value(self) -> float:
        """The gate each wave must pass (the default when none was given)."""
        return DEFAULT_GATE if self.gate is None else self.gate

    @property
    def spread(self) -> float:
        """Seconds the jobs are spread over (0: all due at once)."""
        return float(self.spread_s or 0.0)

    def sql(self) -> dict[str, object]:
        return {"reset_errors": self.reset_errors, "spread_s": self.spread}

    def details(self) -> JsonObject:
        # "spread_s" and "waves" only when asked: a plain requeue's audit row stays as it was
        spread: JsonObject = {"spread_s": self.spread} if self.spread else {}
        waves: JsonObject = (
            {"waves": list(self.waves), "gate": self.gate_value} if self.waves is not None else {}
        )
        return {"reset_errors": self.reset_errors, **spread, **waves}

    def phrase(self) -> str:
        """ ", error counts kept, due over the next 10m", ", error counts kept, in waves
        1%,10%,50%,100% gated at 95%"."""
        attempts = "error counts reset to 0" if self.reset_errors else "error counts kept"
        spread = f", {spread_text(self.spread)}" if self.spread else ""
        waves = f", {waves_text(self.waves, self.gate_value)}" if self.waves is not None else ""
        return f", {attempts}{spread}{waves}"


def _plan(conn: Conn, ids: Sequence[UUID], params: RequeueParams) -> Plan:
    """The jobs in the order they are made due (priority, then posting), the instant the
    spread starts, and what becomes of their attempts."""
    rows = fetch(conn, "ops_requeue_plan", _PlanRow, {"ids": list(ids)})
    found = {r.task_id for r in rows}
    ordered = (*(r.task_id for r in rows), *(i for i in ids if i not in found))
    attempts = Attempts.of([(r.error_count, r.max_attempts) for r in rows])
    start = rows[0].now if rows and params.spread else None
    return Plan(ordered, {"spread_from": start}, {"attempts": attempts.as_json()})


@dataclass(frozen=True)
class _PlanRow:
    task_id: UUID
    error_count: int
    max_attempts: int | None
    now: datetime


def _summary(details: Mapping[str, object]) -> str:
    """ "; error counts kept: each job has 1 try left; due over the next 10m"."""
    parts = []
    attempts = Attempts.from_json(details.get("attempts"))
    reset = details.get("reset_errors") is True
    if attempts is not None:
        parts.append(attempts.outcome(reset))
    elif reset:
        parts.append("error counts reset to 0")
    spread = details.get("spread_s")
    if isinstance(spread, int | float) and not isinstance(spread, bool) and spread > 0:
        parts.append(spread_text(float(spread)))
    plan, wave, of = details.get("plan"), details.get("wave"), details.get("of")
    if isinstance(plan, int) and isinstance(wave, int) and isinstance(of, int):
        parts.append(wave_of(plan, wave, of))
    return "".join(f"; {p}" for p in parts)


def wave_of(plan: int, wave: int, of: int) -> str:
    """ "wave 1 of 4 of waves requeue #3"."""
    return f"wave {wave} of {of} of waves requeue #{plan}"


@dataclass(frozen=True)
class RequeueAction(JobAction[RequeueParams]):
    """Requeue: a job action; in waves, its execution stores the plan and requeues the
    first wave (:func:`skconsole.ops.waves.start_waves`), the workers the next ones."""

    def _execute(
        self, conn: Conn, selection: Selection, params: RequeueParams, steps: Steps
    ) -> ActionResult:
        if params.waves is None:
            return super()._execute(conn, selection, params, steps)
        asked = WavesAsked(params.waves, params.gate_value, params.reset_errors)
        return start_waves(self, conn, selection, params, steps, asked)


REQUEUE = RequeueAction(
    Wording("requeue", "requeued"),
    RequeueParams,
    StatusRule(allowed=(*FAILED, JobStatus.CANCELLED), default=FAILED),
    Queries(select="ops_select_results", write="ops_requeue"),
    Needs(update=(RESULTS, QUEUE), insert=(QUEUE,)),
    plan=_plan,
    summary=_summary,
)
