"""The caller's part of deciding that a job is hung.

The one definition of "hung" is ``sk_inflight_tasks()`` (sql/schema): a job
whose owner's lease has lapsed is hung, whatever the caller says, since each
worker's lease is in its registration. Only a job with no owner recorded (a
Stakhanovise.NET worker runs it) needs a policy, and the in-flight view, reap
and cancel must apply the same one: so it is a value of its own here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HungPolicy:
    """A job with no owner recorded counts as hung once it has been processing this long."""

    unowned_after_s: float = 3600.0

    def params(self) -> dict[str, float]:
        return {"unowned_s": self.unowned_after_s}
