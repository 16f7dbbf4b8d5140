"""Requeue: failed or cancelled jobs back to the queue, ready now, status 1.

4 Error jobs (still queued, backing off) are made ready at once; 5 Faulted,
6 Fatal and 7 Cancelled ones are posted again from their result rows. The
state is re-checked in the statement itself: a job that a worker finished or
claimed meanwhile is left alone, never resurrected or posted twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from skconsole.core.json_types import JsonObject
from skconsole.core.status import FAILED, JobStatus
from skconsole.ops.guard import QUEUE, RESULTS
from skconsole.ops.spec import JobAction, Needs, Params, Queries, StatusRule, Wording


@dataclass(frozen=True)
class RequeueParams(Params):
    reset_errors: bool = False  # start the error count again from 0

    def sql(self) -> dict[str, object]:
        return {"reset_errors": self.reset_errors}

    def details(self) -> JsonObject:
        return {"reset_errors": self.reset_errors}


REQUEUE = JobAction(
    Wording("requeue", "requeued"),
    RequeueParams,
    StatusRule(allowed=(*FAILED, JobStatus.CANCELLED), default=FAILED),
    Queries(select="ops_select_results", write="ops_requeue"),
    Needs(update=(RESULTS, QUEUE), insert=(QUEUE,)),
)
