"""What the engine knows about a claimed job, and how an attempt ended.

A job is identified by its claim id (the fencing token written by the claim),
not its task id: the same task can be claimed again after it was reaped, and
the two attempts must never be mistaken for one another.
"""

from __future__ import annotations

import asyncio
import enum
import uuid
from dataclasses import dataclass, field
from datetime import datetime

from skconsole.core.status import JobStatus
from skconsole.core.stored_error import StoredError
from skconsole.producer.job import Job
from skconsole.worker.registry import JobContext, StopReason, Task

#: a fencing token's timeline sits above this many bits (134_skconsole_failover.sql)
TOKEN_TIMELINE_SHIFT = 44


def token_timeline(token: int) -> int:
    """The timeline a fencing token was handed out on (0: one where it was unknown)."""
    return token >> TOKEN_TIMELINE_SHIFT


@dataclass(frozen=True)
class Claimed:
    """One claimed attempt, as the claim statement returned it."""

    task_id: uuid.UUID
    task_type: str
    source: str
    payload: str | None
    priority: int
    posted_at: datetime
    attempt: int
    claim_id: int
    error_count: int
    #: the W3C trace context it was posted under (None outside a trace)
    trace_context: str | None = None


@dataclass(frozen=True)
class Attempt:
    """An attempt the database says this worker runs (owned_jobs.sql), or was asked
    to cancel (cancel_requests.sql): the job and the claim that started the attempt."""

    task_id: uuid.UUID
    claim_id: int


class Ending(enum.Enum):
    """How an attempt ended, i.e. which statement records it."""

    SUCCESS = "success"  # finish_success
    FAILURE = "failure"  # finish_failure (4 Error, 5 Faulted, 6 Fatal or 7 Cancelled)
    HAND_BACK = "hand back"  # hand_back: back to the queue, no error counted (also a snooze)


@dataclass
class Outcome:
    job: Claimed
    ending: Ending
    ms: int = 0
    status: JobStatus = JobStatus.PROCESSED  # for FAILURE: ERROR, FAULTED, FATAL or CANCELLED
    #: FAILURE: the attempt's error (stored as QueuedTaskError JSON)
    error: StoredError | None = None
    recoverable: bool = False
    #: FAILURE: the retry's back-off; HAND_BACK: not claimable again before this
    delay_ms: float = 0.0
    #: writes that failed or were deferred so far (drives the back-off)
    tries: int = 0
    #: HAND_BACK: the handler asked to run later (Snooze), counted as a snooze
    snoozed: bool = False
    #: HAND_BACK: a sync handler's thread given up on at shutdown, which may still
    #: run: written only after the other outcomes (:mod:`~skconsole.worker.shutdown`)
    thread_running: bool = False
    #: SUCCESS: jobs the handler posted (ctx.post), written with the success
    posts: list[Job] = field(default_factory=list)
    #: SUCCESS: the pipeline's next stage (then=), and the pipeline's name
    stage: Job | None = None
    pipeline: str | None = None


@dataclass
class JobRun:
    """A claimed job while its handler runs (and, for a sync handler, while its thread lives)."""

    job: Claimed
    ctx: JobContext
    #: the registered handler and its options (None: no handler for this type)
    spec: Task | None
    #: the asyncio task running the attempt
    task: asyncio.Task[None] | None = None
    #: a sync handler past its timeout whose thread still runs: it no longer
    #: takes a concurrency slot, but its job is held until the thread returns
    lingering: bool = False
    thread_alive: bool = False
    #: set by the engine before it gives up on a sync handler's thread at shutdown:
    #: the job goes back to the queue, claimable only after this delay
    hand_back_delay_ms: float = 0.0

    @property
    def is_async(self) -> bool:
        return self.spec is not None and self.spec.is_async

    def stop(self, reason: StopReason) -> None:
        """Ask the handler to stop (it reads ``ctx.stop``); an async one is cancelled too."""
        self.ctx.stop.request(reason)
        if self.is_async and self.task is not None:
            self.task.cancel()
