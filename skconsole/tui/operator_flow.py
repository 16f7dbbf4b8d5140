"""The console's operator actions: preview, confirm, execute, report — for any action spec.

The flow is the same for every action in ``skconsole.ops``: the preview
counts the jobs and captures their ids (in a worker thread, through the data
source), the confirmation states the exact scope as the spec words it and
defaults to No (a purge asks for the count to be typed; a reversible action
asks nothing), the execution acts on the captured ids, and the outcome
("Requeued 1,279; 5 had changed state meanwhile ...") comes back as a
notification. A server action (vacuum a queue table, cancel a session's
statement) has one target named by its parameters: its confirmation shows that
target as the preview read it. Repeat presses are ignored briefly. The app owns one
:class:`OperatorFlow` and forwards the flow's three messages to it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from textual.app import App

from skconsole.core.errors import ConnectError
from skconsole.core.text import printable
from skconsole.ops import Confirm, JobAction, ServerAction, TypeAction, TypeSetting
from skconsole.ops.edit import EditParams, payload_diff
from skconsole.tui.formatting import fmt_bytes, format_age
from skconsole.tui.messages import ActionDone, ActionFailed, PreviewReady
from skconsole.tui.model import ActionRequest, OutcomeInfo, PreviewInfo
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.edit_confirm import EditConfirmScreen
from skconsole.tui.screens.purge_confirm import PurgeConfirmScreen
from skconsole.tui.source import DataSource, SourceUnavailable

REPEAT_GUARD_S = 0.8  # repeat presses of a write key within this are ignored
SERVER_HINT = (
    "Acts on exactly this target as shown: if by then it is gone or no longer qualifies (a"
    " session: another one with its pid, or blocking nothing) it is left alone."
    " y = yes · n, Esc or Enter = no"
)


def is_connection_error(exc: BaseException) -> bool:
    return isinstance(
        exc, SourceUnavailable | ConnectError | psycopg.OperationalError | psycopg.InterfaceError
    )


@dataclass(eq=False)
class OperatorFlow:
    """One action at a time, from key press to outcome.

    ``connected`` says whether the console's data is live (writes wait while
    it is not); ``done`` runs after an action changed something (refresh);
    ``report_error`` shows an error the operator must read.
    """

    app: App[Any]
    source: DataSource
    _: KW_ONLY
    actor: str
    read_only: bool
    connected: Callable[[], bool]
    done: Callable[[], None]
    report_error: Callable[[str, BaseException], None]
    busy: bool = field(default=False, init=False)
    _last_press: dict[str, float] = field(default_factory=dict, init=False)

    # -- starting --------------------------------------------------------------------
    def allowed(self, name: str) -> bool:
        """False (and a notice) when a write cannot run now; ignores quick repeats."""
        now = time.monotonic()
        last = self._last_press.get(name, 0.0)
        self._last_press[name] = now
        if now - last < REPEAT_GUARD_S or self.busy:
            return False
        if self.read_only:
            self.app.notify("Read-only mode: no changes are possible.", severity="warning")
            return False
        if not self.connected():
            self.app.notify(
                "Not connected: write actions wait until the server is back.", severity="warning"
            )
            return False
        return True

    def start(self, request: ActionRequest | None, *, checked: bool = False) -> None:
        """Preview ``request`` (None: nothing is selected); ``checked``: already allowed."""
        if request is None:
            self.app.notify("Select a row first.", severity="warning")
            return
        if not checked and not self.allowed(request.action.name):
            return
        self.busy = True
        self._in_thread(lambda: self._preview(request))

    def _in_thread(self, step: Callable[[], None]) -> None:
        """Run a step that talks to the database off the UI thread, one at a time."""
        self.app.run_worker(step, thread=True, exclusive=True, group="action", exit_on_error=False)

    def _preview(self, request: ActionRequest) -> None:  # worker thread
        try:
            preview = self.source.preview(request)
        except Exception as exc:
            self.app.post_message(ActionFailed(request, exc, is_connection_error(exc)))
            return
        self.app.post_message(PreviewReady(preview))

    # -- confirming ------------------------------------------------------------------
    def previewed(self, preview: PreviewInfo) -> None:
        request = preview.request
        action = request.action
        if preview.count == 0 and isinstance(action, TypeSetting):
            self.busy = False
            self.app.notify(f"Nothing changed: {request.target.label} already has these settings.")
            return
        if preview.count == 0 and isinstance(action, ServerAction):
            self.busy = False
            self.app.notify(
                f"Nothing to {_verb(action)}: {request.target.label} is gone or no longer"
                " qualifies.",
            )
            return
        if preview.count == 0:
            self.busy = False
            self.app.notify(
                f"Nothing to {action.wording.verb} for {request.target.label}:"
                " nothing there qualifies now.",
            )
            return
        answer = lambda ok: self._answered(preview, ok)  # noqa: E731
        if isinstance(request.params, EditParams):  # the change itself, as a diff
            self.app.push_screen(edit_confirmation(preview), answer)
        elif action.confirm is Confirm.NONE:  # reversible
            self._execute(preview)
        elif isinstance(action, ServerAction):
            self.app.push_screen(
                ConfirmScreen(
                    f"Confirm {_verb(action)}",
                    question(preview),
                    target_lines(preview.details),
                    f"Yes, {_verb(action)}",
                    hint=SERVER_HINT,
                ),
                answer,
            )
        elif action.confirm is Confirm.TYPE_COUNT:
            self.app.push_screen(PurgeConfirmScreen(question(preview), preview.count), answer)
        else:
            self.app.push_screen(
                ConfirmScreen(
                    f"Confirm {action.wording.verb}",
                    question(preview),
                    preview.sample[:5],
                    f"Yes, {action.wording.verb} {preview.count:,}",
                    f"For example ({min(len(preview.sample), 5)} of {preview.count:,}):",
                ),
                answer,
            )

    def _answered(self, preview: PreviewInfo, ok: bool | None) -> None:
        if ok:
            self._execute(preview)
        else:
            self.busy = False
            self.app.notify("Nothing was changed.", title="Cancelled")

    # -- executing -------------------------------------------------------------------
    def _execute(self, preview: PreviewInfo) -> None:
        self._in_thread(lambda: self._run(preview))

    def _run(self, preview: PreviewInfo) -> None:  # worker thread
        try:
            outcome = self.source.execute(preview, self.actor)
        except Exception as exc:
            self.app.post_message(ActionFailed(preview.request, exc, is_connection_error(exc)))
            return
        self.app.post_message(ActionDone(outcome))

    def finished(self, outcome: OutcomeInfo) -> None:
        self.busy = False
        self.app.notify(outcome_text(outcome), title="Done")
        self.done()

    def failed(self, message: ActionFailed) -> None:
        self.busy = False
        verb = message.request.action.wording.verb.capitalize()
        if message.connection_lost:
            self.app.notify(
                f"{verb} failed: the connection was lost; nothing was confirmed.", severity="error"
            )
            self.done()
        else:
            self.report_error(f"{verb} failed", message.error)


def _counted(n: int, label: str) -> str:
    """``n`` and the label's noun: "3 hung jobs", "1 hung job"."""
    if n == 1:
        label = label.replace("jobs", "job", 1)
    return f"{n:,} {label}"


