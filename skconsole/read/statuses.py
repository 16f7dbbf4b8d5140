"""Jobs per status: exact where counting is cheap, the planner's estimate where not.

A status with more than :data:`STATUS_EXACT_LIMIT` rows (planner estimate) is
estimated from the column statistics, and the result names it; the small
statuses (the ones an operator acts on) are always counted from their indexes.
"""

from __future__ import annotations

from dataclasses import dataclass

from skconsole.core.json_types import JsonObject
from skconsole.core.status import JobStatus
from skconsole.db.context import mapping_of
from skconsole.read.depth import table_estimates
from skconsole.read.query import Conn, fetch

#: A status with more rows than this (planner estimate) is estimated, not counted.
STATUS_EXACT_LIMIT = 200_000


@dataclass(frozen=True)
class StatusCount:
    status: int
    jobs: int


@dataclass
class StatusCounts:
    counts: dict[int, int]
    #: statuses whose count comes from the planner's statistics
    estimated: tuple[int, ...] = ()

    def as_dict(self) -> JsonObject:
        return {
            "statuses": {JobStatus.label_of(s): n for s, n in sorted(self.counts.items())},
            "estimated": [JobStatus.label_of(s) for s in self.estimated],
        }


def status_counts(conn: Conn) -> dict[int, int]:
    """Jobs per status code (see :func:`status_summary` for which are estimated)."""
    return status_summary(conn).counts


def status_summary(conn: Conn, *, exact_limit: int = STATUS_EXACT_LIMIT) -> StatusCounts:
    """Jobs per status: exact for small tables and small statuses; big ones estimated."""
    total = table_estimates(conn).get(mapping_of(conn).table("sk_task_results_t"), 0)
    if total <= exact_limit:
        return StatusCounts({c.status: c.jobs for c in fetch(conn, "status_counts", StatusCount)})
    big = {
        c.status: c.jobs
        for c in fetch(conn, "status_counts_estimated", StatusCount)
        if c.jobs > exact_limit
    }
    small = [int(s) for s in JobStatus if s not in big]
    counts = dict(big)
    for c in fetch(conn, "status_count_exact", StatusCount, {"statuses": small}):
        counts[c.status] = c.jobs
    return StatusCounts(dict(sorted(counts.items())), tuple(sorted(big)))
