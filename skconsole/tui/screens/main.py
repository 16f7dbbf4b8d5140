"""The main screen: status bar, queue depth and trend on top, the other panels in tabs."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane, Tabs

from skconsole.tui.actions import PANELS
from skconsole.tui.model import Snapshot, Trends
from skconsole.tui.widgets.audit_panel import AuditPanel
from skconsole.tui.widgets.depth_panel import DepthPanel
from skconsole.tui.widgets.exec_panel import ExecPanel
from skconsole.tui.widgets.failures_panel import FailuresPanel
from skconsole.tui.widgets.inflight_panel import InflightPanel
from skconsole.tui.widgets.metrics_panel import MetricsPanel
from skconsole.tui.widgets.panel import Panel
from skconsole.tui.widgets.status_bar import StatusBar
from skconsole.tui.widgets.throughput import ThroughputBox
from skconsole.tui.widgets.workers_panel import WorkersPanel

TABBED: tuple[type[Panel], ...] = (
    InflightPanel,
    FailuresPanel,
    ExecPanel,
    MetricsPanel,
    WorkersPanel,
    AuditPanel,
)
TITLES = dict(PANELS)


class MainScreen(Screen[None]):
    """Everything at a glance; number keys focus a panel, Enter drills into failures."""

    def compose(self) -> ComposeResult:
        yield StatusBar()
        with Horizontal(id="top"):
            yield DepthPanel()
            yield ThroughputBox()
        with TabbedContent(initial="tab-failures", id="tabs"):
            for n, cls in enumerate(TABBED, 2):
                with TabPane(f"{n} {TITLES[cls.scope]}", id=f"tab-{cls.scope}"):
                    yield cls()
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(FailuresPanel).table.focus()

    def set_loading(self, loading: bool) -> None:
        """The spinner shows only until the first data arrives."""
        for panel in self.query(Panel):
            panel.loading = loading

    # -- panels ------------------------------------------------------------------
    def panel(self, scope: str) -> Panel:
        return self.query_one(f"#panel-{scope}", Panel)

    def focused_panel(self) -> Panel | None:
        node = self.focused
        while node is not None:
            if isinstance(node, Panel):
                return node
            node = node.parent  # type: ignore[assignment]
        return None

    def current_scope(self) -> str:
        panel = self.focused_panel()
        if panel is not None:
            return panel.scope
        tabs = self.query_one(TabbedContent)
        return tabs.active.removeprefix("tab-") if tabs.active else "depth"

    def show_panel(self, scope: str) -> None:
        if scope != "depth":
            self.query_one(TabbedContent).active = f"tab-{scope}"
        self.panel(scope).table.focus()

    # -- data --------------------------------------------------------------------
    def show_snapshot(self, snapshot: Snapshot) -> None:
        self.set_loading(False)
        for panel in self.query(Panel):
            panel.show_snapshot(snapshot)
        self.query_one(ThroughputBox).show_snapshot(snapshot)
        self._label_tabs(snapshot)

    def show_trends(self, trends: Trends) -> None:
        self.query_one(ThroughputBox).show_trends(trends)

    def _label_tabs(self, snapshot: Snapshot) -> None:
        tabs = self.query_one(TabbedContent)
        hung = snapshot.hung_count
        labels = {
            "inflight": f"2 In flight {len(snapshot.inflight):,}"
            + (f" · {hung} HUNG" if hung else ""),
            "failures": f"3 Failures {len(snapshot.failures):,}",
            "workers": f"6 Workers {len(snapshot.workers):,}",
        }
        relabelled = False
        for scope, label in labels.items():
            tab = tabs.get_tab(f"tab-{scope}")
            if tab.label.plain != label:
                tab.label = label
                relabelled = True
            tab.set_class(scope == "inflight" and hung > 0, "-alarm")
            tab.set_class(scope == "failures" and bool(snapshot.failures), "-alarm")

        if relabelled:
            # Tabs re-places its underline on a relabel, but (with animations off)
            # before the wider labels are laid out: place it again once they are
            self.call_after_refresh(self.call_after_refresh, self._realign_underline)

    def _realign_underline(self) -> None:
        realign = getattr(self.query_one(Tabs), "_highlight_active", None)
        if callable(realign):  # a private method of Textual's Tabs: skip if it goes
            realign(animate=False)

    def on_screen_resume(self) -> None:
        apply = getattr(self.app, "apply_pending", None)
        if callable(apply):
            apply()
