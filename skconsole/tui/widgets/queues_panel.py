"""The overview of several queues: one row per queue, what the on-call engineer of
several services scans first.

Each row is a queue's latest overview read (:class:`~skconsole.tui.model.QueueOverview`:
what ``skconsole check`` reads, and its verdict on it): whether it answers, the
verdict and what is wrong, the jobs per status, how long the oldest ready job has
waited, the share of the jobs finished in the last 5 minutes that failed for good (as
panel 1 gives a type's) and the hung ones. A
queue that does not answer keeps its last figures, its connection column saying
why (red) and its verdict UNKNOWN, as ``skconsole check`` says of a queue it cannot
reach. Enter on a row shows that queue's panels (the row marked ▸ is the one they
show now).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from skconsole.check.verdict import Level, Report
from skconsole.core.status import JobStatus
from skconsole.tui.formatting import first_line, fmt_age_s, fmt_count, format_age
from skconsole.tui.model import QueueOverview, QueueRow
from skconsole.tui.widgets.keyed_table import Row
from skconsole.tui.widgets.panel import Panel
from skconsole.views.flow import failure_share
from skconsole.views.table import Cell, Column, Tone, figure_column

_LEVEL_TONES: dict[Level, Tone] = {
    Level.OK: "good",
    Level.WARNING: "warn",
    Level.CRITICAL: "bad",
    Level.UNKNOWN: "bad",
}


def _name(r: QueueRow, _now: float) -> Cell:
    return (f"▸ {r.name}", "accent") if r.shown else f"  {r.name}"


def _connection(r: QueueRow, _now: float) -> Cell:
    if r.error is not None:
        return ("✖ down", "bad")
    if r.overview is None:
        return ("◌ …", "muted")
    return ("● live", "good")


def findings(report: Report) -> str:
    """What the verdict says, briefly: the failing checks' summaries, worst first (all
    of them when every check passes)."""
    failing = sorted((c for c in report.checks if c.level > Level.OK), key=lambda c: -c.level)
    return ", ".join(c.summary for c in failing or report.checks)


def _verdict(r: QueueRow, _now: float) -> Cell:
    """The verdict of ``skconsole check`` on it: UNKNOWN while it does not answer, as
    check says of a queue it cannot reach."""
    if r.error is not None:
        return (Level.UNKNOWN.name, _LEVEL_TONES[Level.UNKNOWN])
    if r.overview is None:
        return ("", "muted")
    level = r.overview.verdict.level
    return (level.name, _LEVEL_TONES[level])


def _findings(r: QueueRow, now: float) -> Cell:
    """What check says; for a queue that does not answer, why, and how old the figures
    beside it are."""
    if r.error is not None:
        since = (
            ""
            if r.overview is None
            else f" · figures from {fmt_age_s(max(now - r.overview.taken_at, 0.0))} ago"
        )
        return (f"{first_line(r.error, 160)} · attempt {r.attempt}{since}", "bad")
    if r.overview is None:
        return ("connecting", "muted")
    report = r.overview.verdict
    text = findings(report)
    return text if report.level > Level.OK else (text, "muted")


def _figure(
    value: Callable[[QueueOverview], int], tone: Tone = "", estimated: Sequence[JobStatus] = ()
) -> Callable[[QueueRow, float], Cell]:
    """A count of the queue's latest overview ("≈" when estimated; in ``tone`` when not 0;
    muted when the queue does not answer: the figure is from before)."""

    def cell(r: QueueRow, _now: float) -> Cell:
        o = r.overview
        if o is None:
            return ""
        n = value(o)
        text = fmt_count(n, o.estimated(*estimated))
        if r.error is not None:
            return (text, "muted")
        return (text, tone) if n and tone else text

    return cell


def _statuses(*statuses: JobStatus, tone: Tone = "") -> Callable[[QueueRow, float], Cell]:
    return _figure(lambda o: o.jobs(*statuses), tone, statuses)


def _oldest(r: QueueRow, _now: float) -> Cell:
    if r.overview is None:
        return ""
    text = format_age(r.overview.oldest_ready_s)
    return (text, "muted") if r.error is not None else text


def _failed_recently(r: QueueRow, _now: float) -> Cell:
    """The share of the queue's jobs finished in the last 5 minutes that failed, as panel
    1 shows a type's (muted when the queue does not answer: the figure is from before)."""
    if r.overview is None:
        return ""
    cell = failure_share(r.overview.failed_recently, r.overview.finished_recently)
    if r.error is not None:
        return (cell if isinstance(cell, str) else cell[0], "muted")
    return cell


COLUMNS: tuple[Column[QueueRow], ...] = (
    Column("queue", "Queue", cell=_name),
    Column("connection", "Conn", 6, cell=_connection),
    Column("verdict", "Verdict", 8, cell=_verdict),
    figure_column("waiting", 7, _statuses(JobStatus.UNPROCESSED), label="Waiting", priority=3),
    figure_column("oldest", 7, _oldest, label="Oldest", priority=2),
    figure_column("running", 7, _statuses(JobStatus.PROCESSING), label="Running", priority=5),
    figure_column("hung", 4, _figure(lambda o: o.hung, "bad"), label="Hung", priority=4),
    figure_column("failed5m", 7, _failed_recently, label="Fail 5m", priority=1),
    figure_column(
        "failed",
        6,
        _statuses(JobStatus.ERROR, JobStatus.FAULTED, JobStatus.FATAL),
        label="Failed",
        priority=6,
    ),
    figure_column("done", 9, _statuses(JobStatus.PROCESSED), label="Processed", priority=7),
    Column("findings", "What check says", flex=True, cell=_findings, min_width=24),
    Column("server", "Server", 16, cell=lambda r, _now: r.description, priority=8),
)


class QueuesPanel(Panel):
    """Every queue, one a row (not a panel of the main screen: the overview's own)."""

    scope = "queues"
    title = "Queues"
    COLUMNS = COLUMNS
    opens = "that queue's panels (the header names the queue shown)"

    def show_queues(self, rows: Sequence[QueueRow], now: float) -> None:
        """The rows as of ``now`` (console clock), and a title that counts them."""
        table_rows: list[Row] = self.rows_of(rows, now)
        down = sum(1 for r in rows if r.error is not None)
        worst = [r.overview.verdict.level for r in rows if r.overview is not None]
        alarms = sum(1 for level in worst if level in (Level.CRITICAL, Level.WARNING))
        parts = [f"{len(rows)} queues"]
        if down:
            parts.append(f"{down} not answering")
        if alarms:
            parts.append(f"{alarms} need attention")
        self.show_rows(table_rows, " · ".join(parts))

    def row_key(self, item: QueueRow) -> str:
        return item.name
