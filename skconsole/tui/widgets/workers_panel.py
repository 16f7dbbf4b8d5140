"""Panel 6: registered worker processes and whether they are alive."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from skconsole.read.stats import WorkerInfo
from skconsole.tui.formatting import format_age, short_id
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.keyed_table import Column, Tone
from skconsole.tui.widgets.panel import Panel

_TONES: dict[str, Tone] = {
    "alive": "good",
    "connection lost": "warn",
    "lease expiring": "warn",
    "unresponsive": "bad",
    "gone": "bad",
    "stopped": "muted",
}


class WorkersPanel(Panel):
    scope = "workers"
    title = "Workers"
    skconsole_tables_only = True
    COLUMNS: ClassVar[tuple[Column[WorkerInfo], ...]] = (
        Column("worker", "worker", 8, cell=lambda w, _: short_id(str(w.worker_id))),
        Column("host", "host", 18, cell=lambda w, _: w.host),
        Column("pid", "pid", 8, right=True, cell=lambda w, _: str(w.pid)),
        Column("state", "state", 15, cell=lambda w, _: (w.state, _TONES.get(w.state, ""))),
        Column(
            "heartbeat",
            "heartbeat",
            10,
            right=True,
            cell=lambda w, _: format_age(w.heartbeat_age_s),
        ),
        Column("concurrency", "slots", 6, right=True, cell=lambda w, _: str(w.concurrency)),
        Column("in_flight", "in flight", 9, right=True, cell=lambda w, _: str(w.in_flight)),
        Column("types", "types", 20, flex=True, cell=lambda w, _: ", ".join(w.task_types)),
    )

    def items(self, snapshot: Snapshot) -> Sequence[WorkerInfo]:
        return snapshot.workers

    def row_key(self, item: WorkerInfo) -> str:
        return str(item.worker_id)

    def tab_note(self, snapshot: Snapshot) -> str | None:
        return f"{len(snapshot.workers):,}"

    def summarize(self, snapshot: Snapshot) -> str:
        alive = sum(1 for w in snapshot.workers if w.state == "alive")
        trouble = sum(1 for w in snapshot.workers if w.state not in ("alive", "stopped"))
        text = f"{alive} alive"
        return f"{text} · {trouble} not answering" if trouble else text
