"""Panel 2: jobs being processed now, hung ones first; each with what is known of
its worker's liveness (sk_inflight_tasks: the one definition of "hung").

The state ("HUNG: silent for 95 s, ...") is what an operator reads this panel for,
so it comes right after the job: on an 80-column terminal the columns after it go
under the table's scrollbar, never the state's first words."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.read import InflightJob
from skconsole.tui.model import Snapshot
from skconsole.tui.opening import Opening, job
from skconsole.tui.widgets.panel import Panel, console_columns
from skconsole.views.inflight import COLUMNS


class InflightPanel(Panel):
    scope = "inflight"
    title = "In flight"
    COLUMNS = console_columns(COLUMNS)
    opens = "the running job"

    def items(self, snapshot: Snapshot) -> Sequence[InflightJob]:
        """Hung jobs first, then the longest running."""
        return sorted(
            snapshot.inflight, key=lambda r: (not r.hung, -(r.running_s or 0.0), str(r.task_id))
        )

    def row_key(self, item: InflightJob) -> str:
        return str(item.task_id)

    def opening(self, key: str, snapshot: Snapshot) -> Opening | None:
        return job(key)

    def tab_note(self, snapshot: Snapshot) -> str | None:
        hung = snapshot.hung_count
        return f"{len(snapshot.inflight):,}" + (f" · {hung} HUNG" if hung else "")

    def alarm(self, snapshot: Snapshot) -> bool:
        return snapshot.hung_count > 0

    def summarize(self, snapshot: Snapshot) -> str:
        hung = snapshot.hung_count
        text = f"{len(snapshot.inflight):,} running"
        return f"{text} · {hung} HUNG" if hung else text
