"""The per-minute gauges (sql/schema/148_skconsole_record_gauges.sql): once a minute, one
worker's upkeep writes how many jobs of each type were waiting and running and how many
workers were alive, so the queue at a past minute can be rebuilt (``skconsole --at``,
incident bundles). Leaderless: whichever worker's upkeep comes first in a minute counts
(gauges_due.sql: one index probe, so the others count nothing), and its write wins
(gauges_write.sql, ON CONFLICT DO NOTHING). The counts are the depth read's own SQL
(depth.sql, or depth_estimated.sql beyond
:data:`~skconsole.core.depth_sampling.DEPTH_EXACT_LIMIT` queued jobs, the planner's
estimate): the same cost as one refresh of the console's depth panel, once a minute.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from skconsole.core.depth_sampling import sample_pct
from skconsole.db.context import mapping_of
from skconsole.db.rows import aone, arows
from skconsole.db.sqlfiles import query

#: The most gauge rows one write trims.
GAUGES_TRIM_BATCH = 50_000


@dataclass(frozen=True)
class Gauged:
    """What gauges_write.sql did: rows written (0: another worker was first) and trimmed."""

    written: int
    trimmed: int


@dataclass(frozen=True)
class _Due:
    due: bool


@dataclass(frozen=True)
class _Estimate:
    table_name: str
    estimate: int


@dataclass(frozen=True)
class _Depth:
    task_type: str
    ready: int
    scheduled: int
    in_flight: int
    oldest_ready_s: float | None


async def write_gauges(conn: psycopg.AsyncConnection[Any], *, keep_s: float) -> Gauged:
    """This minute's gauges, unless a worker wrote them already (then nothing is counted)."""
    due = await aone(conn, query("gauges_due"), _Due)
    if due is None or not due.due:
        return Gauged(0, 0)
    estimates = {
        r.table_name: r.estimate for r in await arows(conn, query("table_estimates"), _Estimate)
    }
    pct = sample_pct(estimates.get(mapping_of(conn).table("sk_tasks_queue_t"), 0))
    if pct is None:
        rows = await arows(conn, query("depth"), _Depth)
    else:
        rows = await arows(conn, query("depth_estimated"), _Depth, {"sample_pct": pct})
    params = {
        "types": [r.task_type for r in rows],
        "ready": [r.ready for r in rows],
        "scheduled": [r.scheduled for r in rows],
        "running": [r.in_flight for r in rows],
        "estimated": pct is not None,
        "keep_s": keep_s,
        "batch": GAUGES_TRIM_BATCH,
    }
    done = await aone(conn, query("gauges_write"), Gauged, params)
    assert done is not None
    return done
