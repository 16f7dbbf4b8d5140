"""The console's write actions: choose a target, preview, confirm, execute, report.

Every one goes through the data source (and so through ``skconsole.ops``) in a
worker thread: the preview counts the jobs and captures their ids, the
confirmation states the exact scope and defaults to No, the execution acts on
the captured ids, and the outcome ("Requeued 1,279; 5 had changed state
meanwhile ...") comes back as a notification. Pause and resume, being
reversible, skip the confirmation. Repeat presses are ignored briefly.
"""

from __future__ import annotations

import time

import psycopg
from textual import work
from textual.app import App

from skconsole.errors import ConnectError
from skconsole.tui.formatting import fmt_seconds, short_id
from skconsole.tui.messages import ActionDone, ActionFailed, PreviewReady
from skconsole.tui.model import (
    ActionRequest,
    DepthRow,
    OutcomeInfo,
    PreviewInfo,
    Snapshot,
    Target,
)
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.main import MainScreen
from skconsole.tui.screens.purge_age import PurgeAgeScreen
from skconsole.tui.screens.purge_confirm import PurgeConfirmScreen
from skconsole.tui.source import DataSource, SourceUnavailable
from skconsole.tui.widgets.failures_panel import FailuresPanel
from skconsole.tui.widgets.panel import Panel

FAILED_STATUSES = (4, 5, 6)  # Error (retry scheduled), Faulted, Fatal
WAITING_STATUSES = (1, 4)  # Unprocessed, Error (backing off)
REPEAT_GUARD_S = 0.8  # repeat presses of a write key within this are ignored

VERBS = {  # kind -> (verb, past tense)
    "requeue": ("Requeue", "Requeued"),
    "bump": ("Bump", "Bumped"),
    "cancel": ("Cancel", "Cancelled"),
    "reap": ("Reap", "Reaped"),
    "purge": ("Purge", "Purged"),
    "pause": ("Pause", "Paused"),
    "resume": ("Resume", "Resumed"),
}


def is_connection_error(exc: BaseException) -> bool:
    return isinstance(
        exc, SourceUnavailable | ConnectError | psycopg.OperationalError | psycopg.InterfaceError
    )


