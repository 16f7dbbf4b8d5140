"""The schedules view: periodic task types, what each runs on, when it runs next, how
its latest job went, and how many of its jobs wait.

A definition this version cannot read (written by another one) is shown as
stored, in red, with the reason; a paused type says so instead of a next run,
and a due tick no worker took says how late it is. The console's panel 8 and
``skconsole status schedules`` draw these columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from skconsole import read
from skconsole.core.durations import format_age
from skconsole.core.figures import fmt_count
from skconsole.core.json_types import JsonObject
from skconsole.core.status import JobStatus
from skconsole.read.query import Conn
from skconsole.views.failures import status_tone
from skconsole.views.registry import Table, View, ViewArgs
from skconsole.views.table import Cell, Column, Face, figure_column, type_column


def short_reason(error: str) -> str:
    """Why a definition cannot be read, without the advice that follows the quoted
    value ("unknown time zone 'Mars/Base': use an IANA name ..." -> up to the quote)."""
    head, quote, _advice = error.partition("': ")
    return head + "'" if quote else error


def schedule_cell(s: read.ScheduleInfo) -> Cell:
    """The definition ("every 30s", "cron 0 3 * * * (Europe/Paris)"); one that cannot
    be read as stored, in red, with the reason (``status schedules`` prints it whole)."""
    if s.error is not None:
        return (f"{s.schedule} · {short_reason(s.error)}", "bad")
    return s.schedule


def next_run_cell(s: read.ScheduleInfo) -> Cell:
    """ "in 12s", or in colour: "paused", "late 5m 02s", "no worker schedules it",
    "unreadable"."""
    text = s.next_run_text
    if s.error is not None:
        return (text, "bad")
    if s.paused or s.late_s is not None or s.orphaned:
        return (text, "warn")
    return text


def last_run_cell(s: read.ScheduleInfo) -> Cell:
    """How long ago its latest job was posted, and that job's status: "4m 10s ago · Processed"."""
    if s.last_task_id is None:
        return ("none yet", "muted")
    age = f"{format_age(s.last_posted_age_s)} ago" if s.last_posted_age_s is not None else "-"
    if s.last_status is None:
        return (f"{age} · purged", "muted")
    return (f"{age} · {JobStatus.label_of(s.last_status)}", status_tone(s.last_status))


COLUMNS: tuple[Column[read.ScheduleInfo], ...] = (
    type_column(22),
    Column("schedule", "schedule", 30, flex=True, min_width=30, cell=lambda s, _: schedule_cell(s)),
    figure_column("next", 13, lambda s, _: next_run_cell(s), label="next run", priority=1),
    Column("last", "last run", 24, cell=lambda s, _: last_run_cell(s), priority=2),
    Column(
        "job",
        "job id",
        cell=lambda s, _: str(s.last_task_id) if s.last_task_id else "-",
        priority=6,
        faces=Face.CLI,
    ),
    figure_column("waiting", 8, lambda s, _: fmt_count(s.waiting, s.waiting_estimated), priority=4),
    Column("missed", "missed", cell=lambda s, _: s.missed, priority=5, faces=Face.CLI),
)


@dataclass(frozen=True)
class Schedules:
    schedules: list[read.ScheduleInfo]

    def as_dict(self) -> JsonObject:
        return {"schedules": [r.as_dict() for r in self.schedules]}


def _notes(s: Schedules) -> Sequence[str]:
    """A definition that cannot be read, with its whole reason."""
    return tuple(
        f"{r.task_type}: cannot read its schedule: {r.error}" for r in s.schedules if r.error
    )


def _read(conn: Conn, args: ViewArgs) -> Schedules:
    return Schedules(read.schedules(conn))


SCHEDULES: View[Schedules] = View(
    "schedules",
    _read,
    Schedules.as_dict,
    Table(COLUMNS, lambda s: s.schedules, lambda s: "Periodic task types", _notes),
)
