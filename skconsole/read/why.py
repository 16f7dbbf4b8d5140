"""Why a job waits: the causes that hold it back, most likely first, each with its evidence
and what fixes it.

A waiting job is held back by things that each have one place in the database: its
queue row's ``task_locked_until_ts`` (a delay, a retry's back-off, a snooze), its type's
stored settings (paused, a concurrency limit whose slots are taken, a rate window used
up; the same per key of a per-key limit), the workers registered for its type (``worker_task_types``), the due jobs ahead of
it in the claim's order (``claim.sql``), a transaction holding the xmin horizon (claims
slow down on dead rows: :mod:`skconsole.read.health`'s model and advice) and a row lock
on its queue or result row. :func:`why` reads each (``sql/queries/why_*.sql``) and says
which apply, in the order of :data:`RANK`: a job posted after= others that have not
all succeeded yet first (it has no queue row to claim), then what stops a claim outright, what only
slows it last. A running job gets its worker's state and its run time against its
type's p95; a finished one says so. Every cause names what fixes it as operator
actions (:class:`Fix`: an ``ops.ACTIONS`` name and its command line's arguments), which
each face offers its own way (the CLI as a command, the console with its key too). Evidence is made safe for a terminal here (:func:`printable`), and kept
structured in ``facts``.
"""

from __future__ import annotations

import enum
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from skconsole.core.durations import format_age
from skconsole.core.errors import ConfigError
from skconsole.core.figures import LATEST_TIME
from skconsole.core.json_types import JsonObject
from skconsole.core.payload_terms import PayloadTerm
from skconsole.core.states import BreakerState, WorkerState
from skconsole.core.status import FAILED, JobStatus
from skconsole.core.text import printable
from skconsole.db.layout import has_skconsole_objects
from skconsole.read.after import AfterJob, after_jobs, pending
from skconsole.read.exec_times import execution_stats
from skconsole.read.health import HORIZON_WARN_S, Thresholds, health
from skconsole.read.query import Conn, fetch, iso

#: The jobs named as holding a type's concurrency slots.
HOLDERS_SHOWN = 5
#: Jobs ahead of one are counted up to this many ("at least").
AHEAD_CAP = 100_000
#: Statement text of a lock holder is cut to this many characters.
QUERY_CAP = 200
#: Worker states that still claim: a worker in these may take the job.
CLAIMING = frozenset({WorkerState.ALIVE, WorkerState.LEASE_EXPIRING, WorkerState.CONNECTION_LOST})


class CauseCode(enum.Enum):
    """What holds a job back (the ``code`` of the JSON)."""

    #: posted after= other jobs, some not yet succeeded: it has no queue row until then
    AFTER = "after"
    PAUSED = "paused"
    #: a circuit breaker open on its type holds it back (150_skconsole_breakers.sql)
    BREAKER = "breaker"
    NO_WORKER = "no_worker"
    NOT_DUE = "not_due"
    LOCK_WAIT = "lock_wait"
    LIMIT_FULL = "limit_full"
    RATE_LIMITED = "rate_limited"
    KEY_LIMIT_FULL = "key_limit_full"
    KEY_RATE_LIMITED = "key_rate_limited"
    BEHIND = "behind"
    HORIZON = "horizon"
    #: nothing holds it: the next claim takes it
    READY = "ready"
    #: not waiting: it runs now
    RUNNING = "running"
    #: not waiting and not queued: failed and parked (5 Faulted), or over
    NOT_QUEUED = "not_queued"
    FINISHED = "finished"


#: Most likely first: what stops every claim of it outright, then what delays it, then
#: what only slows claims down.
RANK: tuple[CauseCode, ...] = tuple(CauseCode)


@dataclass(frozen=True)
class Fix:
    """An operator action that fixes a cause: its name in ``ops.ACTIONS``, its command
    line's arguments, and the words before and after it ("to run it again:", "to stop it")."""

    action: str
    args: tuple[str, ...] = ()
    lead: str = ""
    tail: str = ""

    def command(self) -> str:
        """The command line an operator can paste, its words quoted for a shell, made safe."""
        return _cmd("skconsole", self.action, *self.args)

    def as_dict(self) -> JsonObject:
        return {"action": self.action, "args": list(self.args)}


def _offer_command(fix: Fix) -> str:
    return fix.command()


