"""Registered worker processes and their liveness, as the server judges it
(``sk_worker_liveness()``: the lease in each registration and the control session's lock)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from skconsole.core.json_types import JsonObject
from skconsole.core.states import WorkerState
from skconsole.read.query import Conn, fetch


@dataclass
class WorkerInfo:
    worker_id: UUID
    process_id: str
    host: str
    pid: int
    concurrency: int
    task_types: list[str]
    started_at: datetime
    heartbeat_age_s: float
    stopped: bool
    #: its control session holds its liveness lock; None: this server cannot tell (a
    #: standby sees no lock of the primary's; a worker behind a transaction pooler holds none)
    connected: bool | None
    in_flight: int
    state: WorkerState
    note: str
    lease_s: float
    #: the version of the application code it runs (``worker --app-version``); None: unknown
    app_version: str | None = None

    @property
    def alive(self) -> bool:
        return self.state is WorkerState.ALIVE

    def as_dict(self) -> JsonObject:
        d = asdict(self)
        d["worker_id"] = str(self.worker_id)
        d["started_at"] = self.started_at.isoformat()
        d["state"] = self.state.value
        d["alive"] = self.alive
        return d


def _worker(*, state: str, task_types: list[str] | None, **cols: Any) -> WorkerInfo:
    return WorkerInfo(state=WorkerState(state), task_types=list(task_types or []), **cols)


def workers(conn: Conn) -> list[WorkerInfo]:
    """Registered worker processes with their liveness (``sk_worker_liveness()``); none
    on a database without skconsole's objects (Stakhanovise.NET's workers register nowhere)."""
    return fetch(conn, "workers", _worker)
