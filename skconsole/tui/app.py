"""The operations console: the App, its refresh loop and its actions.

Rules this module keeps (see DESIGN.md, "The console"):

- No database call on the UI thread. Every read and write goes through the
  data source inside a ``@work(thread=True, exclusive=True)`` worker; results
  come back as messages.
- Reads run in poll loops (:class:`~skconsole.tui.polling.PollLoop`): snapshots
  every ``interval``; failure groups every FAILURES_EVERY_S (they aggregate
  every failed row: off the refresh path, read again at once on entering their
  panel and right after the refresh that follows an action, their age in the
  panel's title); trends every TRENDS_EVERY_S; the queue tables' health every
  HEALTH_EVERY_S (activity and lock views, table sizes: it changes slowly; read
  again on entering its panel and after an action). The next read is scheduled only
  when the previous one has finished, so reads never pile up however slow the
  server is, and nothing is repainted under an open dialog. The slower
  loops follow the refresh loop: they read right after a snapshot was shown
  (the first one included, so they never hold up the first paint), in the gap
  before the next refresh rather than beside it.
- A failed refresh keeps the last snapshot on screen, marks it stale and
  retries with back-off; write actions are dimmed until the server is back.
- Screens get what they need passed in (the App as a
  :class:`~skconsole.tui.context.Console`) and hear of new data through
  :class:`~skconsole.tui.messages.DataChanged`; none imports this module.
- Destructive actions preview first, confirm with the exact scope (default
  No), and execute on the ids the preview captured.
"""

from __future__ import annotations

import getpass
import time
from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

from textual import on, work
from textual.app import App
from textual.binding import BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Input, TabbedContent
from textual.worker import Worker, WorkerState

from skconsole import ops
from skconsole.ops.edit import refusal
from skconsole.tui import actions as registry
from skconsole.tui import targets
from skconsole.tui.actions import ActionSpec, spec_for
from skconsole.tui.commands import ActionCommands
from skconsole.tui.formatting import first_line, fmt_int, fmt_seconds, short_id
from skconsole.tui.messages import (
    ActionDone,
    ActionFailed,
    DataChanged,
    PreviewReady,
    SchemaFailed,
    SchemaReady,
)
from skconsole.tui.model import (
    ActionRequest,
    FailureGroups,
    QueueHealth,
    Snapshot,
    Target,
    Trends,
)
from skconsole.tui.operator_flow import OperatorFlow, is_connection_error
from skconsole.tui.polling import PollLoop, backoff
from skconsole.tui.screens.edit_job import EditJobScreen
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.help import HelpScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.limit_type import LimitTypeScreen
from skconsole.tui.screens.main import MainScreen
from skconsole.tui.screens.purge_age import PurgeAgeScreen
from skconsole.tui.screens.schema_setup import SchemaSetupScreen
from skconsole.tui.source import DataSource
from skconsole.tui.widgets.failures_panel import FailuresPanel
from skconsole.tui.widgets.health_panel import HealthPanel
from skconsole.tui.widgets.panel import panel_of
from skconsole.tui.widgets.status_bar import StatusState

INTERVALS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
MAX_BACKOFF_S = 10.0
TRENDS_EVERY_S = 20.0  # per-minute history: its own, slower cycle
#: failure groups: their own, slower cycle (right after a refresh once this has passed)
FAILURES_EVERY_S = 10.0
FAILURES_FRESH_S = 2.0  # entering their panel reads them again once they are this old
#: queue-table health: its own, slower cycle (activity and lock views, table sizes)
HEALTH_EVERY_S = 10.0
HEALTH_FRESH_S = 5.0  # entering its panel reads it again once it is this old


