"""Queue depth per task type: ready, scheduled, in flight, and the oldest wait.

Every known type has a row, nothing waiting or not (:func:`known_types`): a type
whose jobs all failed, or one a worker runs but that has no job now, must still
be on screen, so it can be selected, paused, limited or requeued.

Stays fast on a big queue: beyond :data:`DEPTH_EXACT_LIMIT` waiting jobs (the
planner's estimate, no scan) ready and scheduled are scaled up from a sample
of the queue's pages, and the result says so (``estimated``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from skconsole.core.depth_sampling import DEPTH_EXACT_LIMIT as DEPTH_EXACT_LIMIT
from skconsole.core.depth_sampling import DEPTH_SAMPLE_ROWS as DEPTH_SAMPLE_ROWS
from skconsole.core.depth_sampling import sample_pct
from skconsole.core.json_types import JsonObject
from skconsole.db.context import mapping_of
from skconsole.db.layout import has_skconsole_objects
from skconsole.read.query import Conn, fetch


@dataclass
class TypeDepth:
    task_type: str
    ready: int
    scheduled: int
    in_flight: int
    oldest_ready_s: float | None
    paused: bool

    @property
    def idle(self) -> bool:
        """Nothing ready, scheduled or in flight: a known type with nothing to do now."""
        return self.ready == 0 and self.scheduled == 0 and self.in_flight == 0


@dataclass
class Depth:
    types: list[TypeDepth]
    #: ready and scheduled are scaled up from a sample of the queue's pages
    estimated: bool = False

    @property
    def ready(self) -> int:
        return sum(t.ready for t in self.types)

    @property
    def scheduled(self) -> int:
        return sum(t.scheduled for t in self.types)

    @property
    def in_flight(self) -> int:
        return sum(t.in_flight for t in self.types)

    @property
    def oldest_ready_s(self) -> float | None:
        ages = [t.oldest_ready_s for t in self.types if t.oldest_ready_s is not None]
        return max(ages) if ages else None

    def as_dict(self) -> JsonObject:
        return {
            "types": [asdict(t) for t in self.types],
            "totals": {
                "ready": self.ready,
                "scheduled": self.scheduled,
                "in_flight": self.in_flight,
                "oldest_ready_s": self.oldest_ready_s,
            },
            "estimated": self.estimated,
        }


@dataclass(frozen=True)
class TableEstimate:
    table_name: str
    estimate: int


def table_estimates(conn: Conn) -> dict[str, int]:
    """Planner row estimates of the queue and results tables (no scan), by table name."""
    return {r.table_name: r.estimate for r in fetch(conn, "table_estimates", TableEstimate)}


def _paused_types(conn: Conn) -> set[str]:
    return {str(r) for r in fetch(conn, "paused_types", lambda task_type: task_type)}


def known_types(conn: Conn) -> set[str]:
    """Every task type with a result row (any status), stored settings, a schedule or a
    retention policy of its own (the results' types alone on Stakhanovise.NET's tables:
    an idle type, or one whose jobs all failed, can still be selected and acted on)."""
    rows = fetch(conn, "result_types", lambda task_type: task_type)
    if has_skconsole_objects(conn):
        rows += fetch(conn, "setting_types", lambda task_type: task_type)
    return {str(r) for r in rows}


def depth(conn: Conn, *, exact_limit: int = DEPTH_EXACT_LIMIT) -> Depth:
    """Queue depth of every known task type, by name (one with nothing waiting has a row
    of zeros); ready/scheduled are estimated beyond ``exact_limit`` jobs."""
    queued = table_estimates(conn).get(mapping_of(conn).table("sk_tasks_queue_t"), 0)
    paused = _paused_types(conn)

    def row(*, task_type: str, **counts: Any) -> TypeDepth:
        return TypeDepth(task_type=task_type, paused=task_type in paused, **counts)

    pct = sample_pct(queued, exact_limit)
    if pct is None:
        rows, estimated = fetch(conn, "depth", row), False
    else:
        rows, estimated = fetch(conn, "depth_estimated", row, {"sample_pct": pct}), True
    seen = {r.task_type for r in rows}
    rows += [
        row(task_type=name, ready=0, scheduled=0, in_flight=0, oldest_ready_s=None)
        for name in known_types(conn) - seen
    ]
    return Depth(sorted(rows, key=lambda r: r.task_type), estimated=estimated)
