"""Panel 7: the audit log: who did what to how many jobs, newest first."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.tui.formatting import fmt_ago, fmt_int
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.keyed_table import Column, Row
from skconsole.tui.widgets.panel import Panel


class AuditPanel(Panel):
    scope = "audit"
    title = "Audit log"
    COLUMNS = (
        Column("when", "when", 12, right=True),
        Column("who", "who", 24),
        Column("action", "action", 10),
        Column("count", "jobs", 10, right=True),
        Column("selection", "selection", 30, flex=True),
    )

    def rows(self, snapshot: Snapshot) -> Sequence[Row]:
        now = snapshot.taken_at
        return [
            (
                str(a.audit_id),
                (
                    fmt_ago(a.at, now),
                    f"{a.user}@{a.host}",
                    (a.action, "accent"),
                    fmt_int(a.count),
                    a.selection,
                ),
            )
            for a in snapshot.audit
        ]
