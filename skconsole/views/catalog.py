"""Every view ``skconsole status`` knows, in the order its help lists them.

A view has a module of its own with its columns (inflight, workers, stats,
failures, metrics, schedules, flow, history), which the CLI draws and the console's
panels draw where they show a table of it;
the others are defined here: a reader and a JSON document, which the CLI draws
its own way (several tables, notes). To add a view: its read model in
skconsole/read, a module here with its columns and its ``View``, its entry in
``VIEWS``, and its panel (one line in skconsole/tui/panels.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skconsole import read
from skconsole.core.json_types import JsonObject
from skconsole.read import health
from skconsole.read.query import Conn
from skconsole.views.exec_times import EXEC_TIMES
from skconsole.views.failures import FAILURES
from skconsole.views.flow import FLOW
from skconsole.views.history import HISTORY
from skconsole.views.inflight import INFLIGHT
from skconsole.views.metrics import METRICS
from skconsole.views.registry import View, ViewArgs
from skconsole.views.schedules import SCHEDULES
from skconsole.views.workers import WORKERS


@dataclass(frozen=True)
class DepthAndLimits:
    depth: read.Depth
    limits: list[read.TypeLimit]

    def as_dict(self) -> JsonObject:
        return {**self.depth.as_dict(), "limits": [t.as_dict() for t in self.limits]}


def _depth(conn: Conn, args: ViewArgs) -> DepthAndLimits:
    return DepthAndLimits(read.depth(conn), read.limits(conn))


OVERVIEW: View[read.Overview] = View(
    "overview", lambda conn, args: read.overview(conn), read.Overview.as_dict
)
DEPTH: View[DepthAndLimits] = View("depth", _depth, DepthAndLimits.as_dict)
HEALTH: View[health.Health] = View(
    "health", lambda conn, args: health.health(conn), health.Health.as_dict, replica_ok=False
)

#: every view of ``skconsole status VIEW``, in the order its help lists them
VIEWS: tuple[View[Any], ...] = (
    DEPTH,
    FLOW,
    INFLIGHT,
    FAILURES,
    EXEC_TIMES,
    METRICS,
    WORKERS,
    HISTORY,
    SCHEDULES,
    HEALTH,
)
BY_NAME: dict[str, View[Any]] = {v.name: v for v in VIEWS}