@dataclass(frozen=True)
class Cause:
    """One cause: its code, the evidence in words (safe for a terminal), the actions that
    fix it (and words beside them: ``note``), and the evidence as data."""

    code: CauseCode
    evidence: str
    fixes: tuple[Fix, ...] = ()
    note: str = ""
    facts: JsonObject = field(default_factory=dict)

    def fix_text(self, offer: Callable[[Fix], str] = _offer_command) -> str:
        """What fixes it in words, each action as ``offer`` says it (a command, by default)."""
        actions = " or ".join(
            " ".join(w for w in (f.lead, offer(f), f.tail) if w).replace(" ,", ",")
            for f in self.fixes
        )
        return "; ".join(t for t in (actions, self.note) if t)

    @property
    def fix(self) -> str:
        return self.fix_text()

    def as_dict(self) -> JsonObject:
        return {
            "code": self.code.value,
            "evidence": self.evidence,
            "fix": self.fix,
            "fixes": [f.as_dict() for f in self.fixes],
        }


@dataclass(frozen=True)
class WhyJob:
    """The job a :class:`Why` is about, as ``why_job.sql`` reads it."""

    task_id: UUID
    task_type: str
    status: int
    error_count: int
    snooze_count: int
    last_attempt_at: datetime | None
    owner_worker_id: UUID | None
    queued: bool
    priority: int | None
    run_at: datetime | None
    lock_handle_id: int | None
    due_in_s: float | None
    now: datetime
    paused: bool
    paused_at: datetime | None
    concurrency: int | None
    rate_count: int | None
    rate_seconds: float | None
    window_claims: int | None
    window_ends_at: datetime | None
    running: int | None
    key_path: list[str] | None = None
    key: str | None = None
    key_concurrency: int | None = None
    key_running: int | None = None
    key_rate_count: int | None = None
    key_rate_seconds: float | None = None
    key_window_claims: int | None = None
    key_window_ends_at: datetime | None = None

    @property
    def due(self) -> bool:
        """Queued and due now (an infinite due time, ``due_in_s`` None, never is)."""
        return self.queued and self.due_in_s is not None and self.due_in_s < 0


@dataclass(frozen=True)
class Why:
    """Why one job waits: its causes, most likely first (never empty)."""

    task_id: UUID
    task_type: str
    status: int
    causes: tuple[Cause, ...]

    @property
    def codes(self) -> list[str]:
        return [c.code.value for c in self.causes]

    def as_dict(self) -> JsonObject:
        return {
            "job": {
                "id": str(self.task_id),
                "type": self.task_type,
                "status": self.status,
                "status_name": JobStatus.label_of(self.status),
            },
            "causes": [c.as_dict() for c in self.causes],
            "facts": {c.code.value: c.facts for c in self.causes},
        }


# -- the rows of the other statements ------------------------------------------------------
@dataclass(frozen=True)
class _Holder:
    task_id: UUID
    started_at: datetime | None
    running_s: float | None
    host: str | None
    pid: int | None


@dataclass(frozen=True)
class _Worker:
    worker_id: UUID
    host: str
    pid: int
    state: WorkerState
    runs_type: bool
    types: list[str]


def _worker(*, state: str, **cols: Any) -> _Worker:
    return _Worker(state=WorkerState(state), **cols)


@dataclass(frozen=True)
class _Ahead:
    ahead: int


@dataclass(frozen=True)
class _RowLock:
    row_of: str
    pid: int
    application: str | None
    state: str | None
    xact_age_s: float | None
    query: str | None
    waiting: list[int]


@dataclass(frozen=True)
class _Running:
    running_s: float | None
    worker_id: UUID | None
    host: str | None
    pid: int | None
    state: str | None
    note: str | None


# -- the causes ----------------------------------------------------------------------------
#: what a session holding things up needs besides being cancelled
IDLE_NOTE = "an idle transaction must be ended by its application"


def _cmd(*words: str) -> str:
    """A command line an operator can paste, its words quoted for a shell, made safe."""
    return printable(" ".join(shlex.quote(w) for w in words))


