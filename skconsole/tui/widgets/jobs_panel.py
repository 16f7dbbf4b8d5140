"""The jobs of one failure group (the drill-down list)."""

from __future__ import annotations

from typing import ClassVar

from skconsole.core.status import JobStatus
from skconsole.read import FailedJob
from skconsole.tui.formatting import fmt_ago, fmt_int, short_id
from skconsole.tui.widgets.panel import Panel
from skconsole.views.table import Cell, Column, Tone, figure_column, type_column

#: how a job's status is coloured wherever one is shown
STATUS_TONES: dict[int, Tone] = {
    JobStatus.PROCESSED: "good",
    JobStatus.FAULTED: "bad",
    JobStatus.FATAL: "bad",
    JobStatus.ERROR: "warn",
    JobStatus.CANCELLED: "muted",
}


def status_tone(status: int) -> Tone:
    return STATUS_TONES.get(status, "")


def _status(job: FailedJob) -> Cell:
    return (JobStatus.label_of(job.status), status_tone(job.status))


class JobsPanel(Panel):
    scope = "jobs"
    title = "Jobs"
    # narrow, the columns a list's rows often share give way to the error first
    COLUMNS: ClassVar[tuple[Column[FailedJob], ...]] = (
        Column("job", "job", 8, cell=lambda j, _: short_id(str(j.task_id))),
        type_column(16, priority=2),
        Column("status", "status", 11, cell=lambda j, _: _status(j)),
        figure_column("errors", 6, lambda j, _: fmt_int(j.error_count), priority=3),
        figure_column("priority", 5, lambda j, _: str(j.priority), label="prio", priority=4),
        figure_column(
            "last", 12, lambda j, now: fmt_ago(j.failed_at, now), label="last attempt", priority=1
        ),
        Column("error", "error", 44, flex=True, cell=lambda j, _: j.error_line, min_width=30),
    )

    def row_key(self, item: FailedJob) -> str:
        return str(item.task_id)
