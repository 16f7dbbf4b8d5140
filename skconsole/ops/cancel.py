"""Cancel: waiting jobs out of the queue, their results 7 Cancelled.

Only jobs that still wait change: one a worker claims at that instant, or
has claimed since the preview, runs on and is reported as left alone.
"""

from __future__ import annotations

from skconsole.ops.guard import QUEUE, RESULTS
from skconsole.ops.spec import JobAction, NoParams
from skconsole.status import WAITING

CANCEL = JobAction(
    name="cancel",
    verb="cancel",
    done="cancelled",
    noun="waiting job(s)",
    params_type=NoParams,
    allowed=WAITING,
    default=WAITING,
    select="ops_select_queued",
    write="ops_cancel",
    needs=((QUEUE, "update"), (QUEUE, "delete"), (RESULTS, "insert"), (RESULTS, "update")),
    warning="They will not run.",
)