def _not_due(j: WhyJob) -> Cause:
    assert j.run_at is not None
    if j.due_in_s is None:  # an infinite due time, not a breaker's (said by _breakers)
        return Cause(
            CauseCode.NOT_DUE,
            "not due ever: its queue row's due time is infinity (written by another application?)",
            (Fix("bump", ("--now", "--id", str(j.task_id))),),
            facts={"kind": "never", "run_at": None, "due_in_s": None},
        )
    if j.status == JobStatus.ERROR:
        why = f"a retry waiting out its back-off after {j.error_count} failed attempt(s)"
        kind = "backoff"
    elif j.snooze_count and j.last_attempt_at is not None:
        why = f"snoozed by its handler ({j.snooze_count} time(s))"
        kind = "snooze"
    else:
        why = "posted with a delay (run_at)"
        kind = "delay"
    return Cause(
        CauseCode.NOT_DUE,
        f"not due for {format_age(j.due_in_s)}: {why}; due at {j.run_at.isoformat()}",
        (Fix("bump", ("--now", "--id", str(j.task_id))),),
        facts={"kind": kind, "run_at": iso(j.run_at), "due_in_s": j.due_in_s},
    )


def _paused(j: WhyJob) -> Cause:
    since = f" since {j.paused_at.isoformat()}" if j.paused_at is not None else ""
    return Cause(
        CauseCode.PAUSED,
        printable(f"its type {j.task_type} is paused{since}: no worker claims it"),
        (Fix("resume", (j.task_type,)),),
        facts={"paused_at": iso(j.paused_at)},
    )


@dataclass(frozen=True)
class _Holding:
    """A breaker holding the job back (why_breakers.sql)."""

    breaker_id: int
    signature: str
    term_path: list[str] | None
    term_value: str | None
    state: int
    state_at: datetime
    reason: str | None
    half_open_at: datetime | None
    parked_due_at: datetime | None
    canary: bool


def _breakers(conn: Conn, j: WhyJob) -> list[Cause]:
    """The breakers holding it back; none when it is a canary released and not yet run."""
    holding = fetch(conn, "why_breakers", _Holding, {"task_id": j.task_id})
    if any(h.canary for h in holding):
        return []
    causes = []
    for h in holding:
        shared = (
            f" its payload has {PayloadTerm(tuple(h.term_path), h.term_value)} or"
            if h.term_path is not None and h.term_value is not None
            else ""
        )
        state = BreakerState(h.state)
        when = (
            f"; half-open at {h.half_open_at.isoformat()}, when a few held jobs run as canaries"
            if h.half_open_at is not None
            else "; half-open: its canaries are running"
        )
        causes.append(
            Cause(
                CauseCode.BREAKER,
                printable(
                    f"breaker #{h.breaker_id} is {state.word} since {h.state_at.isoformat()}"
                    f" ({h.reason or 'opened'}): it holds back {j.task_type} jobs that"
                    f" would fail with {h.signature!r} (because{shared} its last failure"
                    f" was that){when}"
                ),
                (Fix("breaker", ("close", str(h.breaker_id))),),
                facts={
                    "breaker_id": h.breaker_id,
                    "state": state.word,
                    "signature": h.signature,
                    "half_open_at": iso(h.half_open_at),
                    "due_at_after": iso(h.parked_due_at),
                },
            )
        )
    return causes


def _limit_full(conn: Conn, j: WhyJob) -> Cause:
    holders = fetch(
        conn,
        "why_holders",
        _Holder,
        {"task_type": j.task_type, "key_path": None, "key": None, "limit": HOLDERS_SHOWN},
    )
    named = ", ".join(
        f"{h.task_id}"
        + (f" on {h.host} pid {h.pid}" if h.host is not None else "")
        + (f" for {format_age(h.running_s)}" if h.running_s is not None else "")
        for h in holders
    )
    running = j.running or 0
    more = f" (and {running - len(holders)} more)" if running > len(holders) else ""
    return Cause(
        CauseCode.LIMIT_FULL,
        printable(
            f"its type's concurrency limit is full: {j.running} running of {j.concurrency};"
            f" holding the slots: {named}{more}"
        ),
        (Fix("limit", (j.task_type, "--concurrency", "N")),),
        facts={
            "running": j.running,
            "concurrency": j.concurrency,
            "holders": [str(h.task_id) for h in holders],
        },
    )


def _rate_limited(j: WhyJob) -> Cause:
    assert j.window_ends_at is not None
    next_in = (j.window_ends_at - j.now).total_seconds()
    return Cause(
        CauseCode.RATE_LIMITED,
        f"its type's rate window is used up: {j.window_claims} of {j.rate_count} claims per"
        f" {j.rate_seconds:g} s; the next claim may come in {format_age(next_in)}"
        f" (at {j.window_ends_at.isoformat()})",
        (Fix("limit", (j.task_type, "--rate", "N/s")),),
        facts={"window_claims": j.window_claims, "next_claim_at": iso(j.window_ends_at)},
    )


