"""One job as people read it, in the CLI (``skconsole job``) and the console's job
detail alike: its fields, its lineage, its attempts, and the plain text that
``c`` copies. Text only: each face makes it printable where it draws it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from skconsole.core.attempt import AttemptOutcome
from skconsole.core.status import JobStatus
from skconsole.core.stored_error import readable_error
from skconsole.read import JobAttempt, JobDetail, WorkerInfo
from skconsole.read.after import AfterJob, pending
from skconsole.read.attempts import ATTEMPTS_KEPT
from skconsole.views.inflight import progress_text


def owner_text(job: JobDetail, workers: Iterable[WorkerInfo] = ()) -> str:
    """Who last owned the job: "host pid N" when the worker is among ``workers``,
    else "worker <short id>"; "-" when no owner is recorded."""
    if job.owner_worker_id is None:
        return "-"
    known = next((w for w in workers if w.worker_id == job.owner_worker_id), None)
    if known is not None:
        return f"{known.host} pid {known.pid}"
    return f"worker {str(job.owner_worker_id)[:8]}"


def _times(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def lineage_text(job: JobDetail) -> str | None:
    """Where the job came from: "stage 2 of orders, after job <id> (orders.validate)" for
    a pipeline's stage, "posted by job <id> (<its type>)" for a ctx.post job; None when
    a producer posted it."""
    if job.parent_task_id is None:
        return f"stage {job.stage} of {job.pipeline}" if job.pipeline else None
    parent = f"job {job.parent_task_id} ({job.parent_task_type or 'purged'})"
    if job.pipeline:
        return f"stage {job.stage} of {job.pipeline}, after {parent}"
    return f"posted by {parent}"


#: The jobs an after= line names before it says "and N more".
AFTER_SHOWN = 5


def _after_list(jobs: list[AfterJob]) -> str:
    named = ", ".join(f"{str(a.task_id)[:8]} {a.state}" for a in jobs[:AFTER_SHOWN])
    more = f", and {len(jobs) - AFTER_SHOWN:,} more" if len(jobs) > AFTER_SHOWN else ""
    return named + more


def after_text(job: JobDetail) -> str | None:
    """What a fan-in job waits for: "waits for 2 of 3: 1a2b3c4d Processing, 5e6f7a8b
    Unprocessed" while it waits, "posted after 3 jobs: ..." once released or
    cancelled; None when it was posted after nothing."""
    if not job.after:
        return None
    waiting = pending(job.after)
    if waiting:
        return f"waits for {len(waiting)} of {len(job.after)}: {_after_list(waiting)}"
    return f"posted after {_times(len(job.after), 'job', 'jobs')}: {_after_list(list(job.after))}"


def lineage_fields(job: JobDetail) -> list[tuple[str, str]]:
    """What it waits for, its parent, the jobs it posted and its snoozes: each only
    when there is one."""
    out = []
    after = after_text(job)
    if after is not None:
        out.append(("after", after))
    lineage = lineage_text(job)
    if lineage is not None:
        out.append(("lineage", lineage))
    if job.children:
        out.append(("children", f"posted {_times(job.children, 'job', 'jobs')}"))
    if job.snooze_count:
        out.append(("snoozes", f"snoozed {_times(job.snooze_count, 'time', 'times')}"))
    return out


def extra_fields(job: JobDetail) -> list[tuple[str, str]]:
    """The fields shown only when known: its running attempt's progress, its lineage
    and snoozes, its failure group, when it becomes eligible."""
    out = []
    if job.progress is not None:
        at = job.progress.at.strftime("%Y-%m-%d %H:%M:%S")
        out.append(("progress", f"{progress_text(job.progress)} (reported {at})"))
    out += lineage_fields(job)
    if job.signature:
        out.append(("failure group", job.signature))
    if job.queued_until is not None:
        out.append(("eligible from", job.queued_until.strftime("%Y-%m-%d %H:%M:%S")))
    return out


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value is not None else "-"


def errors_text(job: JobDetail, *, sep: str = " ") -> str:
    """How many errors the job has had and, when it has had one, whether the last was
    recoverable (retried) or not: "0", "2 (last one recoverable: yes)"."""
    if job.error_count == 0:
        return "0"
    return f"{job.error_count}{sep}(last one recoverable: {'yes' if job.recoverable else 'no'})"


def job_text(job: JobDetail, owner: str) -> str:
    """The job as plain text, for the clipboard or a bug report."""
    lines = [
        f"task_id: {job.task_id}",
        f"type: {job.task_type}",
        f"source: {job.source}",
        f"status: {JobStatus.label_of(job.status)}",
        f"priority: {job.priority}",
        f"errors: {errors_text(job)}",
        f"attempt: {job.attempt}  owner: {owner}",
        f"posted: {_iso(job.posted_at)}",
        f"first attempt: {_iso(job.first_attempt_at)}",
        f"last attempt: {_iso(job.last_attempt_at)}",
        f"finalized: {_iso(job.finalized_at)}",
        f"processing time: {job.processing_ms} ms",
        *(f"{k}: {v}" for k, v in extra_fields(job)),
        "",
        "payload:",
        job.payload if job.payload is not None else "null",
        "",
        "last error:",
        readable_error(job.last_error) if job.last_error else "-",
    ]
    lines += ["", "attempts:", *attempt_lines(job)]
    children = children_lines(job)
    if children:
        lines += ["", "children:", *children]
    return "\n".join(lines)


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


def attempt_worker(a: JobAttempt) -> str:
    """ "web-1 pid 2200 v1.8.3": who ran it, as it registered then."""
    if a.host is None and a.worker_id is None:
        return "-"
    who = f"{a.host} pid {a.pid}" if a.host is not None else f"worker {str(a.worker_id)[:8]}"
    return f"{who} {a.app_version}" if a.app_version else who


def attempt_outcome(a: JobAttempt) -> str:
    """ "failed → Error", "running": how it ended and the status it left the job in."""
    words = a.outcome.value.replace("_", " ")
    if a.outcome is AttemptOutcome.RUNNING:
        return words
    return f"{words} → {a.status.label}"


def attempt_error(a: JobAttempt) -> str | None:
    """The attempt's error on one line (its type and message), if it had one."""
    if not a.error:
        return None
    text = readable_error(a.error).strip()
    return text.splitlines()[0] if text else None


def attempt_lines(job: JobDetail) -> list[str]:
    """One line per attempt kept (and its error under it); for a job whose attempts are
    not recorded (a .NET consumer ran them), what the result row knows."""
    if not job.attempts:
        if job.first_attempt_at is None:
            return ["none yet"]
        return [
            "none recorded (another consumer ran them, or they predate attempt records):"
            f" first {_when(job.first_attempt_at)}, last {_when(job.last_attempt_at)},"
            f" {job.error_count} error(s); the last error is the job's"
        ]
    lines = []
    if job.attempts[0].attempt > 1:
        lines.append(f"(the last {ATTEMPTS_KEPT} attempts are kept; earlier ones are gone)")
    for a in job.attempts:
        lines.append(
            f"#{a.attempt}  {_when(a.started_at)} → {_when(a.ended_at)}  {attempt_outcome(a)}"
            f"  {attempt_worker(a)}"
        )
        error = attempt_error(a)
        if error is not None:
            lines.append(f"    {error}")
    return lines


def children_lines(job: JobDetail) -> list[str]:
    """The jobs it posted, the first few listed."""
    lines = [f"{c.task_id}  {c.task_type}  {c.status.label}" for c in job.child_jobs]
    if job.children > len(job.child_jobs):
        lines.append(f"... {job.children - len(job.child_jobs):,} more")
    return lines
