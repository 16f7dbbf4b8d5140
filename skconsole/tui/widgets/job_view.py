"""One job in full: fields, payload and the whole error, scrollable and selectable.

Every field is shown printable (one line each); the payload and the error keep
their line breaks and tabs, and any other control character in them is shown
as a visible escape (``\x1b``), never written raw.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from skconsole.core.status import JobStatus
from skconsole.core.stored_error import readable_error
from skconsole.read import JobDetail, WorkerInfo
from skconsole.tui.formatting import fmt_ago, printable, short_id


def owner_text(job: JobDetail, workers: Iterable[WorkerInfo] = ()) -> str:
    """Who last owned the job: "host pid N" when the worker is among ``workers``,
    else "worker <short id>"; "-" when no owner is recorded."""
    if job.owner_worker_id is None:
        return "-"
    known = next((w for w in workers if w.worker_id == job.owner_worker_id), None)
    if known is not None:
        return f"{known.host} pid {known.pid}"
    return f"worker {short_id(str(job.owner_worker_id))}"


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


def lineage_fields(job: JobDetail) -> list[tuple[str, str]]:
    """Its parent, the jobs it posted and its snoozes: each only when there is one."""
    out = []
    lineage = lineage_text(job)
    if lineage is not None:
        out.append(("lineage", lineage))
    if job.children:
        out.append(("children", f"posted {_times(job.children, 'job', 'jobs')}"))
    if job.snooze_count:
        out.append(("snoozes", f"snoozed {_times(job.snooze_count, 'time', 'times')}"))
    return out


def extra_fields(job: JobDetail) -> list[tuple[str, str]]:
    """The fields shown only when known: its lineage and snoozes, its failure group,
    when it becomes eligible."""
    out = lineage_fields(job)
    if job.signature:
        out.append(("failure group", job.signature))
    if job.queued_until is not None:
        out.append(("eligible from", job.queued_until.strftime("%Y-%m-%d %H:%M:%S")))
    return out


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value is not None else "-"


def job_text(job: JobDetail, owner: str) -> str:
    """The job as plain text, for the clipboard or a bug report."""
    lines = [
        f"task_id: {job.task_id}",
        f"type: {job.task_type}",
        f"source: {job.source}",
        f"status: {JobStatus.label_of(job.status)}",
        f"priority: {job.priority}",
        f"errors: {job.error_count} (last recoverable: {'yes' if job.recoverable else 'no'})",
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
    return "\n".join(lines)


def pretty_payload(payload: str | None) -> str:
    """The payload indented for reading, printable (line breaks kept)."""
    if payload is None:
        return "null"
    try:
        text = json.dumps(json.loads(payload), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        text = payload
    return printable(text, keep_newlines=True)


class JobView(VerticalScroll):
    """The job detail body; the screen around it adds the title and keys."""

    def compose(self) -> ComposeResult:
        yield Static("", id="job-fields")
        yield Static("payload", classes="job-heading")
        yield Static("", id="job-payload")
        yield Static("last error", classes="job-heading")
        yield Static("", id="job-error")

    def show(self, job: JobDetail, now: float, owner: str) -> None:
        def when(value: datetime | None) -> str:
            if value is None:
                return "-"
            return f"{value.strftime('%Y-%m-%d %H:%M:%S')} ({fmt_ago(value, now)})"

        status = JobStatus.label_of(job.status)
        fields = [
            ("job", str(job.task_id)),
            ("type", job.task_type),
            ("status", status + ("  (waiting in the queue)" if job.queued else "")),
            ("priority", str(job.priority)),
            (
                "errors",
                f"{job.error_count}  last one recoverable: {'yes' if job.recoverable else 'no'}",
            ),
            ("attempt", f"{job.attempt}  owner: {owner}"),
            ("source", job.source),
            ("posted", when(job.posted_at)),
            ("first attempt", when(job.first_attempt_at)),
            ("last attempt", when(job.last_attempt_at)),
            ("finalized", when(job.finalized_at)),
            ("processing", f"{job.processing_ms:,} ms in total"),
            *extra_fields(job),
        ]
        shown = [(printable(k), printable(v)) for k, v in fields]
        width = max(len(k) for k, _ in shown)
        text = "\n".join(f"{k.rjust(width)}  {v}" for k, v in shown)
        self.query_one("#job-fields", Static).update(Content(text))
        self.query_one("#job-payload", Static).update(Content(pretty_payload(job.payload)))
        error = (
            printable(readable_error(job.last_error), keep_newlines=True) if job.last_error else "-"
        )
        self.query_one("#job-error", Static).update(Content(error))
