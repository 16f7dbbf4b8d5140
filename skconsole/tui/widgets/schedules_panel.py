"""Panel 8: periodic task types: what each runs on, when it runs next, how its
latest job went, and how many of its jobs wait.

A definition this version cannot read (written by another one) is shown as
stored, in red, with the reason; a paused type says so instead of a next run,
and a due tick no worker took says how late it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from skconsole.core.status import JobStatus
from skconsole.read import ScheduleInfo
from skconsole.tui.formatting import fmt_count, format_age
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.jobs_panel import status_tone
from skconsole.tui.widgets.panel import TypesPanel
from skconsole.views.table import Cell, Column, figure_column, type_column


def short_reason(error: str) -> str:
    """Why a definition cannot be read, without the advice that follows the quoted
    value ("unknown time zone 'Mars/Base': use an IANA name ..." -> up to the quote)."""
    head, quote, _advice = error.partition("': ")
    return head + "'" if quote else error


def schedule_cell(s: ScheduleInfo) -> Cell:
    """The definition ("every 30s", "cron 0 3 * * * (Europe/Paris)"); one that cannot
    be read as stored, in red, with the reason (``status schedules`` prints it whole)."""
    if s.error is not None:
        return (f"{s.schedule} · {short_reason(s.error)}", "bad")
    return s.schedule


def next_run_cell(s: ScheduleInfo) -> Cell:
    """ "in 12s", or in colour: "paused", "late 5m 02s", "no worker schedules it",
    "unreadable"."""
    text = s.next_run_text
    if s.error is not None:
        return (text, "bad")
    if s.paused or s.late_s is not None or s.orphaned:
        return (text, "warn")
    return text


def last_run_cell(s: ScheduleInfo) -> Cell:
    """How long ago its latest job was posted, and that job's status: "4m 10s ago · Processed"."""
    if s.last_task_id is None:
        return ("none yet", "muted")
    age = f"{format_age(s.last_posted_age_s)} ago" if s.last_posted_age_s is not None else "-"
    if s.last_status is None:
        return (f"{age} · purged", "muted")
    return (f"{age} · {JobStatus.label_of(s.last_status)}", status_tone(s.last_status))


class SchedulesPanel(TypesPanel):
    scope = "schedules"
    title = "Schedules"
    skconsole_tables_only = True
    COLUMNS: ClassVar[tuple[Column[ScheduleInfo], ...]] = (
        type_column(22),
        Column("schedule", "schedule", 30, flex=True, cell=lambda s, _: schedule_cell(s)),
        figure_column("next", 13, lambda s, _: next_run_cell(s), label="next run"),
        Column("last", "last run", 24, cell=lambda s, _: last_run_cell(s)),
        figure_column("waiting", 8, lambda s, _: fmt_count(s.waiting, s.waiting_estimated)),
    )
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
