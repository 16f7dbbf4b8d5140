"""A retention policy: how long finished results of a task type (or, by default, of
every type without a policy of its own) are kept before the workers purge them.

It lives here, below both, because the workers read policies to purge
(:mod:`skconsole.worker.retention`) and the operator action sets them
(:data:`skconsole.ops.RETENTION`); neither may import the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from skconsole.core.durations import format_limit
from skconsole.core.json_types import JsonObject
from skconsole.core.status import FINAL, JobStatus

#: the key of the default policy in sk_retention_t (a task type is never empty)
DEFAULT = ""


@dataclass(frozen=True, slots=True)
class Policy:
    """Keep finished results of ``task_type`` (None: every type without a policy of
    its own) for ``older_than_s`` seconds after they finished."""

    task_type: str | None
    older_than_s: float
    include_faulted: bool = False
    set_at: datetime | None = None
    set_by: str | None = None

    @classmethod
    def from_row(
        cls,
        *,
        task_type: str,
        older_than_s: float,
        include_faulted: bool,
        set_at: datetime | None = None,
        set_by: str | None = None,
    ) -> Policy:
        """A policy as sk_retention_t stores it ('' is the default), by column name."""
        return cls(task_type or None, float(older_than_s), bool(include_faulted), set_at, set_by)

    @property
    def statuses(self) -> list[int]:
        """What the policy purges: 3, 6, 7, and 5 Faulted only when it says so."""
        kept = (*FINAL, JobStatus.FAULTED) if self.include_faulted else FINAL
        return sorted(int(s) for s in kept)

    def scope(self, policies: list[Policy]) -> dict[str, object]:
        """Its statements' parameters: its type, or (the default) every type but
        those with a policy of their own."""
        typed = [p.task_type for p in policies if p.task_type is not None]
        return {
            "task_type": self.task_type,
            "except_types": typed if self.task_type is None else None,
            "statuses": self.statuses,
            "older_than_s": self.older_than_s,
        }

    def describe(self) -> str:
        scope = self.task_type if self.task_type is not None else "default (every other type)"
        faulted = ", 5 Faulted included" if self.include_faulted else ""
        return f"{scope}: finished results older than {format_limit(self.older_than_s)}{faulted}"

    def as_json(self) -> JsonObject:
        return {
            "task_type": self.task_type,
            "default": self.task_type is None,
            "older_than_s": self.older_than_s,
            "include_faulted": self.include_faulted,
            "set_at": self.set_at.isoformat() if self.set_at else None,
            "set_by": self.set_by,
        }

    def scope_json(self) -> dict[str, object]:
        """The audit row's selection of a change to (or a purge by) this policy."""
        return {"task_type": self.task_type, "default": self.task_type is None}
