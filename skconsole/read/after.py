"""The jobs one job was posted ``after=`` (fan-in) and how each stands now: the job
detail, ``skconsole job`` and ``skconsole why`` say what a job waits for."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from skconsole.core.json_types import JsonObject
from skconsole.core.status import JobStatus
from skconsole.read.query import Conn, fetch


@dataclass(frozen=True)
class AfterJob:
    """One job another waits (or waited) for: its id, type and status (None: gone)."""

    task_id: UUID
    task_type: str | None
    status: int | None
    #: the job posted after it still waits (its edges are there)
    waiting: bool

    @property
    def succeeded(self) -> bool:
        return self.status == JobStatus.PROCESSED

    @property
    def state(self) -> str:
        """Its status as people read it: "Processing", "gone" (purged)."""
        return JobStatus.label_of(self.status) if self.status is not None else "gone"

    def as_dict(self) -> JsonObject:
        return {
            "task_id": str(self.task_id),
            "task_type": self.task_type,
            "status": self.status,
            "status_name": self.state,
        }


def after_jobs(conn: Conn, task_id: UUID) -> list[AfterJob]:
    """The jobs ``task_id`` was posted after, by id (none: it waits for nothing)."""
    return fetch(conn, "job_after", AfterJob, {"task_id": task_id})


def pending(jobs: list[AfterJob] | tuple[AfterJob, ...]) -> list[AfterJob]:
    """Those of ``jobs`` that have not succeeded, while the job still waits for them."""
    return [a for a in jobs if a.waiting and not a.succeeded]
