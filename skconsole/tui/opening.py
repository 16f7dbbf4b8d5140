"""What Enter opens: the panels and lists say it as data, the App opens it.

A panel knows what its selected row stands for (a type's waiting jobs, a running
job, a worker's jobs, the jobs an audited action touched); the App knows the
screens. Keeping the answer as data keeps the widgets from importing the screens
(which import the widgets) and keeps one Enter for every list.
"""

from __future__ import annotations

import enum
import shlex
from dataclasses import dataclass

from skconsole.core.places import Place, PlaceKind
from skconsole.core.status import JobStatus


class OpenKind(enum.Enum):
    JOB = "job"  # a job's detail, by id
    GROUP = "group"  # a failure group's jobs, by signature
    SEARCH = "search"  # the search screen, on a search line
    FILTER = "filter"  # another panel of the main screen, filtered
    QUEUE = "queue"  # another queue's panels (several queues), by its name


@dataclass(frozen=True)
class Opening:
    """``value``: the job id, the signature, the search line, the filter text or the queue;
    ``panel``: the panel a filter applies to; ``group``: the group a job was opened from."""

    kind: OpenKind
    value: str
    panel: str = ""
    group: str | None = None


#: A job waiting in the queue: posted and not yet claimed, a retry waiting out its back-off,
#: or parked after its last attempt failed (Stakhanovise.NET keeps Faulted jobs queued).
WAITING = (JobStatus.UNPROCESSED, JobStatus.ERROR, JobStatus.FAULTED)


def job(task_id: str, group: str | None = None) -> Opening:
    return Opening(OpenKind.JOB, task_id, group=group)


def search(*terms: str) -> Opening:
    return Opening(OpenKind.SEARCH, " ".join(terms))


def of_type(task_type: str) -> str:
    """The search term for a task type, quoted for the search line."""
    return f"type={shlex.quote(task_type)}"


def waiting_of(task_type: str) -> Opening:
    """A task type's waiting jobs, as the search screen finds them."""
    return search(of_type(task_type), *(f"status={int(s)}" for s in WAITING))


def of_place(at: Place) -> Opening:
    """What ``--open`` opens: a job, a failure group (by its short id), a search."""
    kind = {
        PlaceKind.JOB: OpenKind.JOB,
        PlaceKind.GROUP: OpenKind.GROUP,
        PlaceKind.SEARCH: OpenKind.SEARCH,
    }[at.kind]
    return Opening(kind, at.value)
