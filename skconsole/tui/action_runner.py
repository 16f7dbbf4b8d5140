"""The console's operator actions: preview, confirm, execute, report — for any action spec.

The flow is the same for every action in ``skconsole.ops`` and every write key
(:class:`~skconsole.tui.operation.Operation`): its resolver turns the selection
into a target (or a refusal), a dialog asks for parameters when the key has
one, then the preview
counts the jobs and captures their ids (in a worker thread, through the data
source), the confirmation states the exact scope as the spec words it and
defaults to No (a purge asks for the count to be typed; a reversible action
asks nothing), the execution acts on the captured ids, and the outcome
("Requeued 1,279; 5 had changed state meanwhile ...") comes back as a
notification. A server action (vacuum a queue table, cancel a session's
statement) has one target named by its parameters: its confirmation shows that
target as the preview read it. Repeat presses are ignored briefly. The app owns one
:class:`ActionRunner` and forwards the flow's three messages to it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import psycopg
from textual.app import App

from skconsole.core.errors import ConnectError
from skconsole.tui.confirmations import confirmation
from skconsole.tui.messages import ActionDone, ActionFailed, PreviewReady
from skconsole.tui.model import ActionRequest, OutcomeInfo, PreviewInfo
from skconsole.tui.operation import Here, Operation, Pick, Question
from skconsole.tui.sentences import nothing_text, on_queue, outcome_text
from skconsole.tui.source import DataSource, SourceUnavailable

REPEAT_GUARD_S = 0.8  # repeat presses of a write key within this are ignored


def is_connection_error(exc: BaseException) -> bool:
    return isinstance(
        exc, SourceUnavailable | ConnectError | psycopg.OperationalError | psycopg.InterfaceError
    )


@dataclass(eq=False)
class ActionRunner:
    """One action at a time, from key press to outcome.

    ``connected`` says whether the console's data is live (writes wait while
    it is not); ``done`` runs after an action changed something (refresh);
    ``report_error`` shows an error the operator must read; ``queue`` names the queue shown
    when the console watches several (every sentence of an action then names it).
    """

    app: App[Any]
    source: DataSource
    _: KW_ONLY
    actor: str
    read_only: bool
    #: why no write is possible, when read-only
    read_only_note: Callable[[], str]
    connected: Callable[[], bool]
    done: Callable[[], None]
    report_error: Callable[[str, BaseException], None]
    queue: Callable[[], str | None] = lambda: None
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
            self.app.notify(self.read_only_note(), severity="warning")
            return False
        if not self.connected():
            self.app.notify(
                "Not connected: write actions wait until the server is back.", severity="warning"
            )
            return False
        return True

    def press(self, op: Operation, here: Here) -> None:
        """A write key: its target from the selection, its parameters (asked, when it has
        a dialog for them), then the preview."""
        picked = op.target(here)
        if picked is None:
            if op.missing is not None:
                self.app.notify(op.missing, severity="warning")
            return
        if isinstance(picked, str):  # a refusal: why this selection cannot be acted on
            self.app.notify(picked, severity="warning")
            return
        if op.ask is None:
            self.start(self._request(op, picked))
            return
        if not self.allowed((picked.action or op.action).name):
            return
        question: Question[Any] = op.ask(here, picked)
        self.app.push_screen(question.screen, lambda answer: self._asked(op, question, answer))

    def _asked(self, op: Operation, question: Question[Any], answer: object) -> None:
        picked = question.answer(answer)
        if picked is not None:
            self.start(self._request(op, picked), checked=True)

    def _request(self, op: Operation, picked: Pick) -> ActionRequest:
        action = picked.action or op.action
        params = picked.params if picked.params is not None else op.params
        return ActionRequest(
            action,
            picked.target,
            params if params is not None else action.default_params(),
            op.dialog,
            queue=self.queue(),
        )

    def start(self, request: ActionRequest, *, checked: bool = False) -> None:
        """Preview ``request``; ``checked``: already allowed."""
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
        if preview.count == 0:
            self.busy = False
            self.app.notify(nothing_text(preview.request))
            return
        dialog = confirmation(preview)
        if dialog is None:  # reversible
            self._execute(preview)
        else:
            self.app.push_screen(dialog, lambda ok: self._answered(preview, ok))

    def _answered(self, preview: PreviewInfo, ok: bool | None) -> None:
        if ok:
            self._execute(preview)
        else:
            self.busy = False
            self.app.notify(on_queue(preview.request, "Nothing was changed."), title="Cancelled")

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
        failed = on_queue(
            message.request, f"{message.request.action.wording.verb.capitalize()} failed"
        )
        if message.connection_lost:
            self.app.notify(
                f"{failed}: the connection was lost; nothing was confirmed.", severity="error"
            )
            self.done()
        else:
            self.report_error(failed, message.error)
