"""What every operator action takes and gives: a selection, a preview, a result.

An action runs in two steps so a person (or the console) can see the scope
before anything changes: ``preview`` counts the jobs and captures their ids;
``execute`` acts on exactly those ids, re-checking each one in SQL, and
reports the ones that changed state in the meantime as left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TypeAlias
from uuid import UUID

from skconsole.core.durations import check_seconds
from skconsole.core.errors import ConfigError
from skconsole.core.json_types import Json, JsonObject
from skconsole.core.payload_terms import PayloadTerm
from skconsole.core.status import JobStatus
from skconsole.core.text import is_valid_utf8, quoted
from skconsole.producer import MAX_NAME
from skconsole.read.forecast import Forecast

#: Called after each batch with (jobs handled so far, jobs in all).
ProgressCallback = Callable[[int, int], None]

#: Jobs per transaction: big selections never hold many row locks for long.
BATCH_SIZE = 2_000
SAMPLE_SIZE = 10
NO_ERROR_GROUP = "(no error text)"
#: The oldest ``older_than_seconds``: 100 years (36,500 days), as for every duration.
MAX_OLDER_THAN_S = 36_500 * 86_400.0

#: A preview's details: JSON, except that a server action's target keeps the instants
#: its read query returned as datetime (the console formats them; ``as_dict`` writes them
#: as ``str()`` does, as ``--json`` always printed them).
PreviewDetails: TypeAlias = "Mapping[str, Json | datetime]"


def count_in(details: Mapping[str, object], key: str) -> int:
    """A count the details hold (0 when absent or null), for the words of a result."""
    value = details.get(key)
    return int(value) if isinstance(value, int | float) else 0


def seconds_in(details: Mapping[str, object], key: str) -> float | None:
    """A number of seconds the details hold (None when absent or null)."""
    value = details.get(key)
    return value if isinstance(value, int | float) else None


@dataclass(frozen=True)
class Selection:
    """Which jobs an action applies to; every given filter must match.

    ``older_than_seconds`` is measured from the job's last activity (finalized,
    else last attempt, else posted; for reap: the current attempt's start).
    Preview turns it into ``cutoff``, an absolute instant on the server's
    clock, so execute judges by the very same time. ``where``: conditions on
    the payload (``--where payload.PATH=VALUE``), all of which must hold.
    """

    ids: tuple[UUID, ...] = ()
    group: str | None = None
    task_type: str | None = None
    statuses: tuple[int, ...] = ()
    older_than_seconds: float | None = None
    cutoff: datetime | None = None
    where: tuple[PayloadTerm, ...] = ()

    def __post_init__(self) -> None:
        if self.task_type is not None:
            _check_text("--type", self.task_type)
            if len(self.task_type) > MAX_NAME:
                raise ConfigError(
                    f"--type is longer than {MAX_NAME} characters (the longest a task type can be)"
                )
        if self.group is not None:
            _check_text("--group", self.group)
        unknown = sorted(set(self.statuses) - {int(s) for s in JobStatus})
        if unknown:
            shown = ", ".join(str(s) for s in unknown[:5])
            raise ConfigError(f"unknown status code(s) {shown}: use 0-7")
        if self.older_than_seconds is not None:
            check_seconds(
                self.older_than_seconds,
                option="--older-than",
                maximum=MAX_OLDER_THAN_S,
                shown_maximum="36500d (100 years)",
            )

    @property
    def is_empty(self) -> bool:
        return not (
            self.ids
            or self.group
            or self.task_type
            or self.statuses
            or self.older_than_seconds is not None
            or self.cutoff is not None
            or self.where
        )

    def frozen(self, now: datetime) -> Selection:
        """This selection with its age fixed to an absolute cutoff."""
        if self.cutoff is not None or self.older_than_seconds is None:
            return self
        return replace(self, cutoff=now - timedelta(seconds=self.older_than_seconds))

    def as_dict(self) -> JsonObject:
        """JSON form (for the audit table and ``--json``); long id lists are cut to 100."""
        d: JsonObject = {}
        if self.ids:
            d["ids"] = [str(i) for i in self.ids[:100]]
            if len(self.ids) > 100:
                d["ids_count"] = len(self.ids)
        if self.group is not None:
            d["group"] = self.group
        if self.task_type is not None:
            d["task_type"] = self.task_type
        if self.statuses:
            d["statuses"] = list(self.statuses)
        if self.older_than_seconds is not None:
            d["older_than_seconds"] = self.older_than_seconds
        if self.cutoff is not None:
            d["cutoff"] = self.cutoff.isoformat()
        if self.where:
            d["where"] = [t.as_json() for t in self.where]
        return d

    def describe(self) -> str:
        """The scope in words, for confirmations: "type emails.send, status 5 Faulted"."""
        parts: list[str] = []
        if self.ids:
            parts.append(f"{len(self.ids)} id(s)")
        if self.group is not None:
            parts.append(f"group {self.group!r}")
        if self.task_type is not None:
            parts.append(f"type {self.task_type}")
        if self.statuses:
            parts.append(
                "status " + ", ".join(f"{s} {JobStatus.label_of(s)}" for s in self.statuses)
            )
        if self.cutoff is not None:
            parts.append(f"last active before {self.cutoff:%Y-%m-%d %H:%M:%S %Z}")
        elif self.older_than_seconds is not None:
            parts.append(f"older than {self.older_than_seconds:g}s")
        parts.extend(f"where {t}" for t in self.where)
        return ", ".join(parts) or "everything"


def _check_text(option: str, value: str) -> None:
    """Text a query can carry: a string, valid UTF-8, no NUL."""
    if not isinstance(value, str):
        raise ConfigError(f"{option} must be text, got {type(value).__name__}")
    if not is_valid_utf8(value):
        raise ConfigError(f"{option} is not valid UTF-8 text: {quoted(value)}")
    if "\x00" in value:
        raise ConfigError(f"{option} must not contain NUL characters")


@dataclass(frozen=True)
class JobRow:
    """One job of a preview's sample."""

    task_id: UUID
    task_type: str
    status: int
    priority: int
    error_count: int
    at: datetime | None  # the instant its age is measured from
    note: str | None  # failure signature, or why it is hung

    def as_dict(self) -> JsonObject:
        return {
            "task_id": str(self.task_id),
            "task_type": self.task_type,
            "status": JobStatus.label_of(self.status),
            "priority": self.priority,
            "error_count": self.error_count,
            "at": self.at.isoformat() if self.at else None,
            "note": self.note,
        }