def _key_words(j: WhyJob) -> tuple[str, str]:
    """The job's key as evidence names it ("key payload.customer = 'acme'", or the shared
    key of payloads without the path) and the path as the CLI takes it."""
    path = "payload." + ".".join(j.key_path or [])
    if j.key is None:
        return f"key {path} (none: its payload lacks the path)", path
    return f"key {path} = {j.key!r}", path


def _key_limit_full(conn: Conn, j: WhyJob) -> Cause:
    key, path = _key_words(j)
    holders = fetch(
        conn,
        "why_holders",
        _Holder,
        {"task_type": j.task_type, "key_path": j.key_path, "key": j.key, "limit": HOLDERS_SHOWN},
    )
    named = ", ".join(
        f"job {h.task_id}" + (f" on {h.host} pid {h.pid}" if h.host is not None else "")
        for h in holders
    )
    running = j.key_running or 0
    more = f" (and {running - len(holders)} more)" if running > len(holders) else ""
    return Cause(
        CauseCode.KEY_LIMIT_FULL,
        printable(f"{key} has {running} of {j.key_concurrency} running: {named}{more}"),
        (
            Fix("limit", (j.task_type, "--concurrency", "N", "--per", path), tail="(raise it)"),
            Fix("limit", (j.task_type, "--clear", "--per", path)),
        ),
        facts={
            "key": j.key,
            "per": path,
            "running": running,
            "concurrency_per_key": j.key_concurrency,
            "holders": [str(h.task_id) for h in holders],
        },
    )


def _key_rate_limited(j: WhyJob) -> Cause:
    assert j.key_window_ends_at is not None and j.key_rate_seconds is not None
    key, path = _key_words(j)
    next_in = (j.key_window_ends_at - j.now).total_seconds()
    return Cause(
        CauseCode.KEY_RATE_LIMITED,
        printable(
            f"{key} used up its rate window: {j.key_window_claims} of {j.key_rate_count} claims"
            f" per {j.key_rate_seconds:g} s; its next claim may come in {format_age(next_in)}"
        ),
        (
            Fix("limit", (j.task_type, "--rate", "N/s", "--per", path), tail="(raise it)"),
            Fix("limit", (j.task_type, "--clear", "--per", path)),
        ),
        facts={
            "key": j.key,
            "per": path,
            "window_claims": j.key_window_claims,
            "next_claim_at": iso(j.key_window_ends_at),
        },
    )


def _no_worker(j: WhyJob, workers: list[_Worker]) -> Cause:
    live = [w for w in workers if w.state in CLAIMING]
    others = f"; {len(live)} live worker(s) run other types" if live else "; no live worker at all"
    return Cause(
        CauseCode.NO_WORKER,
        printable(f"no live worker registered for its type {j.task_type}{others}"),
        note=printable(
            f"start a worker whose registry has {j.task_type}:"
            " skconsole worker --tasks MODULE (a Stakhanovise.NET consumer does not register)"
        ),
        facts={"live_workers": len(live)},
    )


def _claimed_with(j: WhyJob, workers: list[_Worker]) -> list[str]:
    """The types claimed in one order with the job's: its own, and every other type a live
    worker that runs it also runs."""
    types = {j.task_type}
    for w in workers:
        if w.runs_type and w.state in CLAIMING:
            types.update(w.types)
    return sorted(types)


def _behind(conn: Conn, j: WhyJob, types: list[str]) -> Cause | None:
    """The due jobs a claim takes before this one; for a job not due yet, those it would
    be behind once due now (where ``bump --now`` puts it): a cause that remains after
    the first is fixed."""
    params = {
        "task_type": j.task_type,
        "types": types,
        "priority": j.priority,
        "run_at": j.run_at if j.due else j.now,
        "lock_handle_id": j.lock_handle_id,
        "cap": AHEAD_CAP,
        "key_path": j.key_path,
        "key": j.key,
    }
    (row,) = fetch(conn, "why_ahead", _Ahead, params)
    if row.ahead == 0:
        return None
    count = f"at least {row.ahead:,}" if row.ahead >= AHEAD_CAP else f"{row.ahead:,}"
    of = "its type" if j.key_path is None else printable(_key_words(j)[0])
    others = [t for t in types if t != j.task_type]
    if others:
        shown = ", ".join(others[:HOLDERS_SHOWN])
        more = f" and {len(others) - HOLDERS_SHOWN} more" if len(others) > HOLDERS_SHOWN else ""
        of += printable(f" and of {shown}{more} (its workers claim those too)")
    when = "" if j.due else "once due: "
    return Cause(
        CauseCode.BEHIND,
        f"{when}{count} due job(s) of {of} are ahead of it in claim order"
        f" (priority, run_at, then posting order; its priority is {j.priority})",
        (Fix("bump", ("--to", "0", "--id", str(j.task_id))),),
        facts={
            "ahead": row.ahead,
            "capped": row.ahead >= AHEAD_CAP,
            "priority": j.priority,
            "types": types,
            "once_due": not j.due,
        },
    )


