"""Jobs being processed now, hung ones first, each with what is known of its worker.

The verdict (running, timed out, cancelling, hung, ...) is the server's
(``sk_inflight_tasks()``, the one definition of "hung"); on a database with
Stakhanovise.NET's tables alone, a job is judged by how long it has been
processing, as that function judges a job without an owner.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from skconsole.core.hung import HungPolicy
from skconsole.core.json_types import JsonObject
from skconsole.core.states import InflightState
from skconsole.read.query import Conn, fetch, iso


@dataclass(frozen=True)
class Progress:
    """How far a running attempt has got, as its handler last reported it
    (``ctx.progress``): written at most once a second, so ``at`` may be that old."""

    #: from 0 to 1; None: the handler reported a message alone
    fraction: float | None
    #: as the handler wrote it (at most 200 characters): shown printable
    message: str | None
    at: datetime

    def as_dict(self) -> JsonObject:
        return {"fraction": self.fraction, "message": self.message, "at": iso(self.at)}


def progress_of(
    fraction: float | None, message: str | None, at: datetime | None
) -> Progress | None:
    """The progress read from a row's three columns (None: nothing reported)."""
    return None if at is None else Progress(fraction, message, at)


@dataclass
class InflightJob:
    task_id: UUID
    task_type: str
    attempt: int
    error_count: int
    started_at: datetime | None
    running_s: float | None
    worker_id: UUID | None
    worker_host: str | None
    worker_pid: int | None
    #: its control session holds its liveness lock (None: no worker known, or this server
    #: cannot tell: a standby, a worker behind a transaction pooler)
    worker_connected: bool | None
    heartbeat_age_s: float | None
    timeout_s: float | None
    state: InflightState
    #: what is known, in words ("control connection lost, heartbeat 0.2 s ago")
    note: str | None
    hung_reason: str | None
    #: seconds until the owner's lease lapses and the job may be reaped
    reapable_in_s: float | None
    #: what its handler last reported (ctx.progress); None: nothing
    progress: Progress | None = None

    @property
    def hung(self) -> bool:
        return self.hung_reason is not None

    def as_dict(self) -> JsonObject:
        d = asdict(self)
        d["task_id"] = str(self.task_id)
        d["worker_id"] = str(self.worker_id) if self.worker_id else None
        d["started_at"] = iso(self.started_at)
        d["state"] = self.state.value
        d["hung"] = self.hung
        d["progress"] = self.progress.as_dict() if self.progress is not None else None
        return d


@dataclass
class Inflight:
    jobs: list[InflightJob]
    total: int
    hung: int

    def as_dict(self) -> JsonObject:
        return {
            "total": self.total,
            "hung": self.hung,
            "shown": len(self.jobs),
            "jobs": [j.as_dict() for j in self.jobs],
        }


@dataclass(frozen=True)
class _Listed:
    """One row of the listing: a job, and the totals counted before the limit."""

    job: InflightJob
    total: int
    hung: int


def _listed(
    *,
    total: int,
    hung: int,
    state: str,
    progress_fraction: float | None,
    progress_message: str | None,
    progress_at: datetime | None,
    **job: Any,
) -> _Listed:
    if job["worker_host"] is None:  # no worker known: nothing to say of its connection
        job["worker_connected"] = None
    progress = progress_of(progress_fraction, progress_message, progress_at)
    return _Listed(InflightJob(state=InflightState(state), progress=progress, **job), total, hung)


def inflight(conn: Conn, policy: HungPolicy | None = None, *, limit: int = 500) -> Inflight:
    """Jobs being processed, hung ones first, judged by ``sk_inflight_tasks()`` (on a
    database without it, by the time they have been processing alone)."""
    params = {**(policy or HungPolicy()).params(), "limit": limit}
    rows = fetch(conn, "inflight", _listed, params)
    if not rows:
        return Inflight([], 0, 0)
    return Inflight([r.job for r in rows], rows[0].total, rows[0].hung)
