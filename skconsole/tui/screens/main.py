"""The main screen: status bar, queue depth and trend on top, the other panels in tabs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.cells import cell_len
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import TabbedContent, TabPane, Tabs

from skconsole.tui.model import Snapshot, Trends
from skconsole.tui.opening import Opening
from skconsole.tui.panels import NARROW_TAB_WORDS, PANEL_IDS, numbered, panel_class
from skconsole.tui.widgets.depth_panel import DepthPanel
from skconsole.tui.widgets.failures_panel import FailuresPanel
from skconsole.tui.widgets.footer import ConsoleFooter
from skconsole.tui.widgets.health_panel import HealthPanel
from skconsole.tui.widgets.panel import Panel, panel_of
from skconsole.tui.widgets.status_bar import StatusBar, StatusState
from skconsole.tui.widgets.throughput import ThroughputBox


def tab_label(
    number: int, panel: type[Panel], note: str | None = None, *, narrow: bool = False
) -> str:
    """A tab's label: "3 Failures", with the panel's note ("3 Failures 6") when it has one.

    ``narrow`` (below 100 columns, where all nine must fit 80): a short word, and the
    note only as the panel's alarm has it, its brief form (:meth:`Panel.brief_note`:
    "2 Run 2 HUNG", "3 Fail 6"), a sign alone when it starts with one ("9 Health ⚠")."""
    if not narrow:
        return f"{number} {panel.label()}" + (f" {note}" if note else "")
    word = NARROW_TAB_WORDS.get(panel.scope, panel.label())
    if not note:
        return f"{number} {word}"
    last = note.rpartition(" · ")[2]
    return f"{number} {word} {last[0] if not last[0].isalnum() else last}"  # "⚠ 2h": "⚠"


def bar_width(labels: list[str]) -> int:
    """The cells a tab bar of ``labels`` takes (a cell of padding a side of each)."""
    return sum(cell_len(label) + 2 for label in labels)


#: the least each part keeps: panel 1 its header and two rows, the tabs theirs too
TOP_MIN = 5
BOTTOM_MIN = 7
#: the tab bar and its underline
TAB_BAR = 2


def split_height(available: int, top_need: int, bottom_need: int) -> int:
    """Panel 1's height, the tabs taking the rest of ``available`` rows: each part
    gets what its content needs when both fit; else the one that needs less than half
    gets it all and the other the rest; else half each."""
    if top_need + bottom_need <= available or top_need <= available // 2:
        top = top_need
    elif bottom_need <= available - available // 2:
        top = available - bottom_need
    else:
        top = available // 2
    return max(TOP_MIN, min(top, available - BOTTOM_MIN))


def table_need(panel: Panel) -> int:
    """The rows a panel's table needs to show every row: its rows, its header, its
    horizontal scrollbar when it has one, and the panel's border."""
    table = panel.table
    scrollbar = (
        table.scrollbar_size_horizontal if table.virtual_size.width > table.size.width else 0
    )
    return table.row_count + (1 if table.show_header else 0) + scrollbar + 2


