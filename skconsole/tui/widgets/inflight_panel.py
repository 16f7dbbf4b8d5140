"""Panel 2: jobs being processed now, hung ones first; each with what is known of
its worker's liveness (sk_inflight_tasks: the one definition of "hung")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from skconsole.read.stats import InflightJob
from skconsole.tui.formatting import format_age, short_id
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.keyed_table import Cell, Column
from skconsole.tui.widgets.panel import Panel


def worker_text(j: InflightJob) -> str:
    """The job's worker as "host pid N", or "-" when no owner is recorded."""
    return f"{j.worker_host} pid {j.worker_pid}" if j.worker_host else "-"


def _state(r: InflightJob) -> Cell:
    if r.hung:
        return (f"HUNG: {r.note or r.hung_reason}", "bad")
    if r.state == "running":
        return ("ok", "muted")
    if r.state == "cancel requested, still running":  # the handler ignores the cancel
        return (r.note or r.state, "bad")
    return (r.note or r.state, "warn")  # the note says it: "control connection lost, ..."


class InflightPanel(Panel):
    scope = "inflight"
    title = "In flight"
    COLUMNS: ClassVar[tuple[Column[InflightJob], ...]] = (
        Column("job", "job", 8, cell=lambda r, _: short_id(str(r.task_id))),
        Column("type", "type", 15, cell=lambda r, _: r.task_type),
        Column("worker", "worker", 15, cell=lambda r, _: worker_text(r)),
        Column("running", "running", 7, right=True, cell=lambda r, _: format_age(r.running_s)),
        Column(
            "heartbeat", "heartbeat", 9, right=True, cell=lambda r, _: format_age(r.heartbeat_age_s)
        ),
        Column("attempt", "try", 3, right=True, cell=lambda r, _: str(r.attempt)),
        Column("state", "state", 36, flex=True, cell=lambda r, _: _state(r)),
    )

    def items(self, snapshot: Snapshot) -> Sequence[InflightJob]:
        """Hung jobs first, then the longest running."""
        return sorted(
            snapshot.inflight, key=lambda r: (not r.hung, -(r.running_s or 0.0), str(r.task_id))
        )

    def row_key(self, item: InflightJob) -> str:
        return str(item.task_id)

    def tab_note(self, snapshot: Snapshot) -> str | None:
        hung = snapshot.hung_count
        return f"{len(snapshot.inflight):,}" + (f" · {hung} HUNG" if hung else "")

    def summarize(self, snapshot: Snapshot) -> str:
        hung = snapshot.hung_count
        text = f"{len(snapshot.inflight):,} running"
        return f"{text} · {hung} HUNG" if hung else text
