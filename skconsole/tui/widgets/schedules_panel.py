"""Panel 8: periodic task types (their columns: :mod:`skconsole.views.schedules`)."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.read import ScheduleInfo
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.panel import TypesPanel, console_columns
from skconsole.views.schedules import COLUMNS


class SchedulesPanel(TypesPanel):
    scope = "schedules"
    title = "Schedules"
    skconsole_tables_only = True
    COLUMNS = console_columns(COLUMNS)
    opens = "the jobs of the schedule's type (a search)"

    def items(self, snapshot: Snapshot) -> Sequence[ScheduleInfo]:
        return snapshot.schedules

    def tab_note(self, snapshot: Snapshot) -> str | None:
        return f"{len(snapshot.schedules):,}"

    def alarm(self, snapshot: Snapshot) -> bool:
        """A schedule nobody can read, or whose ticks nobody takes."""
        return any(s.error is not None or s.late_s is not None for s in snapshot.schedules)

    def summarize(self, snapshot: Snapshot) -> str:
        rows = snapshot.schedules
        parts = [f"{len(rows):,} periodic types"]
        for count, what in (
            (sum(s.paused for s in rows), "paused"),
            (sum(s.late_s is not None for s in rows), "late"),
            (sum(s.error is not None for s in rows), "unreadable"),
        ):
            if count:
                parts.append(f"{count} {what}")
        return " · ".join(parts)
