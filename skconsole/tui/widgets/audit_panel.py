"""Panel 7: the audit log: who did what (through which face), to how many jobs, with its
options, newest first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from skconsole.core.find_query import FindQuery
from skconsole.tui.formatting import fmt_ago
from skconsole.tui.model import AuditRow, Snapshot
from skconsole.tui.opening import Opening, job, search
from skconsole.tui.widgets.panel import Panel
from skconsole.views.table import Column, figure_column


class AuditPanel(Panel):
    scope = "audit"
    title = "Audit log"
    skconsole_tables_only = True
    COLUMNS: ClassVar[tuple[Column[AuditRow], ...]] = (
        figure_column("when", 12, lambda a, now: fmt_ago(a.at, now)),
        Column("who", "who", 28, cell=lambda a, _: a.who),
        Column("what", "what", 40, flex=True, cell=lambda a, _: a.what),
    )
    opens = "the jobs the action was on (a search; one job: its detail)"

    def items(self, snapshot: Snapshot) -> Sequence[AuditRow]:
        return snapshot.audit

    def row_key(self, item: AuditRow) -> str:
        return str(item.audit_id)

    def opening(self, key: str, snapshot: Snapshot) -> Opening | None:
        row = next((a for a in snapshot.audit if str(a.audit_id) == key), None)
        if row is None or row.jobs is None:
            return None
        if len(row.jobs.ids) == 1 and row.jobs == FindQuery(ids=row.jobs.ids):
            return job(str(row.jobs.ids[0]))
        return search(row.jobs.describe())
