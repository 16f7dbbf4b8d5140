"""Messages from worker threads to the UI (``post_message`` is thread-safe), and the
notice that the data changed (the poll loops' own are :class:`skconsole.tui.polling.PollLoop`'s)."""

from __future__ import annotations

from textual.message import Message

from skconsole.tui.model import ActionRequest, OutcomeInfo, PreviewInfo


class DataChanged(Message, bubble=False):
    """The data on screen changed: a snapshot was applied, new failure groups were
    read (``failures``), or an operator action ran (``failures`` too).

    The app posts it to the current screen (``app.screen.post_message``); the
    drill-down screens (a failure group's jobs, one job) read theirs again: a
    group's jobs only with the failure groups, on their slower cadence.
    """

    def __init__(self, *, failures: bool = False) -> None:
        super().__init__()
        self.failures = failures


class PreviewReady(Message):
    def __init__(self, preview: PreviewInfo) -> None:
        super().__init__()
        self.preview = preview


class ActionDone(Message):
    def __init__(self, outcome: OutcomeInfo) -> None:
        super().__init__()
        self.outcome = outcome


class ActionFailed(Message):
    def __init__(self, request: ActionRequest, error: BaseException, connection_lost: bool) -> None:
        super().__init__()
        self.request = request
        self.error = error
        self.connection_lost = connection_lost
