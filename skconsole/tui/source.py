"""The console's data source contract.

The app talks to one object with these methods and calls them only from
worker threads. :class:`skconsole.tui.database_source.DatabaseSource` implements it on
PostgreSQL through ``stats`` and ``ops``; :class:`skconsole.tui.showcase.fake_source.FixedSource`
serves fixed data so snapshot tests and screenshots are deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from skconsole.core.find_query import FindQuery
from skconsole.read import FoundJob, GroupJobs, JobDetail, JobMatch, Why
from skconsole.read.factors import CommonFactors
from skconsole.tui.model import (
    ActionRequest,
    FailureGroups,
    OutcomeInfo,
    PreviewInfo,
    QueueHealth,
    QueueOverview,
    Snapshot,
    Trends,
)


class SourceUnavailable(Exception):
    """The server cannot be reached right now; the console keeps its last data and retries."""


class DataSource(Protocol):
    description: str  # where the data comes from, never with a password
    connection: str  # the connection string that reaches it, its password masked
    read_only: bool

    def snapshot(self) -> Snapshot:
        """One refresh cycle: every read model at one moment, but the failure groups."""
        ...

    def failure_groups(self) -> FailureGroups:
        """Failed jobs grouped by error signature (read less often than snapshots)."""
        ...

    def trends(self) -> Trends:
        """Jobs per minute over the last hour (read less often than snapshots)."""
        ...

    def health(self) -> QueueHealth:
        """The queue tables' health, the xmin horizon and lock waits (read less often
        than snapshots)."""
        ...

    def overview(self) -> QueueOverview:
        """The queue as the overview of several shows it: what ``skconsole check`` reads
        and its verdict, and the jobs per status (within a bound: a queue that does not
        answer raises :class:`SourceUnavailable`)."""
        ...

    def group_jobs(self, signature: str, limit: int) -> GroupJobs:
        """The jobs of the failure group ``signature``, most recent first."""
        ...

    def job_detail(self, task_id: str) -> JobDetail | None:
        """One job with its full error and payload; None if it no longer exists."""
        ...

    def why(self, task_id: str) -> Why | None:
        """Why the job waits: its causes, most likely first; None if it no longer exists."""
        ...

    def jobs_by_prefix(self, text: str) -> list[JobMatch]:
        """The first few jobs whose id starts with ``text`` (a ConfigError when it is
        no id or prefix)."""
        ...

    def find_jobs(self, query: FindQuery) -> list[FoundJob]:
        """The jobs a search finds (the search screen), most recently active first."""
        ...

    def common_factors(self, signature: str) -> CommonFactors:
        """What the failure group ``signature``'s jobs share (its drill-down's header)."""
        ...

    def preview(self, request: ActionRequest) -> PreviewInfo:
        """What ``request`` would touch now: count, sample and the ids it captured."""
        ...

    def execute(self, preview: PreviewInfo, actor: str) -> OutcomeInfo:
        """Carry out a previewed action on the ids captured by the preview."""
        ...

    def close(self) -> None:
        """Close the connections (called once, when the console exits)."""
        ...


@dataclass(frozen=True)
class Queue:
    """One queue of a console that watches several: the name it is shown by, its data."""

    name: str
    source: DataSource
