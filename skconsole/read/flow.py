"""Flow per task type: how fast jobs arrive and finish, when the ready backlog drains,
and how long until the oldest ready job breaches the type's SLO.

A read model like :mod:`skconsole.read` (plain dataclasses with ``as_dict``,
no UI library), and the one place that words and judges it: ``skconsole
status flow``, ``skconsole check``, the console's depth panel and the
exporter all call :func:`flow` and the helpers below, so "drains in 4m 00s",
"growing 120/min" and "breached 1m 20s ago" read the same everywhere and the
SLO thresholds are decided once (:func:`slo_state`).

Rates come from the results' own timestamps over a sliding window (no sampling
between two reads, so one read gives them):

- arrivals: results whose ``task_posted_at_ts`` falls in the window, i.e. jobs
  posted (a delayed job counts when it was posted, not when it becomes due;
  a retry is not a new arrival);
- finished: results whose ``task_processing_finalized_at_ts`` falls in the
  window with a status that takes the job out of the queue for good
  (:data:`DONE`), told apart by how they ended: succeeded (3 Processed), failed
  (:data:`FAILED_FINISHED`: 5 Faulted, parked for an operator, and 6 Fatal) and
  cancelled (7, by an operator).

Each rate is the window's count over the window's length: right in a steady
state, low for a type that started less than a window ago. The drain estimate
divides the ready backlog by the net rate of *successful* completions minus
arrivals: a job that failed left the queue but its work was not done, so a
backlog that fails as fast as it arrives is not "draining" (the failures are
said apart). A backlog fed as fast as it is worked off has no estimate
("steady"), nor one nobody works off ("stalled").

The failure rate is failed / (succeeded + failed) over the same window
(cancellations are an operator's doing, not the code's, and count in neither):
5 minutes by default, long enough that a type running a job every few seconds
gives a rate worth reading, short enough that a fault that is fixed stops
alarming within minutes. ``skconsole slo set TYPE --max-failure-rate 10%``
sets a type's ceiling; :func:`failure_state` judges it (over it: WARNING; over
twice it, or every job failing: BREACHED), from :data:`FAILURE_RATE_MIN_FINISHED`
finished jobs in the window (below, one failure of two would read 50%).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import psycopg

import skconsole.read.type_settings as type_settings
from skconsole.core.durations import format_age
from skconsole.core.json_types import JsonObject, attributes
from skconsole.core.status import JobStatus
from skconsole.read.depth import Depth, depth
from skconsole.read.query import fetch
from skconsole.read.type_settings import TypeSlo

Conn = psycopg.Connection[Any]

#: The sliding window of the rates, unless told (5 minutes: long enough to smooth
#: bursts, short enough to follow a change of load within minutes).
WINDOW_S = 300.0
#: Statuses whose finalization takes a job out of the queue for good.
DONE: tuple[JobStatus, ...] = (
    JobStatus.PROCESSED,
    JobStatus.FAULTED,
    JobStatus.FATAL,
    JobStatus.CANCELLED,
)
#: Finished statuses that count as failures in the failure rate (Error is an attempt
#: that will be retried: the job has not finished).
FAILED_FINISHED: tuple[JobStatus, ...] = (JobStatus.FAULTED, JobStatus.FATAL)
#: Fewer finished jobs in the window than this give no failure-rate verdict (the rate
#: is still shown): one failure of two is no 50% failure rate.
FAILURE_RATE_MIN_FINISHED = 5
#: Over this multiple of its max failure rate a type's failure SLO is BREACHED
#: (`skconsole check`: CRITICAL); over the rate itself, WARNING.
FAILURE_RATE_CRITICAL_FACTOR = 2.0
#: Without a max failure rate, the console shows a type's rate amber from this share.
FAILURE_RATE_NOTABLE = 0.5
#: An SLO turns to WARNING once the oldest ready job has waited this share of it
#: (within 20% of a breach); past all of it, BREACHED.
SLO_WARN_SHARE = 0.8


class SloState(enum.Enum):
    """Where a type stands against its SLO (the console colours its depth row by it).

    Max wait: WARNING within 20% of it, BREACHED past it. Max failure rate: WARNING
    over it, BREACHED over twice it (:func:`failure_state`)."""

    NONE = "none"  # no SLO set
    OK = "ok"  # no ready job, or the oldest is below SLO_WARN_SHARE of it
    WARNING = "warning"  # the oldest ready job is within 20% of the SLO
    BREACHED = "breached"  # the oldest ready job has waited longer than the SLO

    @property
    def style(self) -> str | None:
        """The colour (a Rich/Textual style name) the CLI and the console draw it in."""
        return _SLO_STYLES[self]


_SLO_STYLES = {
    SloState.NONE: None,
    SloState.OK: "green",
    SloState.WARNING: "yellow",
    SloState.BREACHED: "red",
}


# -- pure arithmetic and wording (tested without a database) --------------------------
def per_minute(count: int, window_s: float) -> float:
    """A count over a window of ``window_s`` seconds, per minute."""
    return count * 60.0 / window_s if window_s > 0 else 0.0


def drain_seconds(ready: int, arrivals_per_min: float, completions_per_min: float) -> float | None:
    """Seconds until the ready backlog is gone at the current net rate; 0 when it is
    empty; None when it does not shrink (steady, growing or stalled)."""
    if ready <= 0:
        return 0.0
    net = completions_per_min - arrivals_per_min
    return ready / net * 60.0 if net > 0 else None


def growth_per_min(ready: int, arrivals_per_min: float, completions_per_min: float) -> float | None:
    """How fast the ready backlog grows (jobs per minute), when it has jobs and grows."""
    net = arrivals_per_min - completions_per_min
    return net if ready > 0 and net > 0 else None


def rate_text(per_min: float) -> str:
    """A rate people read: "120/min", "2.5/min", "0/min"."""
    if per_min == 0:
        return "0/min"
    return f"{per_min:,.0f}/min" if per_min >= 10 else f"{per_min:.1f}/min"


def drain_text(ready: int, arrivals_per_min: float, completions_per_min: float) -> str:
    """ "empty", "drains in 4m 00s", "growing 120/min", "stalled" (ready jobs, none finished
    in the window) or "steady" (finished as fast as they arrive)."""
    if ready <= 0:
        return "empty"
    seconds = drain_seconds(ready, arrivals_per_min, completions_per_min)
    if seconds is not None:
        return f"drains in {format_age(seconds)}"
    growth = growth_per_min(ready, arrivals_per_min, completions_per_min)
    if growth is not None:
        return f"growing {rate_text(growth)}"
    return "stalled" if completions_per_min == 0 else "steady"


def failure_rate(failed: int, finished: int) -> float | None:
    """The share of the finished jobs that failed (0.0 to 1.0); None when none finished."""
    return failed / finished if finished > 0 else None


def percent_text(share: float | None) -> str:
    """A share as people read it: "14%", "0.5%", "100%"; "-" for None."""
    if share is None:
        return "-"
    pct = share * 100.0
    if pct == 0 or pct >= 10 or pct == round(pct):
        return f"{pct:.0f}%"
    return f"{pct:.1f}%"


def failure_state(max_rate: float | None, failed: int, finished: int) -> SloState:
    """The one judgement of a max failure rate: NONE without one; OK below
    FAILURE_RATE_MIN_FINISHED finished jobs or at most the rate; WARNING over it;
    BREACHED over FAILURE_RATE_CRITICAL_FACTOR times it, or when every job failed."""
    rate = failure_rate(failed, finished)
    if max_rate is None:
        return SloState.NONE
    if rate is None or finished < FAILURE_RATE_MIN_FINISHED or rate <= max_rate:
        return SloState.OK
    if rate > FAILURE_RATE_CRITICAL_FACTOR * max_rate or rate >= 1.0:
        return SloState.BREACHED
    return SloState.WARNING


def failures_text(failed: int, finished: int) -> str:
    """ "-" (none finished), "0 of 40", "12 of 40 (30%)"."""
    if finished <= 0:
        return "-"
    if failed == 0:
        return f"0 of {finished:,}"
    return f"{failed:,} of {finished:,} ({percent_text(failure_rate(failed, finished))})"


def breach_in_s(slo_s: float | None, oldest_ready_s: float | None) -> float | None:
    """Seconds until the oldest ready job breaches the SLO; negative: breached that long
    ago. None without an SLO or without a ready job."""
    if slo_s is None or oldest_ready_s is None:
        return None
    return slo_s - oldest_ready_s


def slo_state(slo_s: float | None, oldest_ready_s: float | None) -> SloState:
    """The one judgement of an SLO (thresholds: SLO_WARN_SHARE)."""
    if slo_s is None:
        return SloState.NONE
    if oldest_ready_s is None:
        return SloState.OK
    if oldest_ready_s > slo_s:
        return SloState.BREACHED
    return SloState.WARNING if oldest_ready_s >= SLO_WARN_SHARE * slo_s else SloState.OK


def slo_text(slo_s: float | None, oldest_ready_s: float | None, ready: int = 0) -> str:
    """ "-" (no SLO), "met: none ready", "breach in 12s", "breached 1m 20s ago"; "wait
    unknown" when ``ready`` jobs wait but none has a wait that can be told (their
    eligible time, written by another application, is not within 100 years of now)."""
    left = breach_in_s(slo_s, oldest_ready_s)
    if slo_s is None:
        return "-"
    if left is None:
        return "wait unknown" if ready > 0 else "met: none ready"
    return f"breach in {format_age(left)}" if left >= 0 else f"breached {format_age(-left)} ago"


# -- the read model ----------------------------------------------------------------------
@dataclass(frozen=True)
class TypeCounts:
    """A task type's jobs posted, and finished by how they ended, within the window
    (flow.sql)."""

    task_type: str
    posted: int
    succeeded: int
    failed: int
    cancelled: int

    @property
    def finished(self) -> int:
        """Finished by running: succeeded or failed (cancelled jobs are left out)."""
        return self.succeeded + self.failed


def window_counts(conn: Conn, window_s: float = WINDOW_S) -> dict[str, TypeCounts]:
    """Each task type's jobs posted and finished within the last ``window_s`` seconds
    (types with neither are left out)."""
    if window_s <= 0:
        raise ValueError(f"the flow window must be positive, not {window_s!r}")
    params = {
        "window_s": window_s,
        "done": [int(s) for s in DONE],
        "failed": [int(s) for s in FAILED_FINISHED],
    }
    return {r.task_type: r for r in fetch(conn, "flow", TypeCounts, params)}


@dataclass(frozen=True)
class TypeFlow:
    """One task type's flow over the last ``window_s`` seconds, its ready backlog (from
    the depth read model: ``ready_estimated`` when sampled on a big queue) and its SLO."""

    task_type: str
    window_s: float
    #: jobs posted within the window
    arrivals: int
    #: jobs that succeeded within the window (3 Processed): what drains the backlog
    completions: int
    ready: int
    ready_estimated: bool
    #: how long the oldest ready job has been eligible (None: no ready job, or none
    #: whose eligible time is within 100 years of now: see :func:`slo_text`)
    oldest_ready_s: float | None
    #: the type's SLO: the longest a ready job should wait (None: none set)
    slo_max_wait_s: float | None
    paused: bool
    #: jobs that failed for good within the window (FAILED_FINISHED: Faulted, Fatal)
    failures: int = 0
    #: jobs an operator cancelled within the window
    cancellations: int = 0
    #: the type's max failure rate (0 to 1; ``skconsole slo set --max-failure-rate``)
    slo_max_failure_rate: float | None = None

    @property
    def finished(self) -> int:
        """Jobs that finished by running within the window: succeeded or failed."""
        return self.completions + self.failures

    @property
    def failure_rate(self) -> float | None:
        return failure_rate(self.failures, self.finished)

    @property
    def failure_state(self) -> SloState:
        return failure_state(self.slo_max_failure_rate, self.failures, self.finished)

    @property
    def failures_text(self) -> str:
        return failures_text(self.failures, self.finished)

    @property
    def worst_state(self) -> SloState:
        """The worse of its two SLO states (a row's colour)."""
        order = list(SloState)
        return max(self.slo_state, self.failure_state, key=order.index)

    @property
    def arrivals_per_min(self) -> float:
        return per_minute(self.arrivals, self.window_s)

    @property
    def completions_per_min(self) -> float:
        return per_minute(self.completions, self.window_s)

    @property
    def failures_per_min(self) -> float:
        return per_minute(self.failures, self.window_s)

    @property
    def drain_s(self) -> float | None:
        return drain_seconds(self.ready, self.arrivals_per_min, self.completions_per_min)

    @property
    def growing_per_min(self) -> float | None:
        return growth_per_min(self.ready, self.arrivals_per_min, self.completions_per_min)

    @property
    def drain_text(self) -> str:
        return drain_text(self.ready, self.arrivals_per_min, self.completions_per_min)

    @property
    def breach_in_s(self) -> float | None:
        return breach_in_s(self.slo_max_wait_s, self.oldest_ready_s)

    @property
    def slo_state(self) -> SloState:
        return slo_state(self.slo_max_wait_s, self.oldest_ready_s)

    @property
    def slo_text(self) -> str:
        return slo_text(self.slo_max_wait_s, self.oldest_ready_s, self.ready)

    def as_dict(self) -> JsonObject:
        return {
            **attributes(
                self,
                "task_type window_s arrivals completions arrivals_per_min completions_per_min"
                " failures failures_per_min cancellations failure_rate ready ready_estimated"
                " oldest_ready_s drain_s growing_per_min",
            ),
            "drain": self.drain_text,
            **attributes(self, "slo_max_wait_s breach_in_s"),
            "slo_state": self.slo_state.value,
            "slo": self.slo_text,
            "slo_max_failure_rate": self.slo_max_failure_rate,
            "failure_slo_state": self.failure_state.value,
            "paused": self.paused,
        }


def flow(conn: Conn, window_s: float = WINDOW_S, *, queue: Depth | None = None) -> list[TypeFlow]:
    """Every known task type (the depth read model's, with those posted or finished within
    the window, or with an SLO), by name. ``queue``: the depth read model if the caller
    has just read it."""
    if window_s <= 0:
        raise ValueError(f"the flow window must be positive, not {window_s!r}")
    queue = queue if queue is not None else depth(conn)
    counts = window_counts(conn, window_s)
    slos = type_settings.slos(conn)
    by_type = {t.task_type: t for t in queue.types}
    result = []
    for name in sorted(by_type.keys() | counts.keys() | slos.keys()):
        d = by_type.get(name)
        c = counts.get(name)
        slo = slos.get(name, TypeSlo(name, None, None))
        result.append(
            TypeFlow(
                task_type=name,
                window_s=float(window_s),
                arrivals=c.posted if c else 0,
                completions=c.succeeded if c else 0,
                failures=c.failed if c else 0,
                cancellations=c.cancelled if c else 0,
                ready=d.ready if d else 0,
                ready_estimated=queue.estimated,
                oldest_ready_s=d.oldest_ready_s if d else None,
                slo_max_wait_s=slo.max_wait_s,
                paused=d.paused if d else False,
                slo_max_failure_rate=slo.max_failure_rate,
            )
        )
    return result