class EngineControl(Protocol):
    """What the console needs of an embedded engine (skconsole.worker.thread.EngineThread)."""

    @property
    def state(self) -> str: ...

    @property
    def running_count(self) -> int: ...

    @property
    def processed(self) -> int: ...

    @property
    def concurrency(self) -> int: ...

    @property
    def error(self) -> str | None:
        """Why it failed (state "failed"), else None."""
        ...

    def start(self) -> None: ...

    def stop(self) -> None: ...


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
        setup_needed: list[str] | None = None,
        start_engine: bool = False,
        auto_refresh: bool = True,
    ) -> None:
        super().__init__()
        self.source = source
        self.read_only = source.read_only
        self.engine = engine
        self.clock = clock
        self.actor = actor or getpass.getuser()
        self.interval = refresh_interval
        self.paused = False
        self.setup_needed = list(setup_needed or [])
        self.start_engine = start_engine
        self.live_refresh = auto_refresh  # False: refresh only on demand (fixed-data scenes)
        self.snapshot: Snapshot | None = None
        self.connection = "setup" if self.setup_needed else "connecting"
        self.error_text: str | None = None
        self.refresh_times_ms: deque[float] = deque(maxlen=1000)  # database reads (worker)
        self.apply_times_ms: deque[float] = deque(maxlen=1000)  # updating the widgets (UI)
        self.refresh_count = 0
        self._last_ok_at: float | None = None
        self.trends: Trends | None = None
        self.failure_groups: FailureGroups | None = None
        self.failure_reads_ms: deque[float] = deque(maxlen=1000)  # their database reads
        self.health: QueueHealth | None = None
        self.refresh_loop: PollLoop[Snapshot] = PollLoop(
            self,
            "refresh",
            lambda: self.source.snapshot(),
            self._show_snapshot,
            every=lambda: self.interval,
            on_done=self._snapshot_read,
            on_error=self._refresh_failed,
            retry=lambda failures: backoff(failures, self.interval, MAX_BACKOFF_S),
            auto=auto_refresh,
            ready=self._can_read,
        )
        self.trends_loop: PollLoop[Trends] = PollLoop(
            self,
            "trends",
            lambda: self.source.trends(),
            self._show_trends,
            every=lambda: TRENDS_EVERY_S,
            on_done=self._trends_read,
            auto=auto_refresh,
            ready=self._can_read,
            follows=self.refresh_loop,
        )
        self.failures_loop: PollLoop[FailureGroups] = PollLoop(
            self,
            "failures",
            lambda: self.source.failure_groups(),
            self._show_failures,
            every=lambda: FAILURES_EVERY_S,
            on_done=self._failures_read,
            on_error=self._failures_failed,
            auto=auto_refresh,
            ready=self._can_read,
            follows=self.refresh_loop,
        )
        self.health_loop: PollLoop[QueueHealth] = PollLoop(
            self,
            "health",
            lambda: self.source.health(),
            self._show_health,
            every=lambda: HEALTH_EVERY_S,
            on_done=self._health_read,
            on_error=self._health_failed,
            auto=auto_refresh,
            ready=self._can_read,
            follows=self.refresh_loop,
        )
        self.loops: tuple[PollLoop[Any], ...] = (
            self.refresh_loop,
            self.failures_loop,
            self.trends_loop,
            self.health_loop,
        )
        self._bindings_connected = False
        self.operator = OperatorFlow(
            self,
            source,
            actor=self.actor,
            read_only=self.read_only,
            connected=lambda: self.connected,
            done=self._after_action,
            report_error=self.report_error,
        )
        self.main_screen = MainScreen(self.status_state, self.apply_pending)

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
        if self.setup_needed:
            self.push_screen(
                SchemaSetupScreen(self.source.description, self.setup_needed), self._on_setup_answer
            )
        else:
            self._go_live()

    def _go_live(self) -> None:
        """The schema is there: start the embedded engine (if asked) and the refresh loop."""
        if self.start_engine and self.engine is not None:
            self.engine.start()
        if self.snapshot is None:
            self.main_screen.set_loading(True)
        self.request_refresh()  # the slower loops follow: they read once it is shown

    # -- status ----------------------------------------------------------------------
    def status_state(self) -> StatusState:
        engine_text = engine_state = None
        if self.engine is not None:
            engine_state = self.engine.state
            engine_text = (
                f"{engine_state} {self.engine.running_count}/{self.engine.concurrency}"
                f" · {fmt_int(self.engine.processed)} done"
            )
            if engine_state == "failed" and self.engine.error:
                engine_text = f"failed: {self.engine.error}"
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
            engine=engine_text,
            engine_state=engine_state,
            degraded=self.snapshot is not None and self.snapshot.degraded,
        )

    def _status_changed(self) -> None:
        from skconsole.tui.widgets.status_bar import StatusBar

        state = self.status_state()
        stale = self.snapshot is not None and self.connection != "live"
        for screen in self.screen_stack:
            screen.set_class(stale, "-stale")
            for bar in screen.query(StatusBar):
                bar.show(state)
        if self.connected != self._bindings_connected:  # writes dim or light up
            self._bindings_connected = self.connected
            self.refresh_bindings()

    # -- the poll loops: snapshots every ``interval``, failures and trends slower ---------
    def request_refresh(self) -> None:
        """Refresh now unless a refresh is running; replaces the scheduled one."""
        self.refresh_loop.request()

    def request_trends(self) -> None:
        self.trends_loop.request()

    def request_failures(self) -> None:
        """Read the failure groups now unless they are being read (or nothing is shown yet:
        they follow the first snapshot)."""
        if self.snapshot is not None:
            self.failures_loop.request()

    def _can_read(self) -> bool:
        return self.connection != "setup"

    @property
    def attempt(self) -> int:
        """Failed refreshes in a row (shown while reconnecting)."""
        return self.refresh_loop.failures

    def on_poll_loop_done(self, message: PollLoop.Done) -> None:
        message.loop.finished(message.value, message.elapsed_ms)

    def on_poll_loop_failed(self, message: PollLoop.Failed) -> None:
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
            self.failures_loop.request_soon()  # right after this snapshot is shown
            self.trends_loop.request_soon()
            self.health_loop.request_soon()
        self._status_changed()

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
        self._status_changed()

    def _show_snapshot(self, snapshot: Snapshot) -> None:
        started = time.perf_counter()
        self.main_screen.show_snapshot(self._latest(snapshot))
        self.apply_times_ms.append((time.perf_counter() - started) * 1000.0)
        self.screen.post_message(DataChanged())  # a drill-down reads its own data again

    def _failures_read(self, groups: FailureGroups, _elapsed_ms: float) -> None:
        self.failure_groups = groups
        self.failure_reads_ms.append(groups.read_ms)
        if self.snapshot is not None:
            self.snapshot = self.snapshot.with_failures(groups)

    def _failures_failed(self, error: BaseException) -> None:
        """The refresh loop reports a lost connection; anything else is said once."""
        if self.failures_loop.failures == 1 and not is_connection_error(error):
            self.report_error("could not read the failure groups", error)

    def _show_failures(self, _groups: FailureGroups) -> None:
        if self.snapshot is not None:  # else the first snapshot shows them
            self.main_screen.show_failures(self.snapshot)
        self.screen.post_message(DataChanged(failures=True))  # a group's jobs too

    def _latest(self, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` with the latest reads of the slower cadences (failures, health)."""
        return snapshot.with_failures(self.failure_groups).with_health(self.health)

    def _health_read(self, read: QueueHealth, _elapsed_ms: float) -> None:
        self.health = read
        if self.snapshot is not None:
            self.snapshot = self.snapshot.with_health(read)

    def _health_failed(self, error: BaseException) -> None:
        """The refresh loop reports a lost connection; anything else is said once."""
        if self.health_loop.failures == 1 and not is_connection_error(error):
            self.report_error("could not read the queue health", error)

    def _show_health(self, _read: QueueHealth) -> None:
        if self.snapshot is not None:  # else the first snapshot shows it
            self.main_screen.show_health(self.snapshot)

    def _trends_read(self, trends: Trends, _elapsed_ms: float) -> None:
        self.trends = trends  # failures: the refresh loop reports the connection state

    def _show_trends(self, trends: Trends) -> None:
        self.main_screen.show_trends(trends)

    def apply_pending(self) -> None:
        """Called when a dialog closes: show what arrived while it was open."""
        for loop in self.loops:
            loop.flush()

    # -- schema setup ----------------------------------------------------------------
    def _on_setup_answer(self, yes: bool | None) -> None:
        if not yes:
            self.exit(
                4,
                return_code=4,
                message="The skconsole schema is missing: run `skconsole setup` (or answer yes) to create it.",
            )
            return
        self._setup_worker()

    @work(thread=True, exclusive=True, group="setup", exit_on_error=False)
    def _setup_worker(self) -> None:
        try:
            self.source.setup_schema()
        except Exception as exc:
            self.post_message(SchemaFailed(exc))
            return
        self.post_message(SchemaReady())

    def on_schema_ready(self, _message: SchemaReady) -> None:
        self.setup_needed = []
        self.connection = "connecting"
        self.notify("Schema created.", title="Setup")
        self._status_changed()
        self._go_live()

    def on_schema_failed(self, message: SchemaFailed) -> None:
        self.exit(
            4, return_code=4, message=f"Schema setup failed: {first_line(str(message.error))}"
        )

    # -- context and key checks --------------------------------------------------------
    def current_scope(self) -> str:
        screen = self.screen
        if isinstance(screen, MainScreen):
            return screen.current_scope()
        if isinstance(screen, GroupJobsScreen):
            return "jobs"
        if isinstance(screen, JobDetailScreen):
            return "job"
        return ""

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
        if spec.id == "parent" and not self._parent_shown():
            return False
        return self._allowed(spec)

    def _can_go_back(self) -> bool:
        if isinstance(self.screen, GroupJobsScreen | JobDetailScreen):
            return True
        panel = panel_of(self.focused)
        return panel is not None and (bool(panel.table.filter_text) or panel.filter_input.display)

    def _parent_shown(self) -> bool:
        screen = self.screen
        return isinstance(screen, JobDetailScreen) and screen.parent_id is not None

    def _allowed(self, spec: ActionSpec) -> bool | None:
        if spec.needs_engine and self.engine is None:
            return False
        if spec.needs_write:
            if self.read_only:
                return False
            if not self.connected:
                return None
        return True

    def palette_allows(self, spec: ActionSpec) -> bool:
        return self._allowed(spec) is not False and (
            spec.applies(self.current_scope())
            or spec.home is not None
            or not spec.scopes
            or (spec.scopes <= registry.MAIN and isinstance(self.screen, MainScreen))
        )

    async def run_from_palette(self, spec: ActionSpec) -> None:
        """Run an action chosen by name; a panel action first focuses its home panel."""
        if self._allowed(spec) is None:
            self.notify(
                "Not connected: write actions wait until the server is back.", severity="warning"
            )
            return
        if spec.applies(self.current_scope()):
            await self.run_action(spec.id)
            return
        if spec.home is None and not (
            isinstance(self.screen, MainScreen) and spec.scopes <= registry.MAIN
        ):
            self.notify(f"“{spec.description}” does not apply here.", severity="warning")
            return
        while not isinstance(self.screen, MainScreen) and len(self.screen_stack) > 1:
            self.pop_screen()
        if spec.home is not None:
            self.main_screen.show_panel(spec.home)
        # once the focus has moved, the action sees its panel's selection
        self.call_after_refresh(self.run_action, spec.id)

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    # -- simple actions ------------------------------------------------------------------
    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.read_only))

    def action_panel(self, scope: str) -> None:
        self.main_screen.show_panel(scope)
        if scope == FailuresPanel.scope:
            self._entered_failures()
        elif scope == HealthPanel.scope:
            self._entered_health()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == f"tab-{FailuresPanel.scope}":
            self._entered_failures()
        elif event.pane.id == f"tab-{HealthPanel.scope}":
            self._entered_health()

    def _entered_health(self) -> None:
        """Entering the health panel reads it again, unless fresh (its cadence is slow)."""
        read = self.health
        if self.snapshot is not None and (
            read is None or self.clock() - read.taken_at >= HEALTH_FRESH_S
        ):
            self.health_loop.request()

    def _entered_failures(self) -> None:
        """Entering the failures panel (key or click) reads the groups again, unless fresh."""
        groups = self.failure_groups
        if groups is None or self.clock() - groups.taken_at >= FAILURES_FRESH_S:
            self.request_failures()

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
        elif isinstance(self.screen, GroupJobsScreen | JobDetailScreen):
            self.pop_screen()
        self.refresh_bindings()

    def action_pause_refresh(self) -> None:
        self.paused = not self.paused
        if self.paused:
            for loop in self.loops:
                loop.pause()
            self.notify("Refresh paused: the data will age until you press p again.")
        else:
            self.notify("Refresh resumed.")
            for loop in self.loops:
                loop.resume()
        self._status_changed()

    def action_refresh_now(self) -> None:
        """Every cadence reads now: the slower ones right after this refresh."""
        for loop in self.loops:
            loop.request_soon()

    def _set_interval(self, step: int) -> None:
        index = min(range(len(INTERVALS)), key=lambda i: abs(INTERVALS[i] - self.interval))
        self.interval = INTERVALS[max(0, min(len(INTERVALS) - 1, index + step))]
        self.notify(f"Refreshing every {fmt_seconds(self.interval)}.")
        self._status_changed()
        if self.connected:  # while reconnecting, the back-off keeps its own pace
            self.refresh_loop.reschedule()

    def action_faster(self) -> None:
        self._set_interval(-1)

    def action_slower(self) -> None:
        self._set_interval(+1)

    def action_engine(self) -> None:
        engine = self.engine
        if engine is None:
            return
        if engine.state in ("running", "starting"):
            engine.stop()
            self.notify("Stopping the embedded engine: running jobs may finish first.")
        elif engine.state == "stopping":
            self.notify("The embedded engine is already stopping.")
        else:
            engine.start()
            self.notify("Starting the embedded engine.")
        self._status_changed()

    def action_copy(self) -> None:
        screen = self.screen
        if isinstance(screen, JobDetailScreen):
            text = screen.copy_text()
            if text is None:
                return
            self.copy_to_clipboard(text)
            self.notify(
                f"Copied job {short_id(screen.task_id)} ({len(text):,} characters: "
                "fields, payload and full error).",
                title="Copied",
            )

    def action_open(self) -> None:
        screen = self.screen
        if isinstance(screen, MainScreen):
            panel = screen.query_one(FailuresPanel)
            group = panel.group(panel.table.selected_key, self.snapshot)
            if group is not None:
                self.push_screen(GroupJobsScreen(group, self))
        elif isinstance(screen, GroupJobsScreen):
            task_id = screen.selected_job()
            if task_id is not None:
                workers = self.snapshot.workers if self.snapshot is not None else ()
                self.push_screen(
                    JobDetailScreen(task_id, self, screen.group.signature, workers=workers)
                )

    def action_parent(self) -> None:
        """Open the job that posted the one shown (Esc comes back)."""
        screen = self.screen
        if isinstance(screen, JobDetailScreen) and screen.parent_id is not None:
            workers = self.snapshot.workers if self.snapshot is not None else ()
            self.push_screen(JobDetailScreen(screen.parent_id, self, workers=workers))

    # -- operator actions (skconsole.ops, through OperatorFlow) ----------------------------
    @property
    def connected(self) -> bool:
        return self.connection == "live"

    def _operate(self, action: ops.OperatorAction, target: Target | None, **kw: Any) -> None:
        params = action.params_type(**kw) if kw else action.default_params()
        self.operator.start(None if target is None else ActionRequest(action, target, params))

    def _selected(self, action: ops.OperatorAction) -> Target | None:
        return targets.selected(action, self.screen, self.current_scope(), self.snapshot)

    def action_requeue(self) -> None:
        self._operate(ops.REQUEUE, self._selected(ops.REQUEUE))

    def action_requeue_shown(self) -> None:
        if isinstance(self.screen, GroupJobsScreen):
            target = targets.shown_jobs(self.screen)
            if target is None:
                self.notify("No jobs shown.", severity="warning")
            else:
                self._operate(ops.REQUEUE, target)

    def action_bump(self) -> None:
        self._operate(ops.BUMP, self._selected(ops.BUMP), to=0)

    def action_cancel(self) -> None:
        self._operate(ops.CANCEL, self._selected(ops.CANCEL))

    def action_edit(self) -> None:
        """Open the editor for the job shown (waiting or failed only), then preview and confirm."""
        screen = self.screen
        if not isinstance(screen, JobDetailScreen) or screen.detail is None:
            return
        refused = refusal(screen.detail.task_id, screen.detail.status)
        if refused is not None:
            self.notify(refused, severity="warning")
        elif self.operator.allowed(ops.EDIT.name):
            target = targets.selected(ops.EDIT, screen, self.current_scope(), self.snapshot)
            self.push_screen(
                EditJobScreen(screen.detail),
                lambda params: self._edit_saved(target, params),
            )

    def _edit_saved(self, target: Target | None, params: ops.EditParams | None) -> None:
        if params is not None and target is not None:
            self.operator.start(ActionRequest(ops.EDIT, target, params), checked=True)

    def action_reap(self) -> None:
        self._operate(ops.REAP, Target(label="hung jobs"))

    def action_pause_type(self) -> None:
        row = targets.selected_type(self.screen, self.snapshot)
        if row is not None:
            target = Target(label=f"type `{row.task_type}`", task_type=row.task_type)
            self._operate(ops.RESUME if row.paused else ops.PAUSE, target)

    def action_limit_type(self) -> None:
        row = targets.selected_type(self.screen, self.snapshot)
        if row is None:
            self.notify("Select a task type first.", severity="warning")
        elif self.operator.allowed(ops.LIMIT.name):
            task_type = row.task_type
            self.push_screen(
                LimitTypeScreen(task_type, row.limit),
                lambda params: self._limit_type(task_type, params),
            )

    def _limit_type(self, task_type: str, params: ops.LimitParams | None) -> None:
        if params is not None:
            target = Target(label=f"the type `{task_type}`", task_type=task_type)
            self.operator.start(ActionRequest(ops.LIMIT, target, params), checked=True)

    def action_purge(self) -> None:
        if self.operator.allowed(ops.PURGE.name):
            self.push_screen(PurgeAgeScreen(), self._purge_older_than)

    def _purge_older_than(self, seconds: float | None) -> None:
        if seconds is not None:
            label = f"finished results older than {fmt_seconds(seconds)}"
            request = ActionRequest(
                ops.PURGE, Target(label=label, older_than_s=seconds), ops.PurgeParams()
            )
            self.operator.start(request, checked=True)

    def action_vacuum(self) -> None:
        """VACUUM (ANALYZE) the table selected on the health panel."""
        table = targets.selected_table(self.screen, self.snapshot)
        if table is None:
            self.operator.start(None)
        else:
            self._operate(ops.VACUUM, Target(label=table.table), table=table.table)

    def action_cancel_session(self) -> None:
        """Cancel the statement of the session selected on the health panel. Its start time
        tells it from a later session with its pid: one hidden (another role's, without
        pg_read_all_stats) cannot be told apart, so it is refused here as by the CLI."""
        session = targets.selected_session(self.screen, self.snapshot)
        if session is None:
            self.notify("Select a session (or a lock wait) first.", severity="warning")
        elif session.backend_start is None:
            self.notify(
                f"pid {session.pid} belongs to another role and its start time is hidden"
                " (needs pg_read_all_stats): it cannot be told from a later session with its pid.",
                severity="warning",
            )
        else:
            self._operate(
                ops.CANCEL_SESSION,
                Target(label=targets.session_label(session)),
                pid=session.pid,
                backend_start=session.backend_start,
            )

    def _after_action(self) -> None:
        self.request_refresh()
        self.failures_loop.request_soon()  # right after that refresh
        self.health_loop.request_soon()  # a vacuum or a cancel shows there
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
            for loop in self.loops:
                if event.worker.group == loop.name:
                    loop.failed(event.worker.error)
            if event.worker.group == "action":
                self.operator.busy = False
            self.report_error("internal error", event.worker.error)