def _horizon(conn: Conn, horizon_s: float) -> Cause | None:
    h = health(conn, limits=Thresholds(horizon_s=horizon_s))
    held = [a for a in h.advice if a.rule.startswith("horizon_")]
    if not held:
        return None
    holder = h.horizon.holder or "?"
    pids = [
        s.pid for s in h.horizon.sessions if s.xact_age_s is not None and s.xact_age_s >= horizon_s
    ]
    return Cause(
        CauseCode.HORIZON,
        printable("; ".join(a.text for a in held)),
        (Fix("cancel-session", (str(pids[0]),)),) if pids else (),
        IDLE_NOTE
        if pids
        else "end it (COMMIT/ROLLBACK PREPARED, or drop the slot); see skconsole status health",
        {"holder": holder, "age": h.horizon.age, "age_s": h.horizon.age_s, "pids": pids},
    )


def _lock_wait(conn: Conn, j: WhyJob) -> Cause | None:
    locks = fetch(conn, "why_row_locks", _RowLock, {"task_id": j.task_id, "query_cap": QUERY_CAP})
    if not locks:
        return None
    parts = []
    for lk in locks:
        who = f"pid {lk.pid}" + (f" ({lk.application})" if lk.application else "")
        state = f", {lk.state}" if lk.state else ""
        age = f", transaction open {format_age(lk.xact_age_s)}" if lk.xact_age_s is not None else ""
        query = f": {lk.query}" if lk.query else ""
        waiting = f"; waiting behind it: {', '.join(map(str, lk.waiting))}" if lk.waiting else ""
        parts.append(f"its {lk.row_of} row is locked by {who}{state}{age}{query}{waiting}")
    first = locks[0].pid
    return Cause(
        CauseCode.LOCK_WAIT,
        printable("; ".join(parts)) + " (claims skip a locked row)",
        (Fix("cancel-session", (str(first),)),),
        IDLE_NOTE,
        {"pids": [lk.pid for lk in locks], "rows": [lk.row_of for lk in locks]},
    )


def _running(conn: Conn, j: WhyJob) -> Cause:
    (r,) = fetch(conn, "why_running", _Running, {"task_id": j.task_id})
    p95 = next((t.p95_ms for t in execution_stats(conn) if t.task_type == j.task_type), None)
    state = WorkerState(r.state) if r.state is not None else None
    worker = (
        f"its worker {r.host} pid {r.pid} is {state.value} ({r.note})"
        if state is not None
        else "no registered worker owns it (a Stakhanovise.NET consumer, or a purged worker)"
    )
    ran = f"running for {format_age(r.running_s)}"
    if p95 is not None:
        ran += f" against its type's p95 of {format_age(p95 / 1000)}"
        if r.running_s is not None and r.running_s * 1000 > p95:
            ran += " (slower than 95% of recent runs)"
    if state is not None and state.lease_lapsed:
        fix = Fix("reap", tail="(its worker's lease has lapsed)")
    else:
        fix = Fix("cancel", ("--id", str(j.task_id)), tail=", to stop it")
    return Cause(
        CauseCode.RUNNING,
        printable(f"not waiting: it runs now; {ran}; {worker}"),
        (fix,),
        facts={
            "running_s": r.running_s,
            "p95_ms": p95,
            "worker_state": state.value if state is not None else None,
            "worker_id": str(r.worker_id) if r.worker_id is not None else None,
        },
    )


def _after(j: WhyJob, waits_for: list[AfterJob], of: int) -> Cause:
    named = ", ".join(
        f"{a.task_id} ({a.task_type or '?'}) {a.state}" for a in waits_for[:HOLDERS_SHOWN]
    )
    more = f" (and {len(waits_for) - HOLDERS_SHOWN} more)" if len(waits_for) > HOLDERS_SHOWN else ""
    return Cause(
        CauseCode.AFTER,
        printable(
            f"waits for {len(waits_for)} job(s) (posted after= {of}): it is queued only once"
            f" every one has succeeded; still waiting for: {named}{more}"
        ),
        (Fix("cancel", ("--id", str(j.task_id)), lead="cancel it:"),),
        "or post it without after",
        {
            "waits_for": [str(a.task_id) for a in waits_for],
            "states": [a.state for a in waits_for],
            "after_count": of,
        },
    )


