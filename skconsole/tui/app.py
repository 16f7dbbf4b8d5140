"""The operations console: the App, its cadences and its keys.

Rules this module keeps:

- No database call on the UI thread. Every read and write goes through the
  data source in a worker thread; results come back as messages.
- Reads run on cadences declared as data (:data:`CADENCES`, run by
  :class:`~skconsole.tui.cadences.Cadences`): snapshots every ``interval``;
  failure groups, trends and the queue tables' health on slower cycles of their
  own that follow the refresh (right after a snapshot was shown, in the gap
  before the next one), read again on entering their panel and after an action.
  The next read is scheduled only when the previous one has finished, and
  nothing is repainted under an open dialog.
- A failed refresh keeps the last snapshot on screen, marks it stale and
  retries with back-off; write actions are dimmed until the server is back.
- Screens get what they need passed in (the App as a
  :class:`~skconsole.tui.context.Console`) and hear of new data through
  :class:`~skconsole.tui.messages.DataChanged`; none imports this module. What a
  key opens is the :class:`~skconsole.tui.navigation.Navigator`'s to open.
- Every write key runs through :meth:`ConsoleApp.action_operate`: its
  :class:`~skconsole.tui.operation.Operation` in the key registry says the
  spec, the target and the dialogs; :class:`ActionRunner` previews, confirms
  with the exact scope (default No) and executes on the ids the preview captured.
- Several queues (:meth:`ConsoleApp.of_queues`): the console opens on their
  overview, each queue read on a loop of its own
  (:class:`~skconsole.tui.queue_overviews.QueueOverviews`). The panels show one
  queue at a time, named in the status line; the
  :class:`~skconsole.tui.queue_switch.QueueSwitch` goes between the overview and
  them, and the App then reads the queue shown (the last one's cadences retired),
  which every key, operator actions included, acts on. With one queue none of this
  exists: no overview, no key for it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from textual import on
from textual.app import App
from textual.binding import BindingType
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, TabbedContent
from textual.worker import Worker, WorkerState

from skconsole.core.actor import Actor
from skconsole.core.places import Place, link
from skconsole.tui import actions as registry
from skconsole.tui import as_test, cadences, clipboard, reads
from skconsole.tui.action_runner import ActionRunner, is_connection_error
from skconsole.tui.action_spec import MAIN, ActionSpec
from skconsole.tui.actions import ACTIONS, spec_for
from skconsole.tui.cadences import INTERVALS, MAX_BACKOFF_S, Cadence, Cadences, following
from skconsole.tui.commands import ActionCommands
from skconsole.tui.context import Scoped
from skconsole.tui.engine_control import EngineControl, engine_text, toggle
from skconsole.tui.formatting import first_line, fmt_seconds, short_id
from skconsole.tui.messages import (
    ActionDone,
    ActionFailed,
    DataChanged,
    PreviewReady,
)
from skconsole.tui.model import (
    FailureGroups,
    QueueHealth,
    Snapshot,
    Trends,
    Windows,
)
from skconsole.tui.navigation import Navigator
from skconsole.tui.opening import OpenKind, of_place
from skconsole.tui.operation import Here
from skconsole.tui.polling import PollLoop, backoff
from skconsole.tui.queue_overviews import QueueOverviews
from skconsole.tui.queue_switch import QueueSwitch
from skconsole.tui.screens.drilldown import DrillDownScreen
from skconsole.tui.screens.help import HelpScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.link import LinkScreen
from skconsole.tui.screens.main import MainScreen, back_to_main
from skconsole.tui.screens.overview import OverviewScreen
from skconsole.tui.source import DataSource, PastView, Queue
from skconsole.tui.widgets.failures_panel import FailuresPanel
from skconsole.tui.widgets.health_panel import HealthPanel
from skconsole.tui.widgets.panel import Panel, panel_of
from skconsole.tui.widgets.status_bar import StatusState, replication_text

__all__ = ["CADENCES", "ConsoleApp", "EngineControl"]


class ConsoleApp(App[int]):
    """The console. ``source`` gives data; ``clock`` (epoch seconds) is injectable for tests."""

    CSS_PATH = "app.tcss"
    TITLE = "skconsole"
    #: below 100 columns the screen has class -narrow: app.tcss gives the depth table the width
    #: (Textual annotates it ``ClassVar[...] | None``, which mypy reads as an instance variable)
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (100, "-normal")]  # type: ignore[misc]
    BINDINGS: ClassVar[list[BindingType]] = registry.bindings()  # type: ignore[assignment]
    COMMANDS = App.COMMANDS | {ActionCommands}
    ENABLE_COMMAND_PALETTE = True

    def __init__(
        self,
        source: DataSource,
        *,
        refresh_interval: float = 2.0,
        engine: EngineControl | None = None,
        clock: Callable[[], float] = time.time,
        actor: str | None = None,
        start_engine: bool = False,
        auto_refresh: bool = True,
        queues: Sequence[Queue] = (),
        open_at: Place | None = None,
        serve_url: str | None = None,
        tasks: str | None = None,
    ) -> None:
        super().__init__()
        #: the tasks module it was started with (--tasks): what the a key's test imports
        self.tasks = tasks
        #: --open: what is opened once the data is in (a group: once the groups are read)
        self.open_at = None if open_at is None else of_place(open_at)
        #: the address of the ``skconsole serve`` this console runs under (the l key's links)
        self.serve_url = serve_url
        self.read_only = source.read_only
        #: the past minute shown (``--at``, ``--bundle``); None: the present
        self.past = source if isinstance(source, PastView) else None
        self.engine = engine
        self.clock = clock
        self.actor = actor or Actor.current().user
        self.interval = refresh_interval
        self.paused = False
        self.start_engine = start_engine
        self.live_refresh = auto_refresh  # False: refresh only on demand (fixed-data scenes)
        self.refresh_times_ms: deque[float] = deque(maxlen=1000)  # database reads (worker)
        self.apply_times_ms: deque[float] = deque(maxlen=1000)  # updating the widgets (UI)
        self.refresh_count = 0
        self.failure_reads_ms: deque[float] = deque(maxlen=1000)  # their database reads
        self._start_reading(source)  # the source, its cadences; no data yet
        self._bindings_connected = False
        self.operator = ActionRunner(
            self,
            source,
            actor=self.actor,
            read_only=self.read_only,
            read_only_note=self.read_only_note,
            connected=lambda: self.connected,
            done=self._after_action,
            report_error=self.report_error,
            queue=lambda: self.overview.shown if self.queue_switch.several else None,
        )
        self.main_screen = MainScreen(self.status_state, self.apply_pending)
        #: several queues (else none): each one's overview, on a loop of its own
        self.overview = QueueOverviews(self, queues if len(queues) > 1 else (), shown=source)
        self.queue_switch = QueueSwitch(
            self,
            self.overview,
            busy=lambda: self.operator.busy,
            read_from=self._read_from,
        )
        self.navigator = Navigator(
            self,
            self,
            self.main_screen,
            snapshot=lambda: self.snapshot,
            show_queue=self.queue_switch.show,
        )

    def _start_reading(self, source: DataSource) -> None:
        """Read ``source`` from the start: cadences of its own, no data, no connection yet."""
        self.source = source
        self.snapshot: Snapshot | None = None
        self.trends: Trends | None = None
        self.failure_groups: FailureGroups | None = None
        self.health: QueueHealth | None = None
        self.windows: Windows | None = None
        self.connection = "connecting"
        self.error_text: str | None = None
        self._last_ok_at: float | None = None
        self.cadences = Cadences(self, source, CADENCES, auto=self.live_refresh)

    @classmethod
    def of_queues(cls, queues: Sequence[Queue], **kw: Any) -> ConsoleApp:
        """A console of several queues: it opens on their overview, the first one's
        panels beneath it."""
        return cls(queues[0].source, queues=queues, **kw)

    # -- screens ---------------------------------------------------------------------
    def get_default_screen(self) -> Screen[Any]:
        return self.main_screen

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every toast is plain text unless asked otherwise: most carry a task type, a
        group or a server's error, and ``[/]`` in one would otherwise raise a MarkupError."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def on_mount(self) -> None:
        self.call_after_refresh(self._begin)  # once every panel is composed

    def _begin(self) -> None:
        """The schema is there: start the embedded engine (if asked) and the refresh loop."""
        if self.start_engine and self.engine is not None:
            self.engine.start()
        if self.snapshot is None:
            self.main_screen.set_loading(True)
        self.request_refresh()  # the slower loops follow: they read once it is shown
        self.queue_switch.start()

    # -- status ----------------------------------------------------------------------
    def status_state(self) -> StatusState:
        engine = self.engine
        age = None if self._last_ok_at is None else max(self.clock() - self._last_ok_at, 0.0)
        return StatusState(
            server=self.source.description,
            connection=self.connection,
            attempt=self.attempt,
            error=self.error_text,
            age_s=age,
            interval_s=self.interval,
            paused=self.paused,
            read_only=self.read_only,
            engine=None if engine is None else engine_text(engine),
            engine_brief=None if engine is None else engine_text(engine, done=False),
            engine_state=None if engine is None else engine.state,
            degraded=self.snapshot is not None and self.snapshot.degraded,
            queue=self.overview.shown,
            replication=replication_text(self.snapshot.replication if self.snapshot else None),
            standby=self.on_standby,
            past=None if self.past is None else f"{self.past.minute():%Y-%m-%d %H:%M} UTC",
        )

    @property
    def on_standby(self) -> bool:
        """The console reads a hot standby (its last snapshot says so)."""
        replication = self.snapshot.replication if self.snapshot else None
        return replication is not None and replication.standby

    def read_only_note(self) -> str:
        """Why no write is possible, in one line."""
        if self.past is not None:
            return (
                f"The past ({self.past.minute():%H:%M} UTC) cannot be changed: operator actions"
                " are off (skconsole without --at or --bundle acts on the queue now)."
            )
        if self.on_standby:
            return (
                "Read-only: this console reads a hot standby, and writes need the primary"
                " (skconsole --dsn PRIMARY --read-dsn STANDBY)."
            )
        return "Read-only mode: no changes are possible."

    def status_changed(self) -> None:
        from skconsole.tui.widgets.status_bar import StatusBar

        if not self.is_running:  # quitting: the status bars are being removed
            return
        stale = self.snapshot is not None and self.connection != "live"
        for screen in self.screen_stack:
            # the overview's queues say each their own connection
            screen.set_class(stale and not isinstance(screen, OverviewScreen), "-stale")
            for bar in screen.query(StatusBar):
                bar.show_latest()
        if self.connected != self._bindings_connected:  # writes dim or light up
            self._bindings_connected = self.connected
            self.refresh_bindings()

    # -- the cadences (CADENCES): snapshots every ``interval``, the others slower ----------
    @property
    def refresh_loop(self) -> PollLoop[Snapshot]:
        return self.cadences["refresh"]

    def request_refresh(self) -> None:
        """Refresh now unless a refresh is running; replaces the scheduled one."""
        self.refresh_loop.request()

    @property
    def attempt(self) -> int:
        """Failed refreshes in a row (shown while reconnecting)."""
        return self.refresh_loop.failures

    def on_poll_loop_done(self, message: PollLoop.Done) -> None:
        if self.is_running:  # not while quitting: the screens' widgets are being removed
            message.loop.finished(message.value, message.elapsed_ms)

    def on_poll_loop_failed(self, message: PollLoop.Failed) -> None:
        if self.is_running:
            message.loop.failed(message.error)

    def _snapshot_read(self, snapshot: Snapshot, elapsed_ms: float) -> None:
        was = self.connection
        self.connection, self.error_text = "live", None
        self.snapshot = self._latest(snapshot)
        self._last_ok_at = self.clock()
        self.refresh_count += 1
        self.refresh_times_ms.append(elapsed_ms)
        if was not in ("live", "connecting"):
            self.notify("Connection restored: the data is live again.", title="Reconnected")
            for name in ("failures", "trends", "health"):  # right after this snapshot is shown
                self.cadences[name].request_soon()
        self.status_changed()

    def _refresh_failed(self, error: BaseException) -> None:
        connection_lost = is_connection_error(error)
        if connection_lost:
            self.connection, self.error_text = "reconnecting", None
        else:
            self.connection = "error"
            self.error_text = first_line(str(error), 80) or type(error).__name__
        if self.attempt == 1 and self.snapshot is not None:
            self.notify(
                "Lost the connection: the data on screen is from before; retrying."
                if connection_lost
                else f"Refresh failed: {self.error_text}",
                title="Stale data",
                severity="warning",
            )
        self.status_changed()

    def _show_snapshot(self, snapshot: Snapshot) -> None:
        started = time.perf_counter()
        self.main_screen.show_snapshot(self._latest(snapshot))
        self.apply_times_ms.append((time.perf_counter() - started) * 1000.0)
        self.screen.post_message(DataChanged())  # a drill-down reads its own data again
        if self.open_at is not None and self.open_at.kind is not OpenKind.GROUP:
            self._open_at_start()

    def _failures_read(self, groups: FailureGroups, _elapsed_ms: float) -> None:
        self.failure_reads_ms.append(groups.read_ms)
        self._kept("failure_groups", groups)

    def _show_failures(self, _groups: FailureGroups) -> None:
        if self.snapshot is not None:  # else the first snapshot shows them
            self.main_screen.show_failures(self.snapshot)
        self.screen.post_message(DataChanged(failures=True))  # a group's jobs too
        if self.open_at is not None:
            self._open_at_start()

    def _open_at_start(self) -> None:
        """--open, once: a job or a search with the first snapshot, a failure group with
        the first failure groups read (it must be among them)."""
        opening, self.open_at = self.open_at, None
        if opening is not None and not self.navigator.open(opening):
            self.notify(
                f"No failure group {opening.value} now: its jobs may have been requeued or"
                " purged (the failures panel, 3, lists the groups).",
                title="Link",
                severity="warning",
                timeout=10,
            )

    def _latest(self, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` with the latest reads of the slower cadences (failures, health,
        windows)."""
        latest = snapshot.with_failures(self.failure_groups).with_health(self.health)
        return latest.with_windows(self.windows)

    def _kept(self, name: str, value: object) -> None:
        """A slower cadence's latest read, kept as ``name`` and shown in the snapshot."""
        setattr(self, name, value)
        if self.snapshot is not None:
            self.snapshot = self._latest(self.snapshot)

    def _show_windows(self, _windows: Windows) -> None:
        if self.snapshot is not None:  # else the first snapshot shows them
            self.main_screen.show_snapshot(self.snapshot)

    def _show_health(self, _read: QueueHealth) -> None:
        if self.snapshot is not None:  # else the first snapshot shows it
            self.main_screen.show_health(self.snapshot)

    def _trends_read(self, trends: Trends, _elapsed_ms: float) -> None:
        self.trends = trends  # failures: the refresh loop reports the connection state

    def _show_trends(self, trends: Trends) -> None:
        self.main_screen.show_trends(trends)

    def apply_pending(self) -> None:
        """Called when a dialog closes: show what arrived while it was open."""
        self.cadences.flush()
        self.overview.flush()

    def _read_from(self, source: DataSource) -> None:
        """Read another queue (several queues): the last one's cadences are retired (what
        they were reading lands nowhere) and nothing of it stays on screen."""
        self.cadences.retire()
        self._start_reading(source)
        self.operator.source = source
        if self.paused:
            self.cadences.pause()
        self.main_screen.reset()
        self.status_changed()
        self.request_refresh()

    # -- context and key checks --------------------------------------------------------
    def current_scope(self) -> str:
        """Where the keys are: the main screen's focused panel, or a drill-down's own scope."""
        screen = self.screen
        return screen.current_scope() if isinstance(screen, Scoped) else ""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide actions that do not apply here or are not allowed; dim writes while offline."""
        spec = spec_for(action, parameters)
        if spec is None:
            return True
        if not spec.applies(self.current_scope()):
            return False
        if spec.id == "open" and isinstance(self.focused, Input):
            return False
        if spec.id == "leave" and not self._can_go_back():
            return False
        if spec.id == "queues" and isinstance(self.screen, ModalScreen):
            return False
        if spec.id == "parent" and self.navigator.parent_of_shown() is None:
            return False
        if spec.id == "children" and self.navigator.posted_by_shown() is None:
            return False
        return self._allowed(spec)

    def _can_go_back(self) -> bool:
        if isinstance(self.screen, DrillDownScreen | OverviewScreen):
            return True
        panel = panel_of(self.focused)
        return panel is not None and (
            bool(panel.table.filter_text) or panel.filter_input.display or bool(panel.table.marked)
        )

    def _allowed(self, spec: ActionSpec) -> bool | None:
        # in the past a write key stays bound, so that pressing it says why it does nothing
        return spec.allowed(
            self.engine is not None,
            self.read_only and self.past is None,
            self.connected,
            self.queue_switch.several,
            past=self.past is not None,
        )

    def hidden_in_footer(self, action: str) -> bool:
        """A write key in the past: bound (it says why it does nothing), not advertised."""
        if self.past is None:
            return False
        name, _, rest = action.partition("(")
        spec = spec_for(name, (rest.rstrip(")").strip("'"),) if rest else ())
        return spec is not None and spec.needs_write

    def palette_allows(self, spec: ActionSpec) -> bool:
        return self._allowed(spec) is not False and (
            spec.applies(self.current_scope())
            or spec.home is not None
            or not spec.scopes
            or (spec.scopes <= MAIN and isinstance(self.screen, MainScreen))
        )

    async def run_from_palette(self, spec: ActionSpec) -> None:
        """Run an action chosen by name; a panel action first focuses its home panel."""
        if self._allowed(spec) is None:
            self.notify(
                "Not connected: write actions wait until the server is back.", severity="warning"
            )
            return
        if spec.applies(self.current_scope()):
            await self.run_action(spec.action)
            return
        if spec.home is None and not (isinstance(self.screen, MainScreen) and spec.scopes <= MAIN):
            self.notify(f"“{spec.description}” does not apply here.", severity="warning")
            return
        back_to_main(self)
        if spec.home is not None:
            self.main_screen.show_panel(spec.home)
        # once the focus has moved, the action sees its panel's selection
        self.call_after_refresh(self.run_action, spec.action)

    # a focus move refreshes the bindings (the keys of the focused panel) by itself: Textual's
    # Screen does it when its focused widget changes; a second refresh here recomposed the
    # footer twice per move

    # -- simple actions ------------------------------------------------------------------
    def action_help(self) -> None:
        self.push_screen(HelpScreen(ACTIONS, self.read_only, self.queue_switch.several))

    def action_panel(self, scope: str) -> None:
        self.main_screen.show_panel(scope)
        self._entered(scope)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._entered((event.pane.id or "").removeprefix("tab-"))

    def _entered(self, scope: str) -> None:
        """Entering the failures or the health panel (key or click) reads it again, unless
        fresh: their cadences are slow."""
        if scope == FailuresPanel.scope:
            self._read_unless_fresh("failures", self.failure_groups, cadences.FAILURES_FRESH_S)
        elif scope == HealthPanel.scope:
            self._read_unless_fresh("health", self.health, cadences.HEALTH_FRESH_S)

    def _read_unless_fresh(
        self, cadence: str, latest: FailureGroups | QueueHealth | None, fresh_s: float
    ) -> None:
        """Read now, unless ``latest`` is younger than ``fresh_s`` (or nothing is shown
        yet: the slower reads follow the first snapshot)."""
        if self.snapshot is not None and (
            latest is None or self.clock() - latest.taken_at >= fresh_s
        ):
            self.cadences[cadence].request()

    def action_filter(self) -> None:
        panel = panel_of(self.focused)
        if panel is None and isinstance(self.screen, MainScreen):
            panel = self.main_screen.panel(self.current_scope())
        if panel is not None:
            panel.open_filter()

    def action_leave(self) -> None:
        panel = panel_of(self.focused)
        if panel is not None and (panel.table.filter_text or panel.filter_input.display):
            panel.clear_filter()
        elif panel is not None and panel.clear_marks():
            pass
        elif isinstance(self.screen, DrillDownScreen | OverviewScreen):
            self.pop_screen()
        self.refresh_bindings()

    def action_mark(self) -> None:
        """Space: mark the selected job (or unmark it); the job keys act on the marked ones."""
        panel = panel_of(self.focused)
        if panel is not None:
            panel.toggle_mark()
            self.refresh_bindings()

    def action_pause_refresh(self) -> None:
        self.paused = not self.paused
        if self.paused:
            self.cadences.pause()
            self.overview.pause()
            self.notify("Refresh paused: the data will age until you press p again.")
        else:
            self.notify("Refresh resumed.")
            self.cadences.resume()
            self.overview.resume()
        self.status_changed()

    def _scrub(self, minutes: int) -> None:
        """Show another minute of the past: every cadence reads it again at once."""
        if self.past is None:
            return
        before = self.past.minute()
        at = self.past.move(minutes)
        if at == before:
            self.notify(f"Nothing kept beyond this minute: {self.past.bounds_text()}.")
            return
        self.status_changed()
        self.cadences.request_soon()

    def action_past_back(self) -> None:
        self._scrub(-1)

    def action_past_forward(self) -> None:
        self._scrub(+1)

    def action_past_back_10(self) -> None:
        self._scrub(-10)

    def action_past_forward_10(self) -> None:
        self._scrub(+10)

    def action_refresh_now(self) -> None:
        """Every cadence reads now: the slower ones right after this refresh (and every
        queue's overview at once)."""
        self.cadences.request_soon()
        self.overview.request()

    def _set_interval(self, step: int) -> None:
        index = min(range(len(INTERVALS)), key=lambda i: abs(INTERVALS[i] - self.interval))
        self.interval = INTERVALS[max(0, min(len(INTERVALS) - 1, index + step))]
        self.notify(f"Refreshing every {fmt_seconds(self.interval)}.")
        self.status_changed()
        if self.connected:  # while reconnecting, the back-off keeps its own pace
            self.refresh_loop.reschedule()

    def action_faster(self) -> None:
        self._set_interval(-1)

    def action_slower(self) -> None:
        self._set_interval(+1)

    def action_engine(self) -> None:
        if self.engine is not None:
            self.notify(toggle(self.engine))
            self.status_changed()

    def action_copy(self) -> None:
        screen = self.screen
        if isinstance(screen, JobDetailScreen):
            text = screen.copy_text()
            if text is None:
                return
            done = clipboard.copy(self, text, f"skconsole-job-{short_id(screen.task_id)}.txt")
            self.notify(
                f"Copied job {short_id(screen.task_id)} ({done.characters:,} characters: "
                f"fields, payload and full error); {done.where()}.",
                title="Copied",
            )

    def action_as_test(self) -> None:
        """a: the job shown as a pytest module, written to the current directory; without
        --tasks, the command that writes it (copied)."""
        screen = self.screen
        if not isinstance(screen, JobDetailScreen) or screen.detail is None:
            return
        if self.tasks is None:
            command = as_test.command_for(screen.detail)
            self.copy_to_clipboard(command)
            self.notify(
                "This console was not started with --tasks, so it does not know the handler's"
                f" module: run {command} (copied).",
                title="As test",
            )
            return
        self.notify(as_test.write_test(screen.detail, self.tasks, Path.cwd()), title="As test")

    def action_link(self) -> None:
        """l: the URL of the job, group or search shown, under ``skconsole serve``."""
        if self.serve_url is None:
            self.notify(
                "No URL: this console does not run under `skconsole serve` (links are the"
                " browser console's).",
                title="Link",
            )
            return
        at = self.navigator.place_shown()
        if at is None:
            self.notify("Nothing here to link to: open a job, a failure group or a search.")
            return
        url = link(self.serve_url, at)
        self.copy_to_clipboard(url)
        self.push_screen(LinkScreen(url, at))

    def action_connection(self) -> None:
        self.notify(clipboard.copy_connection(self, self.source.connection), title="Connection")

    # -- what the keys open (Navigator), the queue shown (QueueSwitch) ---------------------
    def action_open(self) -> None:
        self.navigator.open_selected()

    def action_navigate(self, name: str) -> None:
        """A key whose spec ``navigates``: the Navigator's method of its name."""
        getattr(self.navigator, name)()

    def action_queues(self) -> None:
        self.queue_switch.toggle()

    # -- operator actions (skconsole.ops, through ActionRunner) ----------------------------
    @property
    def connected(self) -> bool:
        return self.connection == "live"

    def action_operate(self, name: str) -> None:
        """Every write key: its operation (key registry) through the action runner."""
        op = registry.BY_ID[name].op
        if op is not None:
            here = Here(self.screen, self.current_scope(), self.snapshot, self.source)
            self.operator.press(op, here)

    def _after_action(self) -> None:
        for panel in self.screen.query(Panel):  # the marked jobs were acted on
            panel.clear_marks()
        self.request_refresh()
        self.cadences["failures"].request_soon()  # right after that refresh
        self.cadences["health"].request_soon()  # a vacuum or a cancel shows there
        self.screen.post_message(DataChanged(failures=True))  # a drill-down reads its own again

    def on_preview_ready(self, message: PreviewReady) -> None:
        self.operator.previewed(message.preview)

    def on_action_done(self, message: ActionDone) -> None:
        self.operator.finished(message.outcome)

    def on_action_failed(self, message: ActionFailed) -> None:
        self.operator.failed(message)

    # -- errors ------------------------------------------------------------------------------
    def report_error(self, what: str, exc: BaseException) -> None:
        text = first_line(str(exc), 160) or type(exc).__name__
        self.notify(f"{what}: {text}", title="Error", severity="error", timeout=10)

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        """A worker that raised past its own handling: report it, keep the console up."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.cadences.worker_failed(event.worker.group, event.worker.error)
            self.overview.worker_failed(event.worker.group, event.worker.error)
            if event.worker.group == "action":
                self.operator.busy = False
            self.report_error("internal error", event.worker.error)


#: What the console reads in the background, how often, and which of its handlers take it
#: (the slower ones, in this order, read right after a refresh once they are due).
CADENCES: tuple[Cadence[ConsoleApp], ...] = (
    Cadence(
        "refresh",
        reads.SNAPSHOT,
        lambda app: app.interval,
        ConsoleApp._show_snapshot,
        done=ConsoleApp._snapshot_read,
        error=ConsoleApp._refresh_failed,
        retry=lambda app, failures: backoff(failures, app.interval, MAX_BACKOFF_S),
    ),
    following(
        "refresh",
        "trends",
        reads.TRENDS,
        cadences.TRENDS_EVERY_S,
        ConsoleApp._show_trends,
        done=ConsoleApp._trends_read,
    ),
    following(
        "refresh",
        "failures",
        reads.FAILURE_GROUPS,
        cadences.FAILURES_EVERY_S,
        ConsoleApp._show_failures,
        done=ConsoleApp._failures_read,
        failing="could not read the failure groups",
    ),
    following(
        "refresh",
        "windows",
        reads.WINDOWS,
        cadences.WINDOWS_EVERY_S,
        ConsoleApp._show_windows,
        done=lambda app, windows, _ms: app._kept("windows", windows),
        failing="could not read the execution times",
    ),
    following(
        "refresh",
        "health",
        reads.HEALTH,
        cadences.HEALTH_EVERY_S,
        ConsoleApp._show_health,
        done=lambda app, health, _ms: app._kept("health", health),
        failing="could not read the queue health",
    ),
)
