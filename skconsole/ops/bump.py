"""Bump: change the priority of waiting jobs (a lower number runs first), or make them due now.

``by`` lowers the number (floor 0); ``to`` sets it; ``now`` makes jobs that are
not due yet (a delay, a retry's back-off, a snooze) due at once
(``task_locked_until_ts`` = now), leaving their priority and the jobs already
due alone. Only jobs that still wait in the queue change; a job being claimed
at that instant is left alone (its queue row is locked: SKIP LOCKED), and a
running job has no queue row. A fan-in job waiting for others (``after=``, no
queue row yet) has its result row changed, which its release copies. The result's ``details["unchanged"]`` counts jobs
that still matched but already had the priority asked for (at 0, or at ``to``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject
from skconsole.core.status import WAITING
from skconsole.ops.guard import QUEUE, RESULTS
from skconsole.ops.job_action import JobAction, Queries, StatusRule, Tally
from skconsole.ops.model import count_in
from skconsole.ops.spec import Needs, Params, Row, Wording

MAX_PRIORITY = 2**31 - 1


@dataclass(frozen=True)
class BumpParams(Params):
    """Exactly one of ``by`` (1 to 2**31-1), ``to`` (0 to 2**31-1), whole numbers, and
    ``now`` (make the jobs not yet due due at once)."""

    by: int | None = None
    to: int | None = None
    now: bool = False

    def __post_init__(self) -> None:
        by, to = self.by, self.to
        if [by is not None, to is not None, self.now].count(True) != 1:
            raise ConfigError("bump needs exactly one of --by N, --to N or --now")
        for option, value in (("--by", by), ("--to", to)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ConfigError(f"{option} must be a whole number, got {value!r}")
        if by is not None and not 1 <= by <= MAX_PRIORITY:
            raise ConfigError(f"--by must be between 1 and {MAX_PRIORITY}, got {by}")
        if to is not None and not 0 <= to <= MAX_PRIORITY:
            raise ConfigError(f"--to must be between 0 and {MAX_PRIORITY}, got {to}")

    def sql(self) -> dict[str, object]:
        return {"by": self.by, "to": self.to, "now": self.now}

    def details(self) -> JsonObject:
        # "now" only when asked: a priority bump's audit row stays as it was
        return {"by": self.by, "to": self.to, **({"now": True} if self.now else {})}

    def phrase(self) -> str:
        if self.now:
            return " to run now (due at once)"
        if self.to is None:
            return f" by {self.by}"
        return f" to priority {self.to}" + (" (the front of the queue)" if self.to == 0 else "")


def _tally(rows: Sequence[Row]) -> Tally:
    (row,) = rows  # one row: the batch's counts
    matched, changed = int(row["matched"]), int(row["changed"])
    return Tally(changed, (("unchanged", matched - changed),))


def _summary(details: Mapping[str, object]) -> str:
    unchanged = count_in(details, "unchanged")
    if not unchanged:
        return ""
    return f"; {unchanged:,} " + (
        "already due" if details.get("now") else "already had that priority"
    )


BUMP = JobAction(
    Wording("bump", "bumped", "waiting job(s)"),
    BumpParams,
    StatusRule(allowed=WAITING),
    Queries(select="ops_select_queued", write="ops_bump"),
    Needs(update=(QUEUE, RESULTS)),
    tally=_tally,
    counted=("unchanged",),
    summary=_summary,
)
