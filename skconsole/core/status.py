"""A job's status: the codes of Stakhanovise.NET's ``QueuedTaskStatus``, named once.

The codes are what ``sk_task_results_t.task_status`` stores, so they never
change. Everything that reads or writes a status (the engine, the operator
actions, the read models, the CLI, the console) uses this enum and the sets
below, so "waiting" or "failed" means the same everywhere.
"""

from __future__ import annotations

from enum import IntEnum


class JobStatus(IntEnum):
    UNKNOWN = 0
    UNPROCESSED = 1  # posted, waiting to be claimed
    PROCESSING = 2  # claimed by a worker
    PROCESSED = 3  # succeeded (final)
    ERROR = 4  # an attempt failed; the retry waits for its back-off
    FAULTED = 5  # failed past its type's attempts; parked for an operator (Stakhanovise.NET: still queued)
    FATAL = 6  # failed for good (final)
    CANCELLED = 7  # cancelled by an operator (final)

    @property
    def label(self) -> str:
        """The name people read: "Unprocessed", "Faulted"."""
        return self.name.capitalize()

    @property
    def is_failed(self) -> bool:
        """Its last attempt failed: it belongs to a failure group."""
        return self in FAILED

    @property
    def is_waiting(self) -> bool:
        """A job with a queue row may have it while it waits (bump and cancel act on these)."""
        return self in WAITING

    @property
    def is_final(self) -> bool:
        """It will never run again by itself, and no operator is expected to revive it."""
        return self in FINAL

    @classmethod
    def label_of(cls, code: int) -> str:
        """The label of ``code``, or the code itself when a foreign database stores another."""
        try:
            return cls(code).label
        except ValueError:
            return str(code)


#: Failed: the statuses of a failure group, and what requeue takes by default.
FAILED: tuple[JobStatus, ...] = (JobStatus.ERROR, JobStatus.FAULTED, JobStatus.FATAL)
#: Waiting in the queue: a queue row's job has one of these (Faulted only on Stakhanovise.NET).
WAITING: tuple[JobStatus, ...] = (JobStatus.UNPROCESSED, JobStatus.ERROR, JobStatus.FAULTED)
#: Over: what purge deletes by default (Faulted results only when asked).
FINAL: tuple[JobStatus, ...] = (JobStatus.PROCESSED, JobStatus.FATAL, JobStatus.CANCELLED)
#: Over without success: a job posted ``after=`` one of these is cancelled (unless
#: it was posted with ``after_failure="run"``, when such a job counts as done).
UNSUCCESSFUL: tuple[JobStatus, ...] = (JobStatus.FATAL, JobStatus.CANCELLED)
#: an attempt ran to its end (succeeded or failed): it has a run time, in the record
RAN: tuple[JobStatus, ...] = (JobStatus.PROCESSED, *FAILED)
#: how an attempt, or a job that never ran, can end: what the record counts as endings
ENDED: tuple[JobStatus, ...] = (*RAN, JobStatus.CANCELLED)