class MainScreen(Screen[None]):
    """Everything at a glance; number keys focus a panel, Enter drills into failures.

    The panels are those of :data:`skconsole.tui.panels.PANELS`, in its order:
    untabbed ones above the tabs, beside the trend. ``status`` gives the status
    line; ``on_resume`` runs whenever the screen is back on top (a dialog closed).

    Only the panels in view (the untabbed ones and the active tab's) are
    updated on each refresh: a panel in a hidden tab catches up with the latest
    snapshot when its tab is shown, so a big table nobody looks at costs nothing.
    """

    def __init__(self, status: Callable[[], StatusState], on_resume: Callable[[], None]) -> None:
        super().__init__()
        self._status = status
        self._on_resume = on_resume
        self._snapshot: Snapshot | None = None

    def compose(self) -> ComposeResult:
        yield StatusBar(self._status)
        with Horizontal(id="top"):
            for n, cls in numbered():
                if not cls.tabbed:
                    yield cls(number=n)
            yield ThroughputBox()
        with TabbedContent(initial=f"tab-{FailuresPanel.scope}", id="tabs"):
            for n, cls in numbered():
                if cls.tabbed:
                    with TabPane(tab_label(n, cls), id=f"tab-{cls.scope}"):
                        yield cls(number=n)
        yield ConsoleFooter()

    def on_mount(self) -> None:
        self.query_one(FailuresPanel).table.focus()

    def set_loading(self, loading: bool) -> None:
        """The spinner shows only until the first data arrives."""
        for panel in self.query(Panel):
            panel.loading = loading

    def reset(self) -> None:
        """Another queue is shown: nothing of the last one stays (its marked jobs least of
        all); the spinners show until its data arrives."""
        self._snapshot = None
        for panel in self.query(Panel):
            panel.clear_marks()
            panel.shown = None
        self.set_loading(True)
        self.show_trends(Trends())

    # -- panels ------------------------------------------------------------------
    def panel(self, scope: str) -> Panel:
        return self.query_one(f"#panel-{scope}", Panel)

    def current_scope(self) -> str:
        panel = panel_of(self.focused)
        if panel is not None:
            return panel.scope
        tabs = self.query_one(TabbedContent)
        return tabs.active.removeprefix("tab-") if tabs.active else PANEL_IDS[0]

    def opening(self, snapshot: Snapshot | None) -> Opening | None:
        """What Enter opens on the focused panel's selected row."""
        panel = self.panel(self.current_scope())
        key = panel.table.selected_key
        return None if key is None or snapshot is None else panel.opening(key, snapshot)

    def show_filtered(self, scope: str, text: str) -> None:
        """Show the panel ``scope`` with its filter set to ``text`` (a worker's jobs)."""
        self.show_panel(scope)
        self.panel(scope).filter_to(text)

    def show_panel(self, scope: str) -> None:
        if panel_class(scope).tabbed:
            self.query_one(TabbedContent).active = f"tab-{scope}"
        panel = self.panel(scope)
        self._catch_up(panel)
        panel.table.focus()

    def in_view(self, panel: Panel) -> bool:
        """Whether ``panel`` is on screen: untabbed, or in the active tab."""
        return not panel.tabbed or self.query_one(TabbedContent).active == f"tab-{panel.scope}"

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        scope = (event.pane.id or "").removeprefix("tab-")
        if scope in PANEL_IDS:
            self._catch_up(self.panel(scope))
        self.call_after_refresh(self.share_height)

    # -- data --------------------------------------------------------------------
    def show_snapshot(self, snapshot: Snapshot) -> None:
        """Show ``snapshot`` in the panels in view (the others catch up when shown)."""
        self._snapshot = snapshot
        for panel in self.query(Panel):
            self._show(panel, snapshot)
        self.query_one(ThroughputBox).show_snapshot(snapshot)
        self._label_tabs(snapshot)
        self.call_after_refresh(self.share_height)

    # -- height --------------------------------------------------------------------
    def share_height(self) -> None:
        """Panel 1 and the tabs share the rows between the status line and the footer
        by what they show: the one with fewer rows to show gives the other its spare."""
        top = self.query_one("#top")
        available = self.size.height - 2  # the status line and the footer
        if available <= 0:
            return
        top_need = max(table_need(self.query_one(DepthPanel)), self._trend_need())
        scope = self.query_one(TabbedContent).active.removeprefix("tab-")
        panel = self.panel(scope) if scope in PANEL_IDS else None
        # the health tab is lists and text, not one table: it takes what it is given
        bottom_need = (
            available
            if panel is None or isinstance(panel, HealthPanel)
            else table_need(panel) + TAB_BAR
        )
        height = split_height(available, top_need, bottom_need)
        if top.styles.height is None or top.styles.height.value != height:
            top.styles.height = height

    def _trend_need(self) -> int:
        box = self.query_one(ThroughputBox)
        if not box.display:
            return 0
        return sum(child.outer_size.height for child in box.children) + 2

    def show_failures(self, snapshot: Snapshot) -> None:
        """New failure groups (their own cadence) in ``snapshot``: only their panel changes."""
        self._snapshot = snapshot
        self._show(self.query_one(FailuresPanel), snapshot)
        self._label_tabs(snapshot)

    def show_health(self, snapshot: Snapshot) -> None:
        """A new queue-health read (its own cadence) in ``snapshot``: only its panel changes."""
        self._snapshot = snapshot
        self._show(self.query_one(HealthPanel), snapshot)
        self._label_tabs(snapshot)

    def _show(self, panel: Panel, snapshot: Snapshot) -> None:
        # the spinner until its data is read (a past minute's panel it does not keep: never)
        panel.loading = not (panel.has_data(snapshot) or panel.scope in snapshot.past_notes)
        if self.in_view(panel):
            panel.show_snapshot(snapshot)

    def _catch_up(self, panel: Panel) -> None:
        """A panel coming into view shows the latest snapshot, unless it already does."""
        if self._snapshot is not None and panel.shown is not self._snapshot:
            panel.show_snapshot(self._snapshot)

    def show_trends(self, trends: Trends) -> None:
        self.query_one(ThroughputBox).show_trends(trends)

    @property
    def narrow(self) -> bool:
        """Below 100 columns (the App's HORIZONTAL_BREAKPOINTS)."""
        return self.has_class("-narrow")

    def on_resize(self) -> None:
        self._label_tabs(self._snapshot)
        self.call_after_refresh(self.share_height)

    def tab_labels(self, snapshot: Snapshot | None) -> dict[str, tuple[str, bool]]:
        """Each tab's label and alarm (by panel scope): every note in full and the whole
        word when they fit the bar; else only the alarms' brief notes (:meth:`Panel.brief_note`),
        with the whole words if those fit, the narrow words if not (always below 100
        columns), so no tab runs off the bar."""
        tabbed = [(n, cls, self.panel(cls.scope)) for n, cls in numbered() if cls.tabbed]
        alarms = {
            p.scope: snapshot is not None and snapshot.kept(p.scope) and p.alarm(snapshot)
            for _, _, p in tabbed
        }
        full = [
            tab_label(
                n,
                cls,
                None if snapshot is None or not snapshot.kept(p.scope) else p.tab_note(snapshot),
            )
            for n, cls, p in tabbed
        ]
        briefs = [
            p.brief_note(snapshot) if snapshot is not None and alarms[p.scope] else None
            for _, _, p in tabbed
        ]
        brief = [tab_label(n, cls, b) for (n, cls, _), b in zip(tabbed, briefs, strict=True)]
        narrow = [
            tab_label(n, cls, b, narrow=True) for (n, cls, _), b in zip(tabbed, briefs, strict=True)
        ]
        width = self.size.width
        forms = [narrow] if self.narrow else [full, brief, narrow]
        labels = next((f for f in forms if bar_width(f) <= width), forms[-1])
        return {
            p.scope: (label, alarms[p.scope])
            for (_, _, p), label in zip(tabbed, labels, strict=True)
        }

    def _label_tabs(self, snapshot: Snapshot | None) -> None:
        tabs = self.query_one(TabbedContent)
        relabelled = False
        for scope, (label, alarm) in self.tab_labels(snapshot).items():
            tab = tabs.get_tab(f"tab-{scope}")
            if tab.label.plain != label:
                tab.label = label
                relabelled = True
            tab.set_class(alarm, "-alarm")

        if relabelled:
            # Tabs re-places its underline on a relabel, but (with animations off)
            # before the wider labels are laid out: place it again once they are
            self.call_after_refresh(self.call_after_refresh, self._realign_underline)

    def _realign_underline(self) -> None:
        realign = getattr(self.query_one(Tabs), "_highlight_active", None)
        if callable(realign):  # a private method of Textual's Tabs: skip if it goes
            realign(animate=False)

    def on_screen_resume(self) -> None:
        self._on_resume()
        # tabs relabelled while another screen was on top (the overview of several
        # queues, a drill-down) were laid out only now: place the underline under them
        self.call_after_refresh(self._realign_underline)


def back_to_main(app: App[Any]) -> None:
    """Close whatever is above the main screen: drill-downs, dialogs, the overview."""
    while len(app.screen_stack) > 1 and not isinstance(app.screen, MainScreen):
        app.pop_screen()