def _not_waiting(j: WhyJob) -> Cause:
    label = JobStatus.label_of(j.status)
    if j.status == JobStatus.FAULTED:
        return Cause(
            CauseCode.NOT_QUEUED,
            f"not waiting: {j.status} {label}, parked for an operator after its last attempt failed",
            (Fix("requeue", ("--id", str(j.task_id))),),
            facts={"status": j.status},
        )
    again = Fix("requeue", ("--id", str(j.task_id)), lead="nothing to fix; to run it again:")
    return Cause(
        CauseCode.FINISHED,
        f"not waiting: it is over ({j.status} {label})",
        (again,) if j.status in FAILED else (),
        "" if j.status in FAILED else "nothing to fix",
        {"status": j.status},
    )


def _full(limit: int | None, running: int | None) -> bool:
    """A concurrency limit (the type's, or its key's) is reached."""
    return limit is not None and (running or 0) >= limit


def _window_spent(
    limit: int | None, claims: int | None, ends_at: datetime | None, now: datetime
) -> bool:
    """A rate limit's current window (the type's, or its key's) has no claim left."""
    return limit is not None and ends_at is not None and ends_at > now and (claims or 0) >= limit


def _waiting_causes(conn: Conn, j: WhyJob, horizon_s: float) -> list[Cause]:
    causes: list[Cause] = []
    if j.paused:
        causes.append(_paused(j))
    held = _breakers(conn, j)
    causes += held
    workers = fetch(conn, "why_workers", _worker, {"task_type": j.task_type})
    if not any(w.runs_type and w.state in CLAIMING for w in workers):
        causes.append(_no_worker(j, workers))
    # a parked job's due time is "never" until its breaker closes: said by the breaker
    if not j.due and not (held and j.run_at == LATEST_TIME):
        causes.append(_not_due(j))
    lock = _lock_wait(conn, j)
    if lock is not None:
        causes.append(lock)
    if _full(j.concurrency, j.running):
        causes.append(_limit_full(conn, j))
    if _window_spent(j.rate_count, j.window_claims, j.window_ends_at, j.now):
        causes.append(_rate_limited(j))
    if _full(j.key_concurrency, j.key_running):
        causes.append(_key_limit_full(conn, j))
    if _window_spent(j.key_rate_count, j.key_window_claims, j.key_window_ends_at, j.now):
        causes.append(_key_rate_limited(j))
    behind = _behind(conn, j, _claimed_with(j, workers))
    if behind is not None:
        causes.append(behind)
    horizon = _horizon(conn, horizon_s)
    if horizon is not None:
        causes.append(horizon)
    if not causes:
        causes.append(
            Cause(
                CauseCode.READY,
                printable(f"nothing holds it: it is due and first in claim order ({j.task_type})"),
                note="nothing to fix: the next claim of a worker that runs its type takes it",
            )
        )
    return causes


def why(conn: Conn, task_id: UUID, *, horizon_s: float = HORIZON_WARN_S) -> Why | None:
    """Why the job ``task_id`` waits (None: no such job). ``horizon_s``: how long a
    transaction must have held the xmin horizon to count (the health advice's threshold)."""
    if not has_skconsole_objects(conn):
        raise ConfigError("why needs skconsole's objects (skconsole setup)")
    rows = fetch(conn, "why_job", WhyJob, {"task_id": task_id})
    if not rows:
        return None
    j = rows[0]
    after = after_jobs(conn, j.task_id) if j.status == JobStatus.UNPROCESSED else []
    waits_for = pending(after)
    if not j.queued and waits_for:
        causes = [_after(j, waits_for, len(after))]
        lock = _lock_wait(conn, j)
        if lock is not None:
            causes.append(lock)
    elif j.queued:
        causes = _waiting_causes(conn, j, horizon_s)
    elif j.status == JobStatus.PROCESSING:
        causes = [_running(conn, j)]
        lock = _lock_wait(conn, j)
        if lock is not None:
            causes.append(lock)
    else:
        causes = [_not_waiting(j)]
    causes.sort(key=lambda c: RANK.index(c.code))
    return Why(j.task_id, j.task_type, j.status, tuple(causes))
