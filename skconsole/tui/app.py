"""The operations console: the App, its refresh loop and its actions.

Rules this module keeps (see DESIGN.md, "The console"):

- No database call on the UI thread. Every read and write goes through the
  data source inside a ``@work(thread=True, exclusive=True)`` worker; results
  come back as messages.
- The next refresh is scheduled only when the previous one has finished, so
  refreshes never pile up however slow the server is.
- A failed refresh keeps the last snapshot on screen, marks it stale and
  retries with back-off; write actions are dimmed until the server is back.
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
from textual.screen import ModalScreen, Screen
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from skconsole.tui import actions as registry
from skconsole.tui.actions import ActionSpec, spec_for
from skconsole.tui.commands import ActionCommands
from skconsole.tui.formatting import first_line, fmt_int, fmt_seconds, short_id
from skconsole.tui.messages import (
    RefreshFailed,
    SchemaFailed,
    SchemaReady,
    SnapshotReady,
    TrendsFailed,
    TrendsReady,
)
from skconsole.tui.model import (
    Snapshot,
    Trends,
)
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.help import HelpScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.main import MainScreen
from skconsole.tui.screens.schema_setup import SchemaSetupScreen
from skconsole.tui.source import DataSource
from skconsole.tui.widgets.failures_panel import FailuresPanel
from skconsole.tui.widgets.panel import Panel
from skconsole.tui.widgets.status_bar import StatusState
from skconsole.tui.write_actions import WriteActions, is_connection_error

INTERVALS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
MAX_BACKOFF_S = 10.0
TRENDS_EVERY_S = 20.0  # per-minute history: its own, slower cycle


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

    def start(self) -> None: ...

    def stop(self) -> None: ...


class ConsoleApp(WriteActions):
    """The console. ``source`` gives data; ``clock`` (epoch seconds) is injectable for tests."""

    CSS_PATH = "app.tcss"
    TITLE = "skconsole"
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
        self.attempt = 0
        self.error_text: str | None = None
        self.refresh_times_ms: deque[float] = deque(maxlen=1000)  # database reads (worker)
        self.apply_times_ms: deque[float] = deque(maxlen=1000)  # updating the widgets (UI)
        self.refresh_count = 0
        self._last_ok_at: float | None = None
        self._refreshing = False
        self._timer: Any = None
        self._pending: Snapshot | None = None
        self.trends: Trends | None = None
        self._trends_loading = False
        self._trends_timer: Any = None
        self._pending_trends: Trends | None = None
        self._action_busy = False
        self._bindings_connected = False
        self._last_press: dict[str, float] = {}
        self.main_screen = MainScreen()

    # -- screens ---------------------------------------------------------------------
    def get_default_screen(self) -> Screen[Any]:
        return self.main_screen

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
        self.request_refresh()
        self.request_trends()

    # -- status ----------------------------------------------------------------------
    def status_state(self) -> StatusState:
        engine_text = engine_state = None
        if self.engine is not None:
            engine_state = self.engine.state
            engine_text = (
                f"{engine_state} {self.engine.running_count}/{self.engine.concurrency}"
                f" · {fmt_int(self.engine.processed)} done"
            )
            error = getattr(self.engine, "error", None)
            if engine_state == "failed" and error:
                engine_text = f"failed: {error}"
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

    # -- the refresh loop ------------------------------------------------------------
    def request_refresh(self) -> None:
        """Start a refresh now unless one is running; cancels the scheduled one."""
        if self._refreshing or self.connection == "setup":
            return
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._refreshing = True
        self._refresh_worker()

    def _schedule(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.live_refresh:
            self._timer = self.set_timer(delay, self.request_refresh)

    @work(thread=True, exclusive=True, group="refresh", exit_on_error=False)
    def _refresh_worker(self) -> None:
        started = time.perf_counter()
        try:
            snapshot = self.source.snapshot()
        except Exception as exc:
            self.post_message(RefreshFailed(exc, is_connection_error(exc)))
            return
        self.post_message(SnapshotReady(snapshot, (time.perf_counter() - started) * 1000.0))

    def on_snapshot_ready(self, message: SnapshotReady) -> None:
        self._refreshing = False
        was = self.connection
        self.connection, self.attempt, self.error_text = "live", 0, None
        self.snapshot = message.snapshot
        self._last_ok_at = self.clock()
        self.refresh_count += 1
        self.refresh_times_ms.append(message.elapsed_ms)
        if was not in ("live", "connecting"):
            self.notify("Connection restored: the data is live again.", title="Reconnected")
            self.request_trends()
        if isinstance(self.screen, ModalScreen):
            self._pending = message.snapshot  # don't repaint under an open dialog
        else:
            self._apply(message.snapshot)
        self._status_changed()
        if not self.paused:
            self._schedule(self.interval)

    def on_refresh_failed(self, message: RefreshFailed) -> None:
        self._refreshing = False
        self.attempt += 1
        if message.connection_lost:
            self.connection, self.error_text = "reconnecting", None
        else:
            self.connection = "error"
            self.error_text = first_line(str(message.error), 80) or type(message.error).__name__
        if self.attempt == 1 and self.snapshot is not None:
            self.notify(
                "Lost the connection: the data on screen is from before; retrying."
                if message.connection_lost
                else f"Refresh failed: {self.error_text}",
                title="Stale data",
                severity="warning",
            )
        self._status_changed()
        if not self.paused:
            self._schedule(
                min(0.5 * 2 ** (self.attempt - 1), MAX_BACKOFF_S, max(self.interval, 1.0) * 5)
            )

    # -- the trends loop: per-minute history, read every TRENDS_EVERY_S ----------------
    def request_trends(self) -> None:
        if self._trends_loading or self.connection == "setup":
            return
        if self._trends_timer is not None:
            self._trends_timer.stop()
            self._trends_timer = None
        self._trends_loading = True
        self._trends_worker()

    @work(thread=True, exclusive=True, group="trends", exit_on_error=False)
    def _trends_worker(self) -> None:
        try:
            trends = self.source.trends()
        except Exception as exc:
            self.post_message(TrendsFailed(exc))
            return
        self.post_message(TrendsReady(trends))

    def on_trends_ready(self, message: TrendsReady) -> None:
        self._trends_loading = False
        self.trends = message.trends
        if isinstance(self.screen, ModalScreen):
            self._pending_trends = message.trends
        else:
            self.main_screen.show_trends(message.trends)
        self._schedule_trends()

    def on_trends_failed(self, _message: TrendsFailed) -> None:
        self._trends_loading = False  # the refresh loop reports the connection state
        self._schedule_trends()

    def _schedule_trends(self) -> None:
        if self.live_refresh and not self.paused:
            self._trends_timer = self.set_timer(TRENDS_EVERY_S, self.request_trends)

    def _apply(self, snapshot: Snapshot) -> None:
        started = time.perf_counter()
        self._pending = None
        self.main_screen.show_snapshot(snapshot)
        self.apply_times_ms.append((time.perf_counter() - started) * 1000.0)
        reload = getattr(self.screen, "reload", None)
        if callable(reload):
            reload()

    def apply_pending(self) -> None:
        """Called when a dialog closes: show what arrived while it was open."""
        if isinstance(self.screen, ModalScreen):
            return
        if self._pending is not None:
            self._apply(self._pending)
        if self._pending_trends is not None:
            self.main_screen.show_trends(self._pending_trends)
            self._pending_trends = None

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
        return self._allowed(spec)

    def _can_go_back(self) -> bool:
        if isinstance(self.screen, GroupJobsScreen | JobDetailScreen):
            return True
        panel = self._focused_panel()
        return panel is not None and (bool(panel.table.filter_text) or panel.filter_input.display)

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

    def _focused_panel(self) -> Panel | None:
        node = self.focused
        while node is not None:
            if isinstance(node, Panel):
                return node
            node = node.parent  # type: ignore[assignment]
        return None

    def action_filter(self) -> None:
        panel = self._focused_panel()
        if panel is None and isinstance(self.screen, MainScreen):
            panel = self.main_screen.panel(self.current_scope())
        if panel is not None:
            panel.open_filter()

    def action_leave(self) -> None:
        panel = self._focused_panel()
        if panel is not None and (panel.table.filter_text or panel.filter_input.display):
            panel.clear_filter()
        elif isinstance(self.screen, GroupJobsScreen | JobDetailScreen):
            self.pop_screen()
        self.refresh_bindings()

    def action_pause_refresh(self) -> None:
        self.paused = not self.paused
        if self.paused:
            for timer in (self._timer, self._trends_timer):
                if timer is not None:
                    timer.stop()
            self._timer = self._trends_timer = None
            self.notify("Refresh paused: the data will age until you press p again.")
        else:
            self.notify("Refresh resumed.")
            self.request_refresh()
            self.request_trends()
        self._status_changed()

    def action_refresh_now(self) -> None:
        self.request_refresh()
        self.request_trends()

    def _set_interval(self, step: int) -> None:
        index = min(range(len(INTERVALS)), key=lambda i: abs(INTERVALS[i] - self.interval))
        self.interval = INTERVALS[max(0, min(len(INTERVALS) - 1, index + step))]
        self.notify(f"Refreshing every {fmt_seconds(self.interval)}.")
        self._status_changed()
        if not self.paused and not self._refreshing and self.connected:
            self._schedule(self.interval)

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
        if isinstance(screen, JobDetailScreen) and screen.detail is not None:
            text = screen.detail.as_text()
            self.copy_to_clipboard(text)
            self.notify(
                f"Copied job {short_id(screen.detail.task_id)} ({len(text):,} characters: "
                "fields, payload and full error).",
                title="Copied",
            )

    def action_open(self) -> None:
        screen = self.screen
        if isinstance(screen, MainScreen):
            panel = screen.query_one(FailuresPanel)
            group = panel.group(panel.table.selected_key, self.snapshot)
            if group is not None:
                self.push_screen(GroupJobsScreen(group))
        elif isinstance(screen, GroupJobsScreen):
            task_id = screen.selected_job()
            if task_id is not None:
                self.push_screen(JobDetailScreen(task_id, screen.group.signature))

    # -- errors ------------------------------------------------------------------------------
    def report_error(self, what: str, exc: BaseException) -> None:
        text = first_line(str(exc), 160) or type(exc).__name__
        self.notify(f"{what}: {text}", title="Error", severity="error", timeout=10, markup=False)

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        """A worker that raised past its own handling: report it, keep the console up."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            if event.worker.group == "refresh":
                self._refreshing = False
                self.post_message(RefreshFailed(event.worker.error, False))
            if event.worker.group == "action":
                self._action_busy = False
            self.report_error("internal error", event.worker.error)
