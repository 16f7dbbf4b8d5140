"""Purge: delete old final results (3 Processed, 6 Fatal, 7 Cancelled; 5
Faulted only when asked), a batch per transaction so no lock is held long.

Never a waiting or in-flight job: the statuses and the absence of a queue row
are re-checked in the DELETE itself, so a job re-posted meanwhile survives.
A preview captures the ids of at most CAPTURE_LIMIT results; beyond, execute
re-evaluates the frozen selection (same effect: a final result cannot newly
match an absolute cutoff, and no huge id list is held in memory).
"""

from __future__ import annotations

from dataclasses import dataclass

from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject
from skconsole.core.status import FINAL, JobStatus
from skconsole.ops.guard import RESULTS
from skconsole.ops.job_action import JobAction, Queries, StatusRule
from skconsole.ops.model import Selection
from skconsole.ops.spec import Confirm, Needs, Params, Wording

CAPTURE_LIMIT = 50_000


@dataclass(frozen=True)
class PurgeParams(Params):
    include_faulted: bool = False  # 5 Faulted results too

    def check(self, action: str, selection: Selection) -> None:
        if JobStatus.FAULTED in selection.statuses and not self.include_faulted:
            raise ConfigError(
                "Faulted (5) results are purged only when asked: add --include-faulted"
            )

    def extra_statuses(self) -> tuple[JobStatus, ...]:
        return (JobStatus.FAULTED,) if self.include_faulted else ()

    def details(self) -> JsonObject:
        return {"include_faulted": self.include_faulted}


def _age_or_ids(action: str, selection: Selection) -> None:
    if (
        selection.older_than_seconds is None
        and selection.cutoff is None
        and not selection.ids
        and not selection.where
    ):
        raise ConfigError(
            f"{action} needs --older-than (e.g. --older-than 30d), --id or --where payload.PATH=V"
        )


PURGE = JobAction(
    Wording("purge", "purged", "result(s)"),
    PurgeParams,
    StatusRule(allowed=FINAL),
    Queries(select="ops_select_results", write="ops_purge", count="ops_count_results"),
    Needs(update=(RESULTS,), delete=(RESULTS,)),
    check_selection=_age_or_ids,
    confirm=Confirm.TYPE_COUNT,
    warning="They are deleted for ever.",
    capture_limit=CAPTURE_LIMIT,
)
