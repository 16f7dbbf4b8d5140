"""The main screen's panels, in order: the one place a panel is listed.

A panel's number is its place in :data:`PANELS` (1-based), its key is that
number, and its names live on its class (``scope``, ``title``,
``short_title``: see :class:`~skconsole.tui.widgets.panel.Panel`). The action
registry (keys 1-9 and their help), the main screen's tabs and the help
screen all derive from this tuple, so a new panel is one class and one entry
here.
"""

from __future__ import annotations

from skconsole.tui.widgets.audit_panel import AuditPanel
from skconsole.tui.widgets.depth_panel import DepthPanel
from skconsole.tui.widgets.exec_panel import ExecPanel
from skconsole.tui.widgets.failures_panel import FailuresPanel
from skconsole.tui.widgets.health_panel import HealthPanel
from skconsole.tui.widgets.inflight_panel import InflightPanel
from skconsole.tui.widgets.metrics_panel import MetricsPanel
from skconsole.tui.widgets.panel import Panel
from skconsole.tui.widgets.schedules_panel import SchedulesPanel
from skconsole.tui.widgets.workers_panel import WorkersPanel

PANELS: tuple[type[Panel], ...] = (
    DepthPanel,
    InflightPanel,
    FailuresPanel,
    ExecPanel,
    MetricsPanel,
    WorkersPanel,
    AuditPanel,
    SchedulesPanel,
    HealthPanel,
)
PANEL_IDS: tuple[str, ...] = tuple(p.scope for p in PANELS)

#: a tab's word on a narrow terminal (below 100 columns), where every tab must fit
#: the bar at once: the number is the key, the panel's title names it in full
NARROW_TAB_WORDS: dict[str, str] = {
    "inflight": "Run",
    "failures": "Fail",
    "exec": "Exec",
    "metrics": "Metr",
    "workers": "Work",
    "audit": "Log",
    "schedules": "Sched",
    "health": "Health",
}


def numbered() -> list[tuple[int, type[Panel]]]:
    """(number, panel class) of every panel, in order: the number is also its key."""
    return list(enumerate(PANELS, 1))


def number_of(scope: str) -> int:
    """The number (and key) of the panel named ``scope``."""
    return PANEL_IDS.index(scope) + 1


def panel_class(scope: str) -> type[Panel]:
    return PANELS[number_of(scope) - 1]
