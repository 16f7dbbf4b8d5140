"""Jobs put back by a reap: the reaped attempts (``sk_attempts_t``, outcome
``reaped``) of some jobs, with when, whose attempt it was (the worker as it had
registered) and the status the reap left the job in.

The console asks it of the jobs that left its in-flight list since its last read, by
their ids (the attempts' primary key): a job reaped there vanished from the list, and
this says where it went. Who reaped it is not recorded (a live worker's reaper, or an
operator: the audit log names those).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from skconsole.core.status import JobStatus
from skconsole.read.query import Conn, fetch


@dataclass(frozen=True)
class ReapedAttempt:
    task_id: UUID
    reaped_at: datetime
    #: the worker whose attempt was reaped (None: it was no longer registered)
    host: str | None
    pid: int | None
    #: the job's status the reap left it in (4 Error: back in the queue; 5 Faulted:
    #: past its attempts; 7 Cancelled; 1 Unprocessed: a keyed re-post ran afresh)
    status: JobStatus


def _reaped(*, status: int, **cols: Any) -> ReapedAttempt:
    return ReapedAttempt(status=JobStatus(status), **cols)


def reaped(conn: Conn, ids: Sequence[UUID], within_s: float) -> list[ReapedAttempt]:
    """The attempts of ``ids`` reaped within the last ``within_s`` seconds, newest first;
    none on a database without skconsole's objects (no attempt is recorded there)."""
    if not ids:
        return []
    return fetch(conn, "reaped_attempts", _reaped, {"ids": list(ids), "within_s": within_s})
