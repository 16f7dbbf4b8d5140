"""Edit: change one job's payload (and priority), then, if asked, run it again.

Only a job that waits (1 Unprocessed, 4 Error, 5 Faulted) or will not run
again by itself (6 Fatal, 7 Cancelled) can be edited: never one that runs
(2) or succeeded (3). The payload is checked as a producer checks it (UTF-8,
valid JSON, not nested too deeply). The write locks the result row first, then
decides from it as it now stands (its status, whether it waits in the queue),
and changes it and, when the job waits in the queue, its queue row in one
transaction; a job claimed between the preview and the write is left alone. With ``requeue`` a failed or cancelled job is also posted again as
1 Unprocessed, ready now, as :data:`skconsole.ops.REQUEUE` does. The audit
row's details hold the old and the new payload and priority.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg.rows import dict_row

from skconsole.core.errors import ConfigError, InvalidJobError
from skconsole.core.json_types import JsonObject
from skconsole.core.status import FAILED, WAITING, JobStatus
from skconsole.core.text import printable
from skconsole.db.sqlfiles import query
from skconsole.ops.common import ActionProgress, Batches, Conn, Done, batch_transaction
from skconsole.ops.guard import QUEUE, RESULTS
from skconsole.ops.job_action import JobAction, Queries, StatusRule
from skconsole.ops.model import ActionResult, JobRow, Preview, Selection
from skconsole.ops.spec import Needs, Params, Steps, Wording
from skconsole.producer.job import MAX_PRIORITY, validate_payload_json
from skconsole.read.query import fetch

#: What may be edited: waiting, failed or cancelled (never 2 Processing, 3 Processed).
EDITABLE: tuple[JobStatus, ...] = tuple(sorted({*WAITING, *FAILED, JobStatus.CANCELLED}))
#: What ``requeue`` posts again: failed or cancelled.
REQUEUABLE: tuple[JobStatus, ...] = tuple(sorted({*FAILED, JobStatus.CANCELLED}))


def _codes(statuses: tuple[JobStatus, ...]) -> str:
    return ", ".join(str(int(s)) for s in statuses)


@dataclass(frozen=True)
class EditParams(Params):
    """The new payload (JSON text), the new priority (None: unchanged), whether to post
    a failed job again and, then, whether to start its error count from 0."""

    payload: str = ""
    priority: int | None = None
    requeue: bool = False
    reset_errors: bool = False

    def __post_init__(self) -> None:
        try:
            validate_payload_json(self.payload)
        except InvalidJobError as exc:
            raise ConfigError(f"--payload: {exc}") from None
        priority = self.priority
        if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
            raise ConfigError(f"--priority must be a whole number, got {priority!r}")
        if priority is not None and not 0 <= priority <= MAX_PRIORITY:
            raise ConfigError(f"--priority must be between 0 and {MAX_PRIORITY}, got {priority}")
        if self.reset_errors and not self.requeue:
            raise ConfigError("--reset-errors goes with --requeue (it starts the re-run afresh)")

    def sql(self) -> dict[str, object]:
        return {
            "payload": self.payload,
            "priority": self.priority,
            "requeue": self.requeue,
            "reset_errors": self.reset_errors,
        }

    def details(self) -> JsonObject:
        return {"requeue": self.requeue, "reset_errors": self.reset_errors}

    def phrase(self) -> str:
        return " and run it again now" if self.requeue else ""

    @classmethod
    def from_details(cls, details: Mapping[str, object]) -> EditParams | None:
        """Whether the edit ran the job again (the payloads are in ``details.old`` and
        ``details.new``, not worded)."""
        return cls("null", requeue=details.get("requeue") is True)

    def done_phrase(self) -> str:
        return ", posted again, ready now" if self.requeue else ""


def one_job(action: str, selection: Selection) -> None:
    """An edit names exactly one job by id, and nothing else."""
    if (
        len(selection.ids) != 1
        or selection.group is not None
        or selection.statuses
        or selection.older_than_seconds is not None
    ):
        raise ConfigError(f"{action} applies to one job: give --id ID and nothing else")


def refusal(task_id: UUID | str, status: int, requeue: bool = False) -> str | None:
    """The one line refusing to edit a job in ``status``; None when it may be edited."""
    if status not in EDITABLE:
        why = {
            JobStatus.PROCESSING: "it is running",
            JobStatus.PROCESSED: "it succeeded",
        }.get(JobStatus(status) if status in set(JobStatus) else JobStatus.UNKNOWN, "")
        return (
            f"edit refused: job {task_id} is {status} {JobStatus.label_of(status)}"
            + (f" ({why})" if why else "")
            + f"; only waiting or failed jobs ({_codes(EDITABLE)}) can be edited"
        )
    if requeue and status not in REQUEUABLE:
        return (
            f"edit refused: --requeue posts failed jobs again ({_codes(REQUEUABLE)}); job "
            f"{task_id} is {status} {JobStatus.label_of(status)} and already waits"
        )
    return None


def editable_json(text: str | None) -> str:
    """A payload as a person edits and compares it: pretty-printed JSON (2 spaces),
    every character a terminal could act on written as a JSON escape, so the text
    is the same JSON value and safe to show. Text that is not JSON is shown printable."""
    if text is None:
        return "null"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return printable(text, keep_newlines=True)
    pretty = json.dumps(value, indent=2, ensure_ascii=False)
    if printable(pretty, keep_newlines=True) == pretty and "\t" not in pretty:
        return pretty
    return "".join(_escaped(c) for c in pretty)


def _escaped(c: str) -> str:
    # outside strings pretty JSON holds only printable characters and newlines,
    # so escaping any other character changes no value
    if c == "\n" or (c.isprintable() and printable(c) == c):
        return c
    code = ord(c)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def same_payload(old: str | None, new: str) -> bool:
    """Whether two payloads hold the same JSON value (formatting aside)."""
    return editable_json(old) == editable_json(new)


def payload_diff(old: str | None, new: str) -> list[str]:
    """A unified diff of the two payloads, pretty-printed (lines start with +, - or space);
    empty when they hold the same value."""
    lines = difflib.unified_diff(
        editable_json(old).splitlines(),
        editable_json(new).splitlines(),
        "old payload",
        "new payload",
        lineterm="",
    )
    return list(lines)


def _sides(row: Mapping[str, Any] | None) -> JsonObject:
    """What the audit row and the result record of the write: before, after."""
    if row is None:
        return {"old": None, "new": None, "status": None, "requeued": False}
    return {
        "old": {"payload": row["old_payload"], "priority": int(row["old_priority"])},
        "new": {"payload": row["task_payload"], "priority": int(row["task_priority"])},
        "status": int(row["old_status"]),
        "requeued": bool(row["requeued"]),
        "queue_row_updated": bool(row["queue_row_updated"]),
    }


@dataclass(frozen=True, slots=True)
class EditedJob:
    """The job an edit previews, as ``ops_edit_job`` reads it."""

    task_id: UUID
    task_type: str
    status: int
    payload: str | None
    priority: int
    error_count: int
    at: datetime | None
    note: str | None
    queued: bool

    @property
    def row(self) -> JobRow:
        return JobRow(
            self.task_id,
            self.task_type,
            self.status,
            self.priority,
            self.error_count,
            self.at,
            self.note,
        )


@dataclass(frozen=True)
class EditAction(JobAction[EditParams]):
    """Edit as a job action: one job, previewed as it is now, written with its diff."""

    def default_params(self) -> EditParams:
        raise ConfigError("edit needs a payload: --payload JSON")

    def _preview(
        self, conn: Conn, selection: Selection, params: EditParams, sample_size: int
    ) -> Preview:
        """The job as it is now, or a one-line refusal (ConfigError): gone, running,
        succeeded. Its details hold the old and the new payload and priority."""
        one_job(self.name, selection)
        task_id = selection.ids[0]
        found = fetch(conn, "ops_edit_job", EditedJob, {"task_id": task_id})
        if not found:
            raise ConfigError(f"edit refused: no job {task_id} (never posted, or purged)")
        (edited,) = found
        status, payload, priority = edited.status, edited.payload, edited.priority
        refused = refusal(task_id, status, params.requeue)
        if refused is not None:
            raise ConfigError(refused)
        new_priority = priority if params.priority is None else params.priority
        details: JsonObject = {
            **params.details(),
            "old": {"payload": payload, "priority": priority},
            "new": {"payload": params.payload, "priority": new_priority},
            "status": status,
            "queued": edited.queued,
            "no_change": not params.requeue
            and new_priority == priority
            and same_payload(payload, params.payload),
        }
        return Preview(self.name, selection, 1, (edited.row,), (task_id,), details)

    def _execute(
        self, conn: Conn, selection: Selection, params: EditParams, steps: Steps
    ) -> ActionResult:
        """Write the edit on the previewed id; the status is re-checked by the statement."""
        one_job(self.name, selection)
        ids = list(dict.fromkeys(steps.ids if steps.ids is not None else selection.ids))
        one_job(self.name, Selection(ids=tuple(ids)))
        where = {
            "ids": ids,
            "task_type": selection.task_type,
            "statuses": [int(s) for s in EDITABLE],
            **params.sql(),
        }

        def write(progress: ActionProgress) -> Done:
            with batch_transaction(conn, progress) as batch:  # the edit and its audit row
                # the row first, then the decision, in a statement that sees it as it is
                locked = fetch(conn, "ops_edit_lock", lambda task_id: task_id, where)
                row = None
                if locked:
                    with conn.cursor(row_factory=dict_row) as cur:
                        row = cur.execute(
                            query("ops_edit"), {**where, "ids": locked}, prepare=False
                        ).fetchone()
                batch.add(1 if row is not None else 0)
            progress.report(batch.changed, 1)
            return Done(batch.changed, _sides(row))

        batches: Batches = write
        return self._audited(conn, selection, steps, 1, batches, params.details())


EDIT = EditAction(
    Wording(
        "edit",
        "edited",
        "job",
        outcome="{Done} {target}{done_phrase}.",
        left_alone="{Target} changed state meanwhile and was left alone.",
    ),
    EditParams,
    StatusRule(allowed=EDITABLE),
    Queries(select="ops_select_results", write="ops_edit"),
    Needs(update=(RESULTS, QUEUE), insert=(QUEUE,)),
    check_selection=one_job,
    groups=False,
)
