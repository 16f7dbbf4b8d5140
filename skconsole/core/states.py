"""What a worker and an in-flight job are doing, as the server judges it.

The server decides both (``sk_worker_liveness()`` and ``sk_inflight_tasks()``
in sql/schema), so every reader agrees; these enums are the only place their
words are known on this side. A value is the word the SQL writes and the JSON
documents print, so nothing is compared as a sentence: a reader converts once,
where it reads the row, and an unknown word fails there rather than silently
falling into an ``else``.
"""

from __future__ import annotations

import enum


class WorkerState(enum.Enum):
    """A registered worker's liveness (``sk_worker_liveness()``)."""

    ALIVE = "alive"
    CONNECTION_LOST = "connection lost"
    LEASE_EXPIRING = "lease expiring"
    UNRESPONSIVE = "unresponsive"
    GONE = "gone"
    STOPPED = "stopped"

    @property
    def lease_lapsed(self) -> bool:
        """Past its lease: it is not coming back for the jobs it holds ("lease expiring"
        and "connection lost" still may)."""
        return self in (WorkerState.UNRESPONSIVE, WorkerState.GONE, WorkerState.STOPPED)

    @property
    def trouble(self) -> bool:
        """Neither working nor cleanly stopped: worth a look."""
        return self not in (WorkerState.ALIVE, WorkerState.STOPPED)


class InflightState(enum.Enum):
    """What a job in 2 Processing is doing (``sk_inflight_tasks()``): its own state
    first, else its owner's (a :class:`WorkerState` other than alive)."""

    RUNNING = "running"
    TIMED_OUT = "timed out, still running"
    CANCELLING = "cancelling"
    CANCEL_IGNORED = "cancel requested, still running"
    UNOWNED = "running (no owner recorded)"
    HUNG = "hung"
    CONNECTION_LOST = "connection lost"
    LEASE_EXPIRING = "lease expiring"
    UNRESPONSIVE = "unresponsive"
    GONE = "gone"
    STOPPED = "stopped"


class BreakerState(enum.Enum):
    """A circuit breaker's state (sk_breakers_t.state, 150_skconsole_breakers.sql): the
    number the SQL stores is the value; :attr:`word` is what every face prints."""

    CLOSED = 0
    OPEN = 1
    HALF_OPEN = 2

    @property
    def word(self) -> str:
        return self.name.lower().replace("_", "-")

    @property
    def holds(self) -> bool:
        """Open or half-open: it holds jobs back."""
        return self is not BreakerState.CLOSED
