"""Panel 6: registered worker processes and whether they are alive."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.tui.formatting import format_age, short_id
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.keyed_table import Column, Row, Tone
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
    COLUMNS = (
        Column("worker", "worker", 8),
        Column("host", "host", 18),
        Column("pid", "pid", 8, right=True),
        Column("state", "state", 15),
        Column("heartbeat", "heartbeat", 10, right=True),
        Column("concurrency", "slots", 6, right=True),
        Column("in_flight", "in flight", 9, right=True),
        Column("types", "types", 20, flex=True),
    )

    def rows(self, snapshot: Snapshot) -> Sequence[Row]:
        return [
            (
                str(w.worker_id),
                (
                    short_id(str(w.worker_id)),
                    w.host,
                    str(w.pid),
                    (w.state, _TONES.get(w.state, "")),
                    format_age(w.heartbeat_age_s),
                    str(w.concurrency),
                    str(w.in_flight),
                    ", ".join(w.task_types),
                ),
            )
            for w in snapshot.workers
        ]

    def tab_note(self, snapshot: Snapshot) -> str | None:
        return f"{len(snapshot.workers):,}"

    def summarize(self, snapshot: Snapshot) -> str:
        alive = sum(1 for w in snapshot.workers if w.state == "alive")
        trouble = sum(1 for w in snapshot.workers if w.state not in ("alive", "stopped"))
        text = f"{alive} alive"
        return f"{text} · {trouble} not answering" if trouble else text
