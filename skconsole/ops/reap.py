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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from skconsole.core.hung import HungPolicy
from skconsole.core.status import JobStatus
from skconsole.ops.guard import QUEUE, RESULTS
from skconsole.ops.job_action import JobAction, Queries, StatusRule, Tally, any_selection
from skconsole.ops.model import count_in
from skconsole.ops.spec import Needs, Params, Row, Wording

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


def _summary(details: Mapping[str, object]) -> str:
    parked = count_in(details, "parked_faulted")
    return f" ({parked:,} past max attempts, parked as Faulted)" if parked else ""


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
    warning="Each goes back to the queue, or is parked as Faulted past its type's attempts.",
)
