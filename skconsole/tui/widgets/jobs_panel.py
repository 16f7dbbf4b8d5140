"""The jobs of one failure group (the drill-down list)."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.stats import GroupJobs
from skconsole.status import JobStatus
from skconsole.tui.formatting import fmt_ago, fmt_int, short_id
from skconsole.tui.widgets.keyed_table import Column, Row, Tone
from skconsole.tui.widgets.panel import Panel

_TONES: dict[int, Tone] = {
    JobStatus.FAULTED: "bad",
    JobStatus.FATAL: "bad",
    JobStatus.ERROR: "warn",
    JobStatus.CANCELLED: "muted",
}


class JobsPanel(Panel):
    scope = "jobs"
    title = "Jobs"
    COLUMNS = (
        Column("job", "job", 8),
        Column("type", "type", 16),
        Column("status", "status", 11),
        Column("errors", "errors", 6, right=True),
        Column("priority", "prio", 5, right=True),
        Column("last", "last attempt", 12, right=True),
        Column("error", "error", 44, flex=True),
    )

    def job_rows(self, jobs: GroupJobs, now: float) -> Sequence[Row]:
        return [
            (
                str(j.task_id),
                (
                    short_id(str(j.task_id)),
                    j.task_type,
                    (JobStatus.label_of(j.status), _TONES.get(j.status, "")),
                    fmt_int(j.error_count),
                    str(j.priority),
                    fmt_ago(j.failed_at, now),
                    j.error_line,
                ),
            )
            for j in jobs.jobs
        ]
