"""The failures view: failed jobs grouped by error signature, and the jobs of one group.

The console's panel 3 and its drill-down list, and ``skconsole status failures``
(``--group ID``), draw these columns. A console column shows an age ("4m 05s"),
its CLI twin the time itself, for a reader who compares it with logs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from skconsole import read
from skconsole.core.figures import fmt_ago, fmt_int
from skconsole.core.json_types import JsonObject
from skconsole.core.status import JobStatus
from skconsole.read.breakers import breakers, with_breakers
from skconsole.read.first_seen import first_seen, with_first_seen
from skconsole.read.query import Conn
from skconsole.views.registry import View, ViewArgs
from skconsole.views.table import Cell, Column, Face, Tone, figure_column, type_column

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


def status_cell(status: int) -> Cell:
    return (JobStatus.label_of(status), status_tone(status))


def when(value: datetime | None) -> str:
    """A time as the CLI prints it (to the second, the server's zone as read)."""
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


#: a group first seen less than this long ago is marked new (panel 3, status failures)
NEW_WITHIN_S = 300.0
#: what marks it, before its signature
NEW_MARK = "NEW · "


def is_new(group: read.FailureGroup, now: float) -> bool:
    """First seen (its rows or the record, whichever is older) within :data:`NEW_WITHIN_S`."""
    first = group.first_seen
    return first is not None and now - first.timestamp() < NEW_WITHIN_S


def breaker_mark(group: read.FailureGroup) -> str:
    """What marks a group a circuit breaker holds back on: "BREAKER OPEN · "."""
    return f"BREAKER {group.breaker.upper()} · " if group.breaker is not None else ""


def signature_cell(group: read.FailureGroup, now: float) -> Cell:
    """The signature, marked when the group is new (a failure nobody has seen before is
    the one to look at first) and when a breaker holds its jobs back."""
    marks = (NEW_MARK if is_new(group, now) else "") + breaker_mark(group)
    return (marks + group.signature, "bad")


def statuses_text(group: read.FailureGroup) -> str:
    """The group's jobs per status, most first: "Error 1,190, Faulted 94"."""
    counts = sorted(((s, n) for s, n in group.statuses.items() if n), key=lambda x: -x[1])
    return ", ".join(f"{JobStatus.label_of(s)} {n:,}" for s, n in counts)


def _seen(
    key: str, label: str, priority: int, at: Callable[[read.FailureGroup], datetime | None]
) -> tuple[Column[read.FailureGroup], Column[read.FailureGroup]]:
    """When the group's jobs were first or last seen: how long ago in the console (without
    "ago": the header says "seen"), the time itself in the CLI."""
    return (
        Column(
            key,
            label,
            10,
            right=True,
            cell=lambda g, now: fmt_ago(at(g), now, suffix=False),
            priority=priority,
            faces=Face.CONSOLE,
        ),
        Column(key, label, cell=lambda g, _: when(at(g)), priority=priority, faces=Face.CLI),
    )


#: The signature takes the spare width: on a narrow terminal first seen, the statuses,
#: the types and last seen go (in that order) before it is narrower than ``min_width``;
#: the console shortens one still too wide (its module path first, then its message).
GROUP_COLUMNS: tuple[Column[read.FailureGroup], ...] = (
    Column("id", "id", cell=lambda g, _: g.id, ident=True, faces=Face.CLI),
    Column(
        "signature",
        "error signature",
        30,
        flex=True,
        min_width=64,
        cell=signature_cell,
    ),
    figure_column("count", 7, lambda g, _: fmt_int(g.count), label="jobs"),
    Column("types", "types", 16, priority=2, cell=lambda g, _: ", ".join(g.task_types)),
    Column("statuses", "statuses", 20, priority=3, cell=lambda g, _: statuses_text(g)),
    *_seen("first", "first seen", 4, lambda g: g.first_seen),
    *_seen("last", "last seen", 1, lambda g: g.last_seen),
)

#: a group's jobs; narrow, the columns a list's rows often share give way to the error
JOB_COLUMNS: tuple[Column[read.FailedJob], ...] = (
    Column("job", "job", 8, cell=lambda j, _: str(j.task_id), ident=True),
    type_column(16, priority=2),
    Column("status", "status", 11, cell=lambda j, _: status_cell(j.status)),
    figure_column("errors", 6, lambda j, _: fmt_int(j.error_count), priority=3),
    figure_column("priority", 5, lambda j, _: str(j.priority), label="prio", priority=4),
    Column(
        "last",
        "last attempt",
        12,
        right=True,
        cell=lambda j, now: fmt_ago(j.failed_at, now),
        priority=1,
        faces=Face.CONSOLE,
    ),
    Column("last", "failed at", cell=lambda j, _: when(j.failed_at), priority=1, faces=Face.CLI),
    Column("error", "error", 44, flex=True, cell=lambda j, _: j.error_line, min_width=30),
)


@dataclass(frozen=True)
class Failures:
    """The failure groups, or (``--group``) the jobs of one."""

    groups: list[read.FailureGroup] = field(default_factory=list)
    jobs: read.GroupJobs | None = None

    def as_dict(self) -> JsonObject:
        if self.jobs is not None:
            return self.jobs.as_dict()
        return {"groups": [g.as_dict() for g in self.groups]}


def _read(conn: Conn, args: ViewArgs) -> Failures:
    if args.group is None:
        groups = read.failure_groups(conn, limit=args.limit)
        seen = first_seen(conn, [g.signature for g in groups])
        return Failures(groups=with_breakers(with_first_seen(groups, seen), breakers(conn)))
    ids = {g.id: g.signature for g in read.failure_groups(conn, limit=10_000)}
    return Failures(jobs=read.failure_jobs(conn, ids.get(args.group, args.group), limit=args.limit))


FAILURES: View[Failures] = View("failures", _read, Failures.as_dict)
