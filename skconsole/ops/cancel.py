"""Cancel: waiting jobs out of the queue, their results 7 Cancelled.

Only jobs that still wait change: one a worker claims at that instant, or
has claimed since the preview, runs on and is reported as left alone.
"""

from __future__ import annotations

from skconsole.ops.guard import QUEUE, RESULTS
from skconsole.ops.spec import JobAction, Needs, NoParams, Queries, StatusRule, Wording
from skconsole.status import WAITING

CANCEL = JobAction(
    Wording("cancel", "cancelled", "waiting job(s)"),
    NoParams,
    StatusRule(allowed=WAITING),
    Queries(select="ops_select_queued", write="ops_cancel"),
    Needs(update=(QUEUE, RESULTS), insert=(RESULTS,), delete=(QUEUE,)),
    warning="They will not run.",
)
