"""Registered worker processes and their liveness, as the server judges it
(``sk_worker_liveness()``: the lease in each registration and the control session's lock).

It also says, once, which task types no live worker runs (:func:`served_types`,
:func:`unserved_types`): ``skconsole check``'s workers check (and so the overview of
several queues, which shows its verdict), the console's depth panel and workers tab, and
the operator's reap all ask it here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Protocol
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


class Waiting(Protocol):
    """A task type's row with its ready jobs and whether it is paused (the depth read
    model's :class:`~skconsole.read.depth.TypeDepth`, the flow's ``TypeFlow``)."""

    @property
    def task_type(self) -> str: ...
    @property
    def ready(self) -> int: ...
    @property
    def paused(self) -> bool: ...


def served_types(workers: Iterable[WorkerInfo]) -> frozenset[str]:
    """The task types some live worker runs: those its registration names, of a worker
    whose state is alive (``sk_worker_liveness()``). A worker that lost its lease, went,
    stopped, or is late or cut off from its control session runs none; nor does a worker
    that registers nowhere (a Stakhanovise.NET consumer): its types read as unserved."""
    return frozenset(t for w in workers if w.alive for t in w.task_types)


def unserved_types(workers: Iterable[WorkerInfo], rows: Iterable[Waiting]) -> tuple[str, ...]:
    """The types, in the order of ``rows``, that have ready jobs, are not paused, and
    that no live worker runs (:func:`served_types`): nothing will take their jobs."""
    served = served_types(workers)
    return tuple(
        r.task_type for r in rows if r.ready > 0 and not r.paused and r.task_type not in served
    )


def _worker(*, state: str, task_types: list[str] | None, **cols: Any) -> WorkerInfo:
    return WorkerInfo(state=WorkerState(state), task_types=list(task_types or []), **cols)


def workers(conn: Conn) -> list[WorkerInfo]:
    """Registered worker processes with their liveness (``sk_worker_liveness()``); none
    on a database without skconsole's objects (Stakhanovise.NET's workers register nowhere)."""
    return fetch(conn, "workers", _worker)
