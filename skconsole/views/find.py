"""The jobs a search found, as ``skconsole find`` prints them and the console's search
lists them: one declaration of the columns for both.

A search lists jobs in every state, so its time column says which time it is: when a
waiting job is due ("due in 1h 58m"), since when a job runs, when a job that never ran
was posted, else when it last ran. The payload (what a search is usually by) and the
error are columns of their own; the type stays at any width (a search may list several).
"""

from __future__ import annotations

from skconsole.core.durations import format_age
from skconsole.core.figures import EARLIEST_TIME, LATEST_TIME, fmt_ago
from skconsole.core.status import JobStatus
from skconsole.core.text import printable
from skconsole.read.find import FoundJob
from skconsole.views.failures import status_cell
from skconsole.views.table import Cell, Column, type_column

#: the most of a payload or an error one row shows (the job's detail has it all)
EXCERPT = 200


def excerpt(text: str | None, width: int = EXCERPT) -> str:
    """One line of at most ``width`` characters, control characters made visible."""
    if not text:
        return ""
    line = printable(" ".join(text.split()))
    return line if len(line) <= width else line[: width - 1] + "…"


def when(job: FoundJob, now: float) -> Cell:
    """Which time of the job matters, and how far it is from ``now``."""
    due = job.due_at
    if due is not None and due not in (EARLIEST_TIME, LATEST_TIME) and due.timestamp() > now:
        return (f"due in {format_age(due.timestamp() - now)}", "muted")
    if job.status == JobStatus.PROCESSING and job.last_attempt_at is not None:
        return f"running {fmt_ago(job.last_attempt_at, now, suffix=False)}"
    if job.last_attempt_at is None:
        return f"posted {fmt_ago(job.posted_at, now)}"
    return f"last ran {fmt_ago(job.last_active_at, now)}"


COLUMNS: tuple[Column[FoundJob], ...] = (
    Column("job", "job", 8, cell=lambda j, _: str(j.task_id), ident=True),
    type_column(16),
    Column("status", "status", 11, cell=lambda j, _: status_cell(int(j.status))),
    Column("when", "when", 14, cell=when, priority=1),
    Column("payload", "payload", 12, flex=True, cell=lambda j, _: excerpt(j.payload), min_width=20),
    Column("error", "error", 10, flex=True, cell=lambda j, _: excerpt(j.error_text), min_width=20),
)
