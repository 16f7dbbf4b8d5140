"""Panel 2: jobs being processed now, hung ones first; each with what is known of
its worker's liveness (sk_inflight_tasks: the one definition of "hung")."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.tui.formatting import format_age, short_id
from skconsole.tui.model import InflightRow, Snapshot
from skconsole.tui.widgets.keyed_table import Cell, Column, Row
from skconsole.tui.widgets.panel import Panel


def _state(r: InflightRow) -> Cell:
    if r.hung:
        return (f"HUNG: {r.note or r.hung_reason}", "bad")
    if r.state == "running":
        return ("ok", "muted")
    return (r.note or r.state, "warn")  # the note says it: "control connection lost, ..."


class InflightPanel(Panel):
    scope = "inflight"
    title = "In flight"
    number = 2
    COLUMNS = (
        Column("job", "job", 8),
        Column("type", "type", 15),
        Column("worker", "worker", 15),
        Column("running", "running", 7, right=True),
        Column("heartbeat", "heartbeat", 9, right=True),
        Column("attempt", "try", 3, right=True),
        Column("state", "state", 36, flex=True),
    )

    def rows(self, snapshot: Snapshot) -> Sequence[Row]:
        ordered = sorted(
            snapshot.inflight, key=lambda r: (not r.hung, -(r.running_s or 0.0), r.task_id)
        )
        return [
            (
                r.task_id,
                (
                    short_id(r.task_id),
                    r.task_type,
                    r.worker,
                    format_age(r.running_s),
                    format_age(r.heartbeat_age_s),
                    str(r.attempt),
                    _state(r),
                ),
            )
            for r in ordered
        ]

    def summarize(self, snapshot: Snapshot) -> str:
        hung = snapshot.hung_count
        text = f"{len(snapshot.inflight):,} running"
        return f"{text} · {hung} HUNG" if hung else text
