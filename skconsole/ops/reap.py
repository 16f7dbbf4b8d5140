"""Reap: re-post hung jobs on demand, as the in-flight read model judges them.

Uses the engine's own reaper statement (queries/reap.sql) and so the one
definition of "hung" (sk_inflight_tasks(): the owner's lease has lapsed, so
the owner has stopped the job or is dead); an operator cannot reap a job
whose worker is still alive, since it would then run twice at once. The
reason goes into the job's error, the reap counts as a failed attempt (past
max attempts the job is parked as 5 Faulted), and the verdict, status and
fencing token are re-checked in the statement, so a job that finished
meanwhile is left alone and no job is posted twice. An empty selection
means every hung job.

The preview, the result and the audit row name the jobs' types that no live
worker runs (``no_live_worker``; :func:`skconsole.read.served_types`, the one
definition): put back, those jobs wait until a worker that runs them starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from uuid import UUID

from skconsole import read
from skconsole.core.hung import HungPolicy
from skconsole.core.status import JobStatus
from skconsole.ops.common import Conn
from skconsole.ops.guard import QUEUE, RESULTS
from skconsole.ops.job_action import JobAction, Plan, Queries, StatusRule, Tally, any_selection
from skconsole.ops.model import count_in
from skconsole.ops.spec import Needs, Params, Row, Wording
from skconsole.read.query import fetch

#: Max attempts for a type whose workers never published theirs (TaskOptions' default).
DEFAULT_MAX_ATTEMPTS = 5


@dataclass(frozen=True)
class ReapParams(Params):
    policy: HungPolicy = field(default_factory=HungPolicy)
    default_max_attempts: int = DEFAULT_MAX_ATTEMPTS

    def sql(self) -> dict[str, object]:
        return {
            **self.policy.params(),
            "default_max_attempts": self.default_max_attempts,
            "exclude_owner": None,  # an operator may reap any worker's hung jobs
        }


def _tally(rows: Sequence[Row]) -> Tally:
    return Tally(
        len(rows),
        (("parked_faulted", sum(1 for r in rows if r["task_status"] == JobStatus.FAULTED)),),
    )


def _plan(conn: Conn, ids: Sequence[UUID], params: ReapParams) -> Plan:
    """The jobs as they come, and their types that no live worker runs (none: the key is
    left out)."""
    types = fetch(conn, "ops_reap_plan", lambda task_type: task_type, {"ids": list(ids)})
    idle = sorted(set(types) - read.served_types(read.workers(conn)))
    return Plan(tuple(ids), {}, {"no_live_worker": idle} if idle else {})


def no_live_worker(details: Mapping[str, object]) -> list[str]:
    """The reaped jobs' types that no live worker ran when the reap was previewed or run."""
    idle = details.get("no_live_worker")
    return [str(t) for t in idle] if isinstance(idle, list) else []


def idle_warning(task_types: Sequence[str]) -> str:
    """ "No live worker runs reports.nightly: nothing will take those jobs until one
    starts"; "" for none."""
    if not task_types:
        return ""
    return (
        f"No live worker runs {', '.join(task_types)}: nothing will take"
        f" {'those jobs' if len(task_types) > 1 else 'its jobs'} until one starts."
    )


def _summary(details: Mapping[str, object]) -> str:
    parked = count_in(details, "parked_faulted")
    text = f" ({parked:,} past max attempts, parked as Faulted)" if parked else ""
    idle = no_live_worker(details)
    return f"{text}; {idle_warning(idle)}" if idle else text


REAP = JobAction(
    Wording("reap", "reaped", "hung job(s)"),
    ReapParams,
    StatusRule(allowed=(JobStatus.PROCESSING,)),
    Queries(select="ops_select_hung", write="reap"),
    Needs(update=(RESULTS,), insert=(QUEUE,)),
    check_selection=any_selection,
    tally=_tally,
    counted=("parked_faulted",),
    summary=_summary,
    groups=False,
    plan=_plan,
    warning="Each goes back to the queue, or is parked as Faulted past its type's attempts.",
)
