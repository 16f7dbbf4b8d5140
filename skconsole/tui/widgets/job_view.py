"""One job in full: the whole error first, then fields and payload, scrollable and selectable.

Every field is shown printable (one line each); the payload and the error keep
their line breaks and tabs, and any other control character in them is shown
as a visible escape (``\x1b``), never written raw.
"""

from __future__ import annotations

import json
from datetime import datetime

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from skconsole.core.status import FAILED, JobStatus
from skconsole.core.stored_error import readable_error
from skconsole.read import JobDetail
from skconsole.tui.formatting import fmt_ago, printable
from skconsole.views.job import (
    attempt_lines,
    errors_text,
    extra_fields,
    job_text,
    lineage_fields,
    lineage_text,
    owner_text,
)

__all__ = [
    "JobView",
    "extra_fields",
    "job_text",
    "lineage_fields",
    "lineage_text",
    "owner_text",
    "pretty_payload",
]


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
        # the error first: on an 80x24 terminal it is what the operator came for, and
        # after the fields and the payload it would be below the fold
        yield Static("last error", classes="job-heading", id="job-error-heading")
        yield Static("", id="job-error")
        yield Static("", id="job-fields")
        yield Static("payload", classes="job-heading")
        yield Static("", id="job-payload")
        # only for a job with attempts recorded (a .NET consumer's have none: the
        # fields above say what the result row knows)
        yield Static("attempts", classes="job-heading", id="job-attempts-heading")
        yield Static("", id="job-attempts")
        # a job that is not failed (it succeeded, or waits or runs again) shows an
        # earlier attempt's error last, not as its state
        yield Static("error of an earlier attempt", classes="job-heading", id="job-earlier-heading")
        yield Static("", id="job-earlier-error")

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
            ("errors", errors_text(job, sep="  ")),
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
        # a failed job starts with its error; one with no error, with its fields
        error = (
            printable(readable_error(job.last_error), keep_newlines=True) if job.last_error else ""
        )
        failed = job.status in FAILED
        for heading, body, visible in (
            ("#job-error-heading", "#job-error", bool(error) and failed),
            ("#job-earlier-heading", "#job-earlier-error", bool(error) and not failed),
        ):
            self.query_one(heading, Static).display = visible
            view = self.query_one(body, Static)
            view.display = visible
            view.update(Content(error if visible else ""))
        shown_attempts = bool(job.attempts)
        self.query_one("#job-attempts-heading", Static).display = shown_attempts
        attempts = self.query_one("#job-attempts", Static)
        attempts.display = shown_attempts
        attempts.update(Content(printable("\n".join(attempt_lines(job)), keep_newlines=True)))
