"""Every attempt of one job (``sk_attempts_t``: the last ``sk_attempts_kept()`` of
them, written by the statement that recorded each ending) and the jobs it posted.

A job a Stakhanovise.NET consumer ran has no attempt rows: its result row's first
and last attempt times and last error (:class:`~skconsole.read.job.JobDetail`)
are all that is known of those attempts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from skconsole.core.attempt import AttemptOutcome
from skconsole.core.json_types import JsonObject
from skconsole.core.signature import read_error
from skconsole.core.status import JobStatus
from skconsole.read.query import Conn, fetch, iso

#: how many attempts of a job are kept (sk_attempts_kept() in 120_skconsole_attempts.sql)
ATTEMPTS_KEPT = 20
#: how many of a job's children are listed (all are counted: JobDetail.children)
CHILDREN_LISTED = 20


@dataclass(frozen=True)
class JobAttempt:
    """One attempt: when, by which worker (as it registered then), how it ended and
    its error (the text stored for that attempt, capped like every stored error)."""

    attempt: int
    started_at: datetime | None
    #: None while it runs
    ended_at: datetime | None
    worker_id: UUID | None
    host: str | None
    pid: int | None
    app_version: str | None
    outcome: AttemptOutcome
    #: the job's status the attempt left it in (2 Processing while it runs)
    status: JobStatus
    error: str | None

    def as_dict(self) -> JsonObject:
        error = read_error(self.error)
        return {
            "attempt": self.attempt,
            "started_at": iso(self.started_at),
            "ended_at": iso(self.ended_at),
            "worker_id": str(self.worker_id) if self.worker_id is not None else None,
            "host": self.host,
            "pid": self.pid,
            "app_version": self.app_version,
            "outcome": self.outcome.value,
            "status": int(self.status),
            "status_name": self.status.label,
            "error": error.as_dict() if error is not None else None,
        }


@dataclass(frozen=True)
class ChildJob:
    """A job this one's success posted."""

    task_id: UUID
    task_type: str
    status: JobStatus

    def as_dict(self) -> JsonObject:
        return {
            "task_id": str(self.task_id),
            "task_type": self.task_type,
            "status": int(self.status),
            "status_name": self.status.label,
        }


def _attempt(*, outcome: str, status: int, **cols: Any) -> JobAttempt:
    return JobAttempt(outcome=AttemptOutcome(outcome), status=JobStatus(status), **cols)


def _child(*, status: int, **cols: Any) -> ChildJob:
    return ChildJob(status=JobStatus(status), **cols)


def job_attempts(conn: Conn, task_id: UUID) -> list[JobAttempt]:
    """The job's recorded attempts, oldest first, then the one running now, if any."""
    return fetch(conn, "job_attempts", _attempt, {"task_id": task_id})


def job_children(conn: Conn, task_id: UUID, limit: int = CHILDREN_LISTED) -> list[ChildJob]:
    """The first ``limit`` jobs its success posted, oldest first."""
    return fetch(conn, "job_children", _child, {"task_id": task_id, "limit": limit})
