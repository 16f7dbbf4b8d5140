"""Cancel: jobs out of the queue, or stopped while they run; their results 7 Cancelled.

Waiting jobs are cancelled at once; one a worker claims at that instant is
left alone. A running job (``--id``, or ``--status 2``) is fenced by its
claim token: its worker, if alive, is told on its own channel, stops the
handler (an async one is cancelled; a sync one sees ``ctx.cancelled``) and
records 7 Cancelled; if the worker is gone (the job is hung), the job is
cancelled here, as it can no longer run. The action then waits a few seconds
for the workers, and its result says how many were cancelled while waiting,
while running, how many finished meanwhile, how many run again instead (a
keyed re-post that arrived while the job ran takes precedence over the cancel,
as over every other ending of the attempt) and how many still run with the
request pending (``status inflight`` shows them as "cancel requested, still
running", with their worker's host and pid).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import psycopg

from skconsole.core.errors import ConfigError
from skconsole.core.hung import HungPolicy
from skconsole.core.json_types import JsonObject
from skconsole.core.status import WAITING, JobStatus
from skconsole.ops.guard import QUEUE, RESULTS
from skconsole.ops.job_action import JobAction, Queries, StatusRule, Tally
from skconsole.ops.model import count_in
from skconsole.ops.spec import Needs, Params, Row, Wording
from skconsole.read.query import fetch

#: how long a cancel waits, by default, for workers to stop the running jobs it asked
DEFAULT_WAIT_S = 5.0
MAX_WAIT_S = 600.0
_POLL_S = 0.1
#: the ways a job was cancelled, as ops_cancel.sql returns them, and the counts they add
_HOW = {
    "waiting": "cancelled_waiting",
    "running": "cancel_requested",
    "gone": "cancelled_gone",
    # a keyed re-post arrived while it ran: it takes precedence, the newest payload runs
    "rerun": "reposted",
}


@dataclass(frozen=True)
class CancelParams(Params):
    """How long to wait for workers to stop running jobs (0: do not wait), and
    when a job without owner data counts as hung (then cancelled directly)."""

    wait_s: float = DEFAULT_WAIT_S
    policy: HungPolicy = field(default_factory=HungPolicy)

    def __post_init__(self) -> None:
        if not 0 <= self.wait_s <= MAX_WAIT_S:
            raise ConfigError(f"--wait must be between 0 and {MAX_WAIT_S:g} seconds")

    def sql(self) -> dict[str, object]:
        return {**self.policy.params()}


@dataclass(frozen=True, slots=True)
class Settled:
    """A cancelled job as it stands while the cancel waits for its worker."""

    task_id: UUID
    status: int
    worker_host: str | None  # its worker, while it still runs
    worker_pid: int | None
    claim_id: int | None  # the attempt now (another one than the cancel's: a re-run)


def _tally(rows: Sequence[Row]) -> Tally:
    return Tally(
        len(rows),
        tuple((name, sum(1 for r in rows if r["how"] == how)) for how, name in _HOW.items()),
    )


def _settle(conn: psycopg.Connection[Any], rows: Sequence[Row], params: CancelParams) -> JsonObject:
    """Wait (up to ``wait_s``) for the workers asked to stop jobs, and say how each ended."""
    claims = {r["task_id"]: r["claim_id"] for r in rows if r["how"] == "running"}
    if not claims:
        return {}
    deadline = time.monotonic() + params.wait_s
    while True:
        now = fetch(conn, "ops_cancel_settled", Settled, {"ids": list(claims), **params.sql()})
        # still running: the very attempt the cancel concerns (a new claim is a re-run)
        running = [
            r for r in now if r.status == JobStatus.PROCESSING and r.claim_id == claims[r.task_id]
        ]
        if not running or time.monotonic() >= deadline:
            break
        time.sleep(_POLL_S)
    # posted again for a keyed re-post that arrived while it ran (it takes precedence):
    # waiting, or run since by a new attempt (a new claim), however that one ended
    reposted = [
        r
        for r in now
        if r.status != JobStatus.CANCELLED
        and (r.status == JobStatus.UNPROCESSED or r.claim_id != claims[r.task_id])
    ]
    cancelled = sum(1 for r in now if r.status == JobStatus.CANCELLED)
    return {
        "cancelled_running": cancelled,
        "reposted": len(reposted),
        "finished_meanwhile": len(now) - len(reposted) - len(running) - cancelled,
        "still_running": [
            {"task_id": str(r.task_id), "worker_host": r.worker_host, "worker_pid": r.worker_pid}
            for r in running
        ],
    }


def summary(details: Mapping[str, object]) -> str:
    """What a cancel's result adds to "cancelled N": how, and what still runs.

    A job still running is counted as cancelled: its attempt will end 7
    Cancelled however it ends; only its handler has not stopped yet."""
    waiting = count_in(details, "cancelled_waiting")
    gone = count_in(details, "cancelled_gone")
    running = count_in(details, "cancelled_running") + gone
    asked = count_in(details, "cancel_requested")
    if not asked and not gone and not details.get("reposted"):
        return ""
    parts = [f"{waiting:,} while waiting"] if waiting else []
    if running:
        gone_note = f" ({gone:,} of them at once: their worker was gone)" if gone else ""
        parts.append(f"{running:,} while running{gone_note}")
    finished = count_in(details, "finished_meanwhile")
    if finished:
        parts.append(f"{finished:,} finished meanwhile")
    reposted = count_in(details, "reposted")
    if reposted:
        parts.append(
            f"{reposted:,} run again instead: a keyed re-post arrived while it ran, and takes"
            " precedence (its newest payload runs)"
        )
    text = ": " + ", ".join(parts) if parts else ""
    listed = details.get("still_running")
    still = [s for s in listed if isinstance(s, Mapping)] if isinstance(listed, list) else []
    if still:
        where = ", ".join(
            f"{s['worker_host']} pid {s['worker_pid']}"
            for s in sorted(
                still, key=lambda s: (str(s["worker_host"]), count_in(s, "worker_pid"))
            )[:3]
        )
        more = " ..." if len(still) > 3 else ""
        text += (
            f"; {len(still):,} still running: asked to stop, the handler has not yet"
            f" ({where}{more})"
        )
    return text


CANCEL = JobAction(
    Wording("cancel", "cancelled", "job(s)"),
    CancelParams,
    StatusRule(
        allowed=(*WAITING, JobStatus.PROCESSING),
        default=WAITING,
        by_id=(*WAITING, JobStatus.PROCESSING),
    ),
    Queries(select="ops_select_cancellable", write="ops_cancel"),
    Needs(update=(QUEUE, RESULTS), insert=(RESULTS,), delete=(QUEUE,)),
    tally=_tally,
    counted=tuple(_HOW.values()),
    follow_up=_settle,
    summary=summary,
    warning="A cancelled job never runs again; a running one is stopped by its worker.",
)