class WriteActions(App[int]):
    """The write half of :class:`skconsole.tui.app.ConsoleApp` (which provides the state below)."""

    source: DataSource
    read_only: bool
    actor: str
    snapshot: Snapshot | None
    main_screen: MainScreen
    connection: str
    _action_busy: bool
    _last_press: dict[str, float]

    @property
    def connected(self) -> bool:
        return self.connection == "live"

    def current_scope(self) -> str:
        raise NotImplementedError

    def request_refresh(self) -> None:
        raise NotImplementedError

    def report_error(self, what: str, exc: BaseException) -> None:
        raise NotImplementedError

    def action_requeue(self) -> None:
        self._start("requeue", self._target("requeue"))

    def action_requeue_shown(self) -> None:
        screen = self.screen
        if not isinstance(screen, GroupJobsScreen):
            return
        panel = screen.query_one(Panel)
        ids = tuple(panel.table.visible_keys)
        if not ids:
            self.notify("No jobs shown.", severity="warning")
            return
        filt = panel.table.filter_text
        label = (
            f"the {len(ids):,} jobs shown"
            + (f" (filter “{filt}”)" if filt else "")
            + f" in group `{screen.group.signature}`"
        )
        self._start("requeue", Target(label=label, ids=ids, group=screen.group.key))

    def action_bump(self) -> None:
        self._start("bump", self._target("bump"), priority=0)

    def action_cancel(self) -> None:
        self._start("cancel", self._target("cancel"))

    def action_reap(self) -> None:
        self._start("reap", Target(label="hung jobs"))

    def action_pause_type(self) -> None:
        row = self._selected_type()
        if row is None:
            return
        kind = "resume" if row.paused else "pause"
        self._start(kind, Target(label=f"type `{row.task_type}`", task_type=row.task_type))

    def action_purge(self) -> None:
        if self._guard("purge"):
            self.push_screen(PurgeAgeScreen(), self._on_purge_age)

    def _on_purge_age(self, seconds: float | None) -> None:
        if seconds is None:
            return
        age = fmt_seconds(seconds)
        label = f"finished results older than {age}"
        self._start("purge", Target(label=label, older_than_s=seconds), guard=False)

    def _selected_type(self) -> DepthRow | None:
        if not isinstance(self.screen, MainScreen) or self.snapshot is None:
            return None
        key = self.main_screen.panel("depth").table.selected_key
        return next((d for d in self.snapshot.depth if d.task_type == key), None)

    def _target(self, kind: str) -> Target | None:
        """What the selection on screen means for ``kind``; None when nothing is selected."""
        screen = self.screen
        scope = self.current_scope()
        if isinstance(screen, JobDetailScreen):
            d = screen.detail
            if d is None:
                return None
            return Target(
                label=f"job {short_id(d.task_id)} ({d.task_type}, {d.status})", ids=(d.task_id,)
            )
        if isinstance(screen, GroupJobsScreen):
            task_id = screen.selected_job()
            if task_id is None or screen.jobs is None:
                return None
            job = next((j for j in screen.jobs.jobs if j.task_id == task_id), None)
            what = f" ({job.task_type}, {job.status})" if job else ""
            return Target(label=f"job {short_id(task_id)}{what}", ids=(task_id,))
        if scope == "failures":
            panel = self.main_screen.query_one(FailuresPanel)
            group = panel.group(panel.table.selected_key, self.snapshot)
            if group is None:
                return None
            return Target(label=f"group `{group.signature}`", group=group.key)
        if scope == "depth":
            row = self._selected_type()
            if row is None:
                return None
            if kind == "requeue":
                return Target(
                    label=f"failed jobs of type `{row.task_type}`",
                    task_type=row.task_type,
                    statuses=FAILED_STATUSES,
                )
            return Target(
                label=f"waiting jobs of type `{row.task_type}`",
                task_type=row.task_type,
                statuses=WAITING_STATUSES,
            )
        return None

    def _guard(self, kind: str) -> bool:
        """False (and a notice) when a write cannot run now; ignores quick repeats."""
        now = time.monotonic()
        last = self._last_press.get(kind, 0.0)
        self._last_press[kind] = now
        if now - last < REPEAT_GUARD_S or self._action_busy:
            return False
        if self.read_only:
            self.notify("Read-only mode: no changes are possible.", severity="warning")
            return False
        if not self.connected:
            self.notify(
                "Not connected: write actions wait until the server is back.", severity="warning"
            )
            return False
        return True

    def _start(
        self, kind: str, target: Target | None, *, priority: int | None = None, guard: bool = True
    ) -> None:
        if target is None:
            self.notify("Select a row first.", severity="warning")
            return
        if guard and not self._guard(kind):
            return
        self._action_busy = True
        self._preview_worker(ActionRequest(kind, target, priority))

    @work(thread=True, exclusive=True, group="action", exit_on_error=False)
    def _preview_worker(self, request: ActionRequest) -> None:
        try:
            preview = self.source.preview(request)
        except Exception as exc:
            self.post_message(ActionFailed(request, exc, is_connection_error(exc)))
            return
        self.post_message(PreviewReady(preview))

    def on_preview_ready(self, message: PreviewReady) -> None:
        preview = message.preview
        request = preview.request
        verb = VERBS[request.kind][0]
        if preview.count == 0:
            self._action_busy = False
            self.notify(f"Nothing to {verb.lower()}: no {request.target.label} match now.")
            return
        if request.kind in ("pause", "resume"):  # reversible: no confirmation
            self._execute_worker(preview)
            return
        question = describe(preview)
        if request.kind == "purge":
            self.push_screen(
                PurgeConfirmScreen(question, preview.count), lambda ok: self._on_answer(preview, ok)
            )
            return
        self.push_screen(
            ConfirmScreen(
                f"Confirm {verb.lower()}",
                question,
                preview.sample[:5],
                f"Yes, {verb.lower()} {preview.count:,}",
                f"For example ({min(len(preview.sample), 5)} of {preview.count:,}):",
            ),
            lambda ok: self._on_answer(preview, ok),
        )

    def _on_answer(self, preview: PreviewInfo, ok: bool | None) -> None:
        if ok:
            self._execute_worker(preview)
        else:
            self._action_busy = False
            self.notify("Nothing was changed.", title="Cancelled")

    @work(thread=True, exclusive=True, group="action", exit_on_error=False)
    def _execute_worker(self, preview: PreviewInfo) -> None:
        try:
            outcome = self.source.execute(preview, self.actor)
        except Exception as exc:
            self.post_message(ActionFailed(preview.request, exc, is_connection_error(exc)))
            return
        self.post_message(ActionDone(outcome))

    def on_action_done(self, message: ActionDone) -> None:
        self._action_busy = False
        self.notify(outcome_text(message.outcome), title="Done")
        self.request_refresh()
        reload = getattr(self.screen, "reload", None)
        if callable(reload):
            reload()

    def on_action_failed(self, message: ActionFailed) -> None:
        self._action_busy = False
        verb = VERBS[message.request.kind][0]
        if message.connection_lost:
            self.notify(
                f"{verb} failed: the connection was lost; nothing was confirmed.", severity="error"
            )
            self.request_refresh()
        else:
            self.report_error(f"{verb} failed", message.error)


def describe(preview: PreviewInfo) -> str:
    """The confirmation question, with the exact scope."""
    request = preview.request
    target = request.target
    n = preview.count
    jobs = "job" if n == 1 else "jobs"
    if request.kind == "purge":
        return f"Purge {n:,} {target.label}? They are deleted for ever."
    if request.kind == "reap":
        return (
            f"Reap {n:,} hung {jobs}? Each goes back to the queue, or is parked as Faulted "
            "past its type's attempts."
        )
    verb = VERBS[request.kind][0]
    if (
        target.ids and len(target.ids) == 1 and target.label.startswith("job ")
    ) or target.label.startswith("the "):
        scope = target.label
    else:
        scope = f"{n:,} {jobs} in {target.label}" if target.group else f"{n:,} {target.label}"
    extra = " to priority 0 (the front of the queue)" if request.kind == "bump" else ""
    tail = " They will not run." if request.kind == "cancel" else ""
    return f"{verb} {scope}{extra}?{tail}"


def outcome_text(outcome: OutcomeInfo) -> str:
    done = VERBS[outcome.request.kind][1]
    text = f"{done} {outcome.changed:,}"
    if outcome.request.kind in ("pause", "resume"):
        return f"{done} {outcome.request.target.label}."
    if outcome.skipped:
        text += f"; {outcome.skipped:,} had changed state meanwhile and were left alone"
    elif outcome.changed < outcome.requested:
        text += f" of {outcome.requested:,}"
    return text + "."
