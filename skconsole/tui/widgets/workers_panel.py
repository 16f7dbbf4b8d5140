"""Panel 6: registered worker processes and whether they are alive."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.read import WorkerInfo
from skconsole.tui.model import Snapshot
from skconsole.tui.opening import Opening, OpenKind
from skconsole.tui.widgets.panel import Panel, console_columns
from skconsole.views.workers import COLUMNS, summary


class WorkersPanel(Panel):
    scope = "workers"
    title = "Workers"
    skconsole_tables_only = True
    COLUMNS = console_columns(COLUMNS)
    opens = "the jobs the worker runs (the in-flight panel, filtered)"

    def items(self, snapshot: Snapshot) -> Sequence[WorkerInfo]:
        return snapshot.workers

    def row_key(self, item: WorkerInfo) -> str:
        return str(item.worker_id)

    def opening(self, key: str, snapshot: Snapshot) -> Opening | None:
        worker = next((w for w in snapshot.workers if str(w.worker_id) == key), None)
        if worker is None:
            return None
        return Opening(OpenKind.FILTER, f"{worker.host} pid {worker.pid}", panel="inflight")

    def tab_note(self, snapshot: Snapshot) -> str | None:
        return f"{len(snapshot.workers):,}"

    def summarize(self, snapshot: Snapshot) -> str:
        return summary(snapshot.workers)
