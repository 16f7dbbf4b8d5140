"""Messages from worker threads to the UI (``post_message`` is thread-safe)."""

from __future__ import annotations

from textual.message import Message

from skconsole.tui.model import ActionRequest, OutcomeInfo, PreviewInfo, Snapshot, Trends


class SnapshotReady(Message):
    def __init__(self, snapshot: Snapshot, elapsed_ms: float) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.elapsed_ms = elapsed_ms


class RefreshFailed(Message):
    def __init__(self, error: BaseException, connection_lost: bool) -> None:
        super().__init__()
        self.error = error
        self.connection_lost = connection_lost


class TrendsReady(Message):
    def __init__(self, trends: Trends) -> None:
        super().__init__()
        self.trends = trends


class TrendsFailed(Message):
    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


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


class SchemaReady(Message):
    """The schema was set up from the console; live refresh can start."""


class SchemaFailed(Message):
    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error
