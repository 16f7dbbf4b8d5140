"""When a depth count samples the queue rather than counting it: one rule for the depth
read model (:mod:`skconsole.read.depth`) and the worker's per-minute gauges
(:mod:`skconsole.worker.gauges`), which read the same SQL (depth.sql, depth_estimated.sql).
"""

from __future__ import annotations

#: Beyond this many waiting jobs (planner estimate), depth samples the queue.
DEPTH_EXACT_LIMIT = 200_000
#: Share of the queue's pages read when depth samples, aimed at ~30,000 rows.
DEPTH_SAMPLE_ROWS = 30_000


def sample_pct(queued: int, exact_limit: int = DEPTH_EXACT_LIMIT) -> float | None:
    """The share (percent) of the queue's pages to sample for ``queued`` waiting jobs (the
    planner's estimate); None: count them exactly."""
    if queued <= exact_limit:
        return None
    return max(0.1, min(100.0, 100.0 * DEPTH_SAMPLE_ROWS / max(queued, 1)))
