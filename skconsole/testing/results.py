"""What a test reads back: jobs as their rows in the database say, and the report of a run.

Everything here is read from ``sk_task_results_t`` (joined with the job's
``sk_tasks_queue_t`` row when it still waits), never from what a handler or a
mock reported: a test then asserts what a real worker would leave behind. The
text forms are written for assertion messages: one line a job, payloads and
errors shortened and made safe to print (:func:`skconsole.core.text.printable`).
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import kwargs_row

from skconsole.core.signature import final_exception_line
from skconsole.core.status import JobStatus
from skconsole.core.stored_error import readable_error
from skconsole.core.text import printable
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query

#: Jobs listed in an assertion message before "... and N more".
LISTED = 10
#: Characters of a payload shown in a one-line description.
PAYLOAD_CHARS = 160
#: Characters of an error's summary line shown in a one-line description.
ERROR_CHARS = 200

#: one statement for every read of this package (see the file)

APPLICATION_NAME = "skconsole-testing"


@dataclass(frozen=True, repr=False)
class JobResult:
    """One job as the database holds it when it was read.

    ``attempts`` is how many times a worker claimed it (``sk_attempt``, what a
    handler sees as ``JobContext.attempt``); ``error_count`` how many attempts
    failed since it was posted; ``error`` the last failure's stored text
    (Stakhanovise.NET's QueuedTaskError JSON: type, message and, for a Python
    handler, its traceback; kept after a later success), ``error_summary`` the
    line that names it (``Type: message``).
    ``run_after`` is set while the job waits in the queue: when it may run
    (a delay, or a retry's back-off); ``due_in`` the seconds from the read to
    then (negative: due already).
    """

    task_id: uuid.UUID
    task_type: str
    source: str
    #: the decoded JSON payload (the raw text if it is not valid JSON)
    payload: Any
    payload_json: str | None
    #: False for a payload some other tool wrote that is not valid JSON
    payload_is_json: bool
    status: JobStatus
    priority: int
    error: str | None
    error_count: int
    attempts: int
    processing_ms: int
    posted_at: datetime
    first_run_at: datetime | None
    finished_at: datetime | None
    run_after: datetime | None
    read_at: datetime
    #: the queue row's claim-order tiebreaker (None once claimed): posting order
    queue_order: int | None = None
    #: the job whose success posted this one (ctx.post, a pipeline's then=), if any
    parent_id: uuid.UUID | None = None
    #: how often its handler raised Snooze (not errors)
    snooze_count: int = 0

    @property
    def succeeded(self) -> bool:
        return self.status is JobStatus.PROCESSED

    @property
    def failed(self) -> bool:
        """Its last attempt failed: 4 Error, 5 Faulted or 6 Fatal."""
        return self.status.is_failed

    @property
    def waiting(self) -> bool:
        """It is in the queue, to run now or at ``run_after``."""
        return self.run_after is not None

    @property
    def will_retry(self) -> bool:
        """It failed and waits for its retry (4 Error)."""
        return self.status is JobStatus.ERROR and self.waiting

    @property
    def due_in(self) -> float | None:
        if self.run_after is None:
            return None
        return (self.run_after - self.read_at).total_seconds()

    @property
    def error_summary(self) -> str | None:
        """The line that names the error (``Type: message``; a traceback's exception
        line), or None."""
        if self.error is None:
            return None
        return final_exception_line(self.error)

    def describe(self) -> str:
        """One line for an assertion message: status, type, payload and what follows."""
        parts = [
            f"{int(self.status)} {self.status.label}",
            printable(self.task_type),
            payload_text(self.payload, self.payload_is_json),
            f"attempts={self.attempts}",
        ]
        if self.error_count:
            parts.append(f"errors={self.error_count}")
        due = self.due_in
        if due is not None:
            parts.append("due now" if due <= 0 else f"due in {due:.1f}s")
        summary = self.error_summary
        if summary:
            parts.append(f"error: {shorten(printable(summary), ERROR_CHARS)}")
        parts.append(f"id={self.task_id}")
        return "  ".join(parts)

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        return f"<JobResult {self.describe()}>"


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def payload_text(payload: Any, is_json: bool = True) -> str:
    """A payload as compact, printable JSON (or its raw text, marked), shortened."""
    if not is_json:
        text = f"<not JSON: {payload!r}>"
    else:
        try:
            text = json.dumps(payload, ensure_ascii=False, separators=(", ", ": "))
        except (TypeError, ValueError):
            text = repr(payload)
    return shorten(printable(text), PAYLOAD_CHARS)


def decode_payload(raw: str | None) -> tuple[Any, bool]:
    """The decoded payload and True, or the raw text and False if it is not JSON."""
    if raw is None:
        return None, True
    try:
        return json.loads(raw), True
    except (ValueError, RecursionError):
        return raw, False


def _status(code: int) -> JobStatus:
    try:
        return JobStatus(code)
    except ValueError:
        return JobStatus.UNKNOWN


def _job(*, payload_json: str | None, status: int, **columns: Any) -> JobResult:
    """A row of testing_jobs, read by name: the payload decoded, the status a JobStatus."""
    payload, is_json = decode_payload(payload_json)
    return JobResult(
        payload=payload,
        payload_json=payload_json,
        payload_is_json=is_json,
        status=_status(status),
        **columns,
    )


def read_jobs(
    conn: psycopg.Connection[Any],
    *,
    owner: uuid.UUID | None = None,
    types: Sequence[str] | None = None,
    statuses: Sequence[int] | None = None,
    queued: bool = False,
    due_within: float | None = None,
) -> list[JobResult]:
    """The jobs the filters select, unordered (each caller sorts for its purpose)."""
    params = {
        "owner": owner,
        "types": list(types) if types is not None else None,
        "statuses": [int(s) for s in statuses] if statuses is not None else None,
        "queued": queued,
        "due_within": due_within,
    }
    with conn.cursor(row_factory=kwargs_row(_job)) as cur:
        return cur.execute(query("testing_jobs"), params).fetchall()


def connect(db: Database | str) -> psycopg.Connection[Any]:
    database = db if isinstance(db, Database) else Database(db)
    return database.connect(application_name=APPLICATION_NAME)


def by_posting(jobs: Iterable[JobResult]) -> list[JobResult]:
    """Oldest post first; jobs of one post in queue order where they still wait."""
    return sorted(jobs, key=lambda j: (j.posted_at, j.queue_order is None, j.queue_order or 0))


def by_first_run(jobs: Iterable[JobResult]) -> list[JobResult]:
    """In the order they first ran."""
    return sorted(jobs, key=lambda j: (j.first_run_at or j.posted_at, j.posted_at))


def by_claim_order(jobs: Iterable[JobResult]) -> list[JobResult]:
    """In the order a worker would claim them: priority, then time it may run."""
    return sorted(jobs, key=lambda j: (j.priority, j.run_after or j.posted_at, j.queue_order or 0))


def listing(jobs: Sequence[JobResult], limit: int = LISTED, indent: str = "  ") -> str:
    """Up to ``limit`` jobs, one a line, and how many more there are."""
    lines = [indent + job.describe() for job in jobs[:limit]]
    if len(jobs) > limit:
        lines.append(f"{indent}... and {len(jobs) - limit} more")
    return "\n".join(lines)


def status_counts(jobs: Iterable[JobResult]) -> str:
    """ "2 Processed, 1 Faulted": statuses in code order."""
    counts = Counter(job.status for job in jobs)
    return ", ".join(f"{counts[s]} {s.label}" for s in sorted(counts))


@dataclass(frozen=True, repr=False)
class RunReport:
    """Every job a :func:`~skconsole.testing.run_until_idle` call ran, as it ended.

    ``jobs``: each job the call's worker claimed, as the database holds it when
    the call ended (in the order they first ran): 3 Processed, 4 Error (it
    waits for its retry: see ``pending``), 5 Faulted, 6 Fatal, or 1
    Unprocessed when it was handed back (a handler that snoozed it, or a run
    stopped by its timeout). ``pending``: the jobs of the call's types still
    waiting in the queue when it ended (posted with a delay, retries backing
    off, types paused) or waiting for other jobs (posted ``after=`` jobs not all
    succeeded), in claim order.
    """

    jobs: tuple[JobResult, ...]
    pending: tuple[JobResult, ...]
    types: tuple[str, ...]
    elapsed: float

    @property
    def succeeded(self) -> list[JobResult]:
        """Jobs that ended 3 Processed."""
        return [j for j in self.jobs if j.succeeded]

    @property
    def failed(self) -> list[JobResult]:
        """Jobs whose last attempt failed: 4 Error (to retry), 5 Faulted, 6 Fatal."""
        return [j for j in self.jobs if j.failed]

    @property
    def retrying(self) -> list[JobResult]:
        """Jobs that failed and wait for their retry (4 Error)."""
        return [j for j in self.jobs if j.will_retry]

    def by_type(self, task_type: str) -> list[JobResult]:
        return [j for j in self.jobs if j.task_type == task_type]

    def by_status(self, *statuses: JobStatus | int) -> list[JobResult]:
        wanted = {int(s) for s in statuses}
        return [j for j in self.jobs if int(j.status) in wanted]

    def counts(self) -> dict[JobStatus, int]:
        """How many jobs ended in each status."""
        return dict(sorted(Counter(j.status for j in self.jobs).items()))

    def job(self, task_id: uuid.UUID | str) -> JobResult:
        """The job with this id; AssertionError (listing the run) if it did not run."""
        __tracebackhide__ = True
        wanted = uuid.UUID(str(task_id))
        for j in self.jobs:
            if j.task_id == wanted:
                return j
        raise AssertionError(f"job {wanted} did not run in this call\n{self}")

    def only(self, task_type: str | None = None) -> JobResult:
        """The one job that ran (of ``task_type``); AssertionError listing them otherwise."""
        __tracebackhide__ = True
        jobs = self.jobs if task_type is None else tuple(self.by_type(task_type))
        if len(jobs) == 1:
            return jobs[0]
        what = "job" if task_type is None else f"job of type {task_type!r}"
        raise AssertionError(f"expected exactly one {what} to have run, {len(jobs)} did\n{self}")

    def assert_all_succeeded(self) -> None:
        """AssertionError unless every job that ran ended 3 Processed; the message
        holds each failure's whole error (the handler's traceback)."""
        __tracebackhide__ = True
        bad = [j for j in self.jobs if not j.succeeded]
        if not bad:
            return
        details = []
        for j in bad[:LISTED]:
            details.append("  " + j.describe())
            if j.error:
                details.append(
                    _indented(printable(readable_error(j.error), keep_newlines=True), "      ")
                )
        if len(bad) > LISTED:
            details.append(f"  ... and {len(bad) - LISTED} more")
        raise AssertionError(
            f"{len(bad)} of {len(self.jobs)} job(s) did not succeed:\n" + "\n".join(details)
        )

    def __len__(self) -> int:
        return len(self.jobs)

    def __iter__(self) -> Iterator[JobResult]:
        return iter(self.jobs)

    def summary(self) -> str:
        ran = f"{len(self.jobs)} job(s) ran in {self.elapsed:.2f}s"
        if self.jobs:
            ran += f" ({status_counts(self.jobs)})"
        return f"{ran}; {len(self.pending)} waiting"

    def __str__(self) -> str:
        lines = [f"run of {', '.join(printable(t) for t in self.types)}: {self.summary()}"]
        if self.jobs:
            lines.append(listing(self.jobs, limit=2 * LISTED))
        if self.pending:
            lines.append("still waiting:")
            lines.append(listing(self.pending))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<RunReport {self.summary()}>"


def _indented(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())
