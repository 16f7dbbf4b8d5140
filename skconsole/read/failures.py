"""Failed jobs (4 Error, 5 Faulted, 6 Fatal) grouped by what went wrong, and each
group's jobs.

A group is the jobs whose last errors share a signature (:mod:`skconsole.core.signature`:
the error with its variable parts masked), stored on each result row by
skconsole's writers. On a database without stored signatures (Stakhanovise.NET's
tables alone) the groups are computed here over the newest
:data:`FAILURE_SCAN_CAP` failed jobs, and each group's ``scan`` says so.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from skconsole.core.json_types import JsonObject
from skconsole.core.signature import error_signature, final_exception_line
from skconsole.core.status import FAILED, JobStatus
from skconsole.db.layout import has_skconsole_objects
from skconsole.read.query import Conn, fetch, iso

#: failed jobs a degraded read groups at most, newest first (signatures computed here)
FAILURE_SCAN_CAP = 50_000


def group_id(signature: str) -> str:
    """A short, stable id of a failure group, to type instead of its signature."""
    data = signature.encode("utf-8", errors="surrogatepass")
    return hashlib.md5(data, usedforsecurity=False).hexdigest()[:12]


@dataclass(frozen=True)
class FailureScan:
    """A degraded read's groups come from the newest ``rows`` of ``total`` failed jobs."""

    rows: int
    total: int

    @property
    def capped(self) -> bool:
        return self.rows < self.total

    def as_dict(self) -> JsonObject:
        return {"rows": self.rows, "total": self.total, "capped": self.capped}


@dataclass
class FailureGroup:
    signature: str
    count: int
    statuses: dict[int, int]
    task_types: list[str]
    first_seen: datetime | None
    last_seen: datetime | None
    sample_task_id: UUID | None
    sample_error: str | None
    #: set on a degraded read (no stored signatures): what the group was computed from
    scan: FailureScan | None = None
    #: the state of a circuit breaker open or half-open on its signature ("open",
    #: "half-open"; :func:`skconsole.read.breakers.with_breakers`); None: none holds
    breaker: str | None = None

    @property
    def id(self) -> str:
        return group_id(self.signature)

    def as_dict(self) -> JsonObject:
        return {
            "id": self.id,
            "signature": self.signature,
            "count": self.count,
            "statuses": {JobStatus.label_of(s): n for s, n in self.statuses.items() if n},
            "task_types": self.task_types,
            "first_seen": iso(self.first_seen),
            "last_seen": iso(self.last_seen),
            "sample_task_id": str(self.sample_task_id) if self.sample_task_id else None,
            "sample_error": self.sample_error,
            **({"scan": self.scan.as_dict()} if self.scan is not None else {}),
            "breaker": self.breaker,
        }


@dataclass
class FailedJob:
    task_id: UUID
    task_type: str
    status: int
    priority: int
    error_count: int
    failed_at: datetime | None
    error_line: str

    def as_dict(self) -> JsonObject:
        d = asdict(self)
        d["task_id"] = str(self.task_id)
        d["status"] = JobStatus.label_of(self.status)
        d["failed_at"] = iso(self.failed_at)
        return d


@dataclass
class GroupJobs:
    signature: str
    total: int
    jobs: list[FailedJob]

    def as_dict(self) -> JsonObject:
        return {
            "id": group_id(self.signature),
            "signature": self.signature,
            "total": self.total,
            "jobs": [j.as_dict() for j in self.jobs],
        }


# -- stored signatures ---------------------------------------------------------------------
def _group(
    *, error: int, faulted: int, fatal: int, task_types: list[str] | None, **group: Any
) -> FailureGroup:
    statuses = {int(s): n for s, n in zip(FAILED, (error, faulted, fatal), strict=True)}
    return FailureGroup(statuses=statuses, task_types=sorted(task_types or []), **group)


@dataclass(frozen=True)
class _GroupJob:
    job: FailedJob
    total: int


def _group_job(*, total: int, error_line: str | None, **job: Any) -> _GroupJob:
    return _GroupJob(FailedJob(error_line=error_line or "", **job), total)


# -- computed signatures (read degraded) ---------------------------------------------------
@dataclass(frozen=True)
class _Scanned:
    """A failed job as the degraded scan reads it, with its whole last error (its
    signature is computed from it) and how many failed jobs there are."""

    job: FailedJob
    last_error: str | None
    total: int

    @property
    def signature(self) -> str:
        return error_signature(self.last_error)


def _scanned(*, last_error: str | None, total: int, **job: Any) -> _Scanned:
    return _Scanned(
        FailedJob(error_line=final_exception_line(last_error), **job), last_error, total
    )


def _scan_failures(conn: Conn, cap: int) -> tuple[list[tuple[_Scanned, str]], FailureScan]:
    """The newest failed jobs with their signature (computed: no stored one), capped."""
    rows = fetch(conn, "failures_scan_compat", _scanned, {"cap": cap})
    scan = FailureScan(len(rows), rows[0].total if rows else 0)
    return [(r, r.signature) for r in rows], scan


def _computed_groups(conn: Conn, limit: int, cap: int) -> list[FailureGroup]:
    rows, scan = _scan_failures(conn, cap)
    groups: dict[str, FailureGroup] = {}
    for r, signature in rows:
        job = r.job
        seen_at = job.failed_at
        g = groups.get(signature)
        if g is None:  # rows come newest first: the first is the sample
            g = groups[signature] = FailureGroup(
                signature,
                0,
                dict.fromkeys(FAILED, 0),
                [],
                seen_at,
                seen_at,
                job.task_id,
                job.error_line,
                scan,
            )
        g.count += 1
        g.statuses[JobStatus(job.status)] += 1
        if job.task_type not in g.task_types:
            g.task_types.append(job.task_type)
        if seen_at is not None:
            g.first_seen = min(g.first_seen or seen_at, seen_at)
            g.last_seen = max(g.last_seen or seen_at, seen_at)
    for g in groups.values():
        g.task_types.sort()
    return sorted(groups.values(), key=lambda g: (-g.count, g.signature))[:limit]


# -- the read models -----------------------------------------------------------------------
def failure_groups(
    conn: Conn, *, limit: int = 200, scan_cap: int = FAILURE_SCAN_CAP
) -> list[FailureGroup]:
    """Failed jobs (4, 5, 6) grouped by error signature, the biggest groups first. On a
    database without stored signatures, computed over the newest ``scan_cap`` failed
    jobs (each group's ``scan`` says so)."""
    if not has_skconsole_objects(conn):
        return _computed_groups(conn, limit, scan_cap)
    return fetch(conn, "failure_groups", _group, {"limit": limit})


def failure_jobs(
    conn: Conn, signature: str, *, limit: int = 200, scan_cap: int = FAILURE_SCAN_CAP
) -> GroupJobs:
    """The jobs of one failure group (drill-down), latest failure first."""
    if not has_skconsole_objects(conn):
        scanned, _ = _scan_failures(conn, scan_cap)
        mine = [r for r, s in scanned if s == signature]
        return GroupJobs(signature, len(mine), [r.job for r in mine[:limit]])
    rows = fetch(conn, "failure_jobs", _group_job, {"signature": signature, "limit": limit})
    return GroupJobs(signature, rows[0].total if rows else 0, [r.job for r in rows])
