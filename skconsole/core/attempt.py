"""How one attempt of a job ended (``sk_attempts_t.outcome``), named once.

The statements that record an attempt write these words (finish_success.sql,
finish_failure.sql, hand_back.sql, reap.sql); an attempt still running is not
recorded yet and is read from the result row as ``RUNNING``.
"""

from __future__ import annotations

from enum import Enum


class AttemptOutcome(Enum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    #: given back unfinished (shutdown, self-fencing, a claim whose answer was lost)
    HANDED_BACK = "handed_back"
    #: the handler asked to run it later (raise Snooze)
    SNOOZED = "snoozed"
    #: its worker died or stopped answering; a reaper ended it
    REAPED = "reaped"
    RUNNING = "running"