def _verb(action: ServerAction[Any]) -> str:
    """ "vacuum", "cancel session": the action's name as words."""
    return action.wording.verb.replace("-", " ")


def _n(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "-"


def target_lines(details: dict[str, object]) -> list[str]:
    """A server action's target as its preview read it: a table's rows, size and vacuum;
    a session's user, application, state, transaction age, what it holds and its query."""
    d = details
    if "table" in d:
        last = d.get("last_vacuumed")
        size = d.get("table_bytes")
        lines = [
            f"table {d['table']}: {_n(d.get('live_rows'))} live rows, {_n(d.get('dead_rows'))}"
            f" dead, {fmt_bytes(size) if isinstance(size, int) else '-'}",
            "last vacuumed "
            + (f"{last:%Y-%m-%d %H:%M:%S %Z}" if isinstance(last, datetime) else "never"),
        ]
        if d.get("vacuum_running"):
            lines.append("a vacuum runs on it now: this one waits for it")
        if d.get("may_vacuum") is False:
            lines.append("this role may not vacuum it (its owner, a superuser or pg_maintain may)")
        return lines
    age = d.get("xact_age_s")
    held = d.get("horizon_age")
    blocks = d.get("blocks") or []
    holds = []
    if isinstance(blocks, list) and blocks:
        holds.append("blocks pid " + ", ".join(str(p) for p in blocks))
    if d.get("holds_horizon"):
        holds.append("holds the xmin horizon")
    lines = [
        f"pid {d.get('pid')} · user {d.get('user') or '-'} · application"
        f" {d.get('application') or '-'} · client {d.get('client') or '-'}",
        f"state {d.get('state') or 'hidden'} · transaction open"
        f" {format_age(age) if isinstance(age, float) else '-'}"
        + (f" · {_n(held)} transactions back" if isinstance(held, int) else "")
        + (f" · {'; '.join(holds)}" if holds else ""),
        f"query: {d.get('query') or '-'}",
    ]
    if str(d.get("state") or "").startswith("idle"):
        lines.append(
            "it runs no statement now: PostgreSQL ignores a cancel until it runs one"
            " (end it from its application, or idle_in_transaction_session_timeout)"
        )
    return lines


def question(preview: PreviewInfo) -> str:
    """The confirmation question, with the exact scope, worded by the action's spec."""
    request = preview.request
    target = request.target
    n = preview.count
    if isinstance(request.action, ServerAction):
        warning = f" {request.action.warning}" if request.action.warning else ""
        return f"{_verb(request.action).capitalize()} {target.label}?{warning}"
    if (
        target.ids and len(target.ids) == 1 and target.label.startswith("job ")
    ) or target.label.startswith("the "):
        scope = target.label
    elif target.group:
        scope = f"{n:,} {'job' if n == 1 else 'jobs'} in {target.label}"
    else:
        scope = _counted(n, target.label)
    warning = f" {request.action.warning}" if request.action.warning else ""
    return f"{request.action.wording.verb.capitalize()} {scope}{request.params.phrase()}?{warning}"


def edit_confirmation(preview: PreviewInfo) -> EditConfirmScreen:
    """The edit's confirmation: the scope, the payload diff, the priority change."""
    params = preview.request.params
    assert isinstance(params, EditParams)
    old, new = preview.details.get("old"), preview.details.get("new")
    old_payload = old.get("payload") if isinstance(old, dict) else None
    notes = []
    if isinstance(old, dict) and isinstance(new, dict) and old["priority"] != new["priority"]:
        notes.append(f"Priority: {old['priority']} -> {new['priority']}")
    if params.requeue:
        notes.append("Then posted again as Unprocessed, ready now.")
    return EditConfirmScreen(
        question(preview),
        payload_diff(old_payload, params.payload),
        notes,
        "Yes, save" + (" and run again" if params.requeue else ""),
    )


def outcome_text(outcome: OutcomeInfo) -> str:
    action = outcome.request.action
    params = outcome.request.params
    if isinstance(params, EditParams):
        label = outcome.request.target.label
        if not outcome.changed:
            return f"{label[:1].upper()}{label[1:]} changed state meanwhile and was left alone."
        again = ", posted again, ready now" if params.requeue else ""
        return f"Edited {label}{again}."
    done = action.wording.done.capitalize()
    if isinstance(action, ServerAction):
        label = outcome.request.target.label
        if outcome.changed:
            return f"{done} {label}."
        return f"Left alone: {label} changed meanwhile (gone, or no longer qualifies)."
    if isinstance(action, TypeAction):
        return f"{done} {outcome.request.target.label}."
    if isinstance(action, TypeSetting):
        return f"{done} {outcome.request.target.label}{outcome.request.params.phrase()}."
    text = f"{done} {outcome.changed:,}"
    if isinstance(action, JobAction):
        text += printable(action.summary(outcome.details))
    if outcome.skipped:
        text += f"; {outcome.skipped:,} had changed state meanwhile and were left alone"
    elif outcome.changed < outcome.requested:
        text += f" of {outcome.requested:,}"
    return text + "."
