"""The in-flight view: jobs being processed now, hung ones first.

Its columns are the console's in-flight panel and ``skconsole status inflight``
alike: what a job's state cell says (and how alarming it looks) is decided here
once, from the server's verdict (:class:`~skconsole.core.states.InflightState`).
"""

from __future__ import annotations

from datetime import datetime

from skconsole.core.durations import format_age
from skconsole.core.states import InflightState
from skconsole.read import Inflight, InflightJob, inflight
from skconsole.read.inflight import Progress
from skconsole.read.query import Conn
from skconsole.views.registry import Table, View, ViewArgs
from skconsole.views.table import Cell, Column, Face, figure_column, type_column


def worker_text(j: InflightJob) -> str:
    """The job's worker as "host pid N"; "gone" when its registration is; "-" with no owner."""
    if j.worker_host:
        return f"{j.worker_host} pid {j.worker_pid}"
    return "gone" if j.worker_id else "-"


def state_cell(j: InflightJob) -> Cell:
    """Hung jobs shout, a job running normally stays quiet, anything else warns: the
    note says what ("control connection lost, heartbeat 0.2 s ago"). A running job
    reads as its state's own word ("running", as docs/howto/console.md says)."""
    if j.hung:
        return (f"HUNG: {j.note or j.hung_reason}", "bad")
    if j.state is InflightState.RUNNING:
        return (j.state.value, "muted")
    if j.state is InflightState.CANCEL_IGNORED:  # the handler ignores the cancel
        return (j.note or j.state.value, "bad")
    return (j.note or j.state.value, "warn")


def progress_text(progress: Progress | None) -> str:
    """What a handler last reported: "42% copying rows", "42%", "copying rows"; "-"
    when nothing. The message as written: each face makes it printable."""
    if progress is None:
        return "-"
    parts = []
    if progress.fraction is not None:
        parts.append(f"{int(progress.fraction * 100)}%")  # never 100% before it is
    if progress.message:
        parts.append(progress.message)
    return " ".join(parts) or "-"


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


COLUMNS: tuple[Column[InflightJob], ...] = (
    Column("job", "job", 8, cell=lambda j, _: str(j.task_id), ident=True),
    type_column(15, priority=1),
    Column("worker", "worker", 15, cell=lambda j, _: worker_text(j), priority=4),
    Column("started", "started", cell=lambda j, _: _when(j.started_at), priority=6, faces=Face.CLI),
    figure_column("running", 7, lambda j, _: format_age(j.running_s), priority=2),
    figure_column("heartbeat", 9, lambda j, _: format_age(j.heartbeat_age_s), priority=3),
    figure_column("attempt", 3, lambda j, _: str(j.attempt), label="try", priority=5),
    Column("progress", "progress", 16, cell=lambda j, _: progress_text(j.progress), priority=6),
    Column("state", "state", 36, flex=True, cell=lambda j, _: state_cell(j)),
)


def title(data: Inflight) -> str:
    shown = f" (first {len(data.jobs)} shown)" if data.total > len(data.jobs) else ""
    return f"In flight: {data.total:,} job(s), {data.hung:,} hung{shown}"


def _read(conn: Conn, args: ViewArgs) -> Inflight:
    return inflight(conn, limit=args.limit)


INFLIGHT: View[Inflight] = View(
    "inflight", _read, Inflight.as_dict, Table(COLUMNS, lambda d: d.jobs, title)
)