@dataclass(frozen=True)
class Preview:
    """What an action would change, as seen now.

    ``ids`` are the captured jobs: pass them to ``execute(..., ids=preview.ids)``
    to act on exactly those. None for a purge of a large selection, whose
    frozen ``selection`` (absolute cutoff) is re-evaluated instead: a final
    result cannot newly match it, so the effect is the same.
    """

    action: str
    selection: Selection
    count: int
    sample: tuple[JobRow, ...]
    ids: tuple[UUID, ...] | None
    details: PreviewDetails = field(default_factory=dict)
    #: the captured jobs counted by task type, most first (a job action's preview)
    by_type: tuple[tuple[str, int], ...] = ()
    #: what follows from the action at the present flow (actions that move jobs:
    #: ``skconsole.ops.forecast``); None: no forecast
    forecast: Forecast | None = None

    def json_details(self) -> JsonObject:
        """The details as JSON: an instant as ``str()`` writes it."""
        return {k: str(v) if isinstance(v, datetime) else v for k, v in self.details.items()}

    def as_dict(self) -> JsonObject:
        return {
            "action": self.action,
            "dry_run": True,
            "selection": self.selection.as_dict(),
            "count": self.count,
            "sample": [r.as_dict() for r in self.sample],
            "details": self.json_details(),
            **({"forecast": self.forecast.as_dict()} if self.forecast is not None else {}),
        }


@dataclass(frozen=True)
class ActionResult:
    """What an executed action did.

    ``requested``: the jobs it set out to change; ``changed``: those it did;
    ``skipped_changed_state``: those left alone because they no longer
    matched (finished, claimed, already changed by someone else) or were
    locked by a worker at that instant.
    """

    action: str
    requested: int
    changed: int
    skipped_changed_state: int
    details: JsonObject = field(default_factory=dict)
    audit_id: int | None = None

    def as_dict(self) -> JsonObject:
        return {
            "action": self.action,
            "dry_run": False,
            "requested": self.requested,
            "changed": self.changed,
            "skipped_changed_state": self.skipped_changed_state,
            "details": self.details,
            "audit_id": self.audit_id,
        }
