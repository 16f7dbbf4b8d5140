"""One job in full: its result row, the full last error, whether it waits, its lineage
and every attempt kept (:mod:`skconsole.read.attempts`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any
from uuid import UUID

from skconsole.core.json_types import JsonObject, payload_fields
from skconsole.core.signature import read_error
from skconsole.core.status import JobStatus
from skconsole.db.layout import has_skconsole_objects
from skconsole.read.after import AfterJob, after_jobs, pending
from skconsole.read.attempts import ChildJob, JobAttempt, job_attempts, job_children
from skconsole.read.inflight import Progress, progress_of
from skconsole.read.query import Conn, fetch


@dataclass
class JobDetail:
    task_id: UUID
    task_type: str
    source: str
    payload: str | None
    status: int
    priority: int
    error_count: int
    last_error: str | None
    recoverable: bool
    processing_ms: int
    posted_at: datetime | None
    first_attempt_at: datetime | None
    last_attempt_at: datetime | None
    finalized_at: datetime | None
    owner_worker_id: UUID | None
    attempt: int
    signature: str | None
    #: when the job becomes (or became) eligible, if it waits in the queue
    queued_until: datetime | None
    #: the job whose success posted this one (a pipeline's previous stage, or a
    #: handler's ctx.post); None for a job a producer posted
    parent_task_id: UUID | None = None
    #: the parent's type; None when there is no parent, or it was purged
    parent_task_type: str | None = None
    #: a pipeline's stage job: the pipeline and its stage (2, 3, ...; the first has neither)
    pipeline: str | None = None
    stage: int | None = None
    #: how often a handler asked to run it later (raise Snooze): not errors
    snooze_count: int = 0
    #: the jobs its success posted (its next stage, its ctx.post jobs)
    children: int = 0
    #: its attempts kept, oldest first, the running one last (none for a .NET consumer's)
    attempts: tuple[JobAttempt, ...] = ()
    #: the first of the jobs it posted (``children`` counts them all)
    child_jobs: tuple[ChildJob, ...] = ()
    #: what its running attempt's handler last reported (ctx.progress); None: nothing
    progress: Progress | None = None
    #: how many jobs it was posted after= (fan-in), and those jobs as they stand now
    after_count: int = 0
    after: tuple[AfterJob, ...] = ()

    @property
    def queued(self) -> bool:
        return self.queued_until is not None

    @property
    def parent_purged(self) -> bool:
        """It names a parent whose result row is gone."""
        return self.parent_task_id is not None and self.parent_task_type is None

    def as_dict(self) -> JsonObject:
        d = asdict(self)
        for k, v in d.items():
            if isinstance(v, datetime):
                d[k] = v.isoformat()
            elif isinstance(v, UUID):
                d[k] = str(v)
        d.update(payload_fields(self.payload))
        d["status_name"] = JobStatus.label_of(self.status)
        d["queued"] = self.queued
        d["parent_purged"] = self.parent_purged
        error = read_error(self.last_error)
        d["error"] = error.as_dict() if error is not None else None
        d["attempts"] = [a.as_dict() for a in self.attempts]
        d["child_jobs"] = [c.as_dict() for c in self.child_jobs]
        d["progress"] = self.progress.as_dict() if self.progress is not None else None
        d["after"] = [a.as_dict() for a in self.after]
        d["waits_for"] = [str(a.task_id) for a in pending(self.after)]
        return d


def _detail(
    *,
    recoverable: bool | None,
    snooze_count: int | None,
    progress_fraction: float | None = None,
    progress_message: str | None = None,
    progress_at: datetime | None = None,
    **cols: Any,
) -> JobDetail:
    # another application may leave these NULL
    return JobDetail(
        recoverable=bool(recoverable),
        snooze_count=snooze_count or 0,
        progress=progress_of(progress_fraction, progress_message, progress_at),
        **cols,
    )


def job(conn: Conn, task_id: UUID) -> JobDetail | None:
    """Everything stored about one job, the full last error and its attempts included."""
    rows = fetch(conn, "job", _detail, {"task_id": task_id})
    if not rows:
        return None
    found = rows[0]
    if not has_skconsole_objects(conn):  # no lineage, fan-in or attempts kept there
        return found
    children = tuple(job_children(conn, task_id)) if found.children else ()
    after = tuple(after_jobs(conn, task_id)) if found.after_count else ()
    return replace(
        found, attempts=tuple(job_attempts(conn, task_id)), child_jobs=children, after=after
    )
