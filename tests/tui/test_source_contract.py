"""The console's port, one contract for both of its sources: the database source on a
seeded queue and the fixed source of the snapshot tests and screenshots answer every
request alike (its type, its bounds, what a missing job is), preview and execute an
action alike, refuse alike when read-only and fail alike when the server is gone.

A console test on fixed data is only as true as this contract: what the fixed source
does that the database source would not (or the reverse) fails here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import is_dataclass

import pytest

from skconsole import ops
from skconsole.core.errors import ReadOnlyError
from skconsole.core.find_query import FindQuery
from skconsole.db.connect import Database
from skconsole.read import FoundJob, GroupJobs, JobDetail, JobMatch, Why
from skconsole.read.factors import CommonFactors
from skconsole.tui import reads
from skconsole.tui.chart_data import WINDOWS, Window
from skconsole.tui.database_source import DatabaseSource
from skconsole.tui.model import (
    ActionRequest,
    FailureGroups,
    QueueHealth,
    QueueOverview,
    Snapshot,
    Target,
    TargetKind,
    Trends,
)
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.source import DataSource, SourceUnavailable

NO_SUCH_JOB = "00000000-0000-4000-8000-00000000dead"
SOURCES = ("database", "fixed")


@pytest.fixture(params=SOURCES)
def source(request: pytest.FixtureRequest) -> Iterator[DataSource]:
    """Each source in turn: the database one on a queue with failure groups, the fixed one."""
    if request.param == "database":
        made: DataSource = DatabaseSource(request.getfixturevalue("seeded"))
    else:
        made = FixedSource()
    yield made
    made.close()


@pytest.fixture(params=SOURCES)
def read_only_source(request: pytest.FixtureRequest) -> Iterator[DataSource]:
    if request.param == "database":
        request.getfixturevalue("seeded")
        made: DataSource = DatabaseSource(Database(request.getfixturevalue("dsn"), read_only=True))
    else:
        made = FixedSource(read_only=True)
    yield made
    made.close()


@pytest.fixture(params=SOURCES)
def gone_source(request: pytest.FixtureRequest) -> Iterator[DataSource]:
    """A source whose server does not answer: a port nobody listens on; offline."""
    if request.param == "database":
        made: DataSource = DatabaseSource(Database(request.getfixturevalue("nowhere")))
    else:
        made = FixedSource(offline=True)
    yield made
    made.close()


def _a_failed_job(source: DataSource) -> tuple[str, str]:
    """The first failure group's signature and its most recent job's id."""
    group = source.read(reads.FAILURE_GROUPS).groups[0]
    jobs = source.read(reads.GroupJobsRead(group.signature, 10)).jobs
    return group.signature, str(jobs[0].task_id)


def _requeue_of_group(signature: str) -> ActionRequest:
    return ActionRequest(
        ops.REQUEUE, Target("group", TargetKind.GROUP, group=signature), ops.RequeueParams()
    )


@pytest.mark.parametrize(
    ("request_", "answer"),
    [
        (reads.SNAPSHOT, Snapshot),
        (reads.FAILURE_GROUPS, FailureGroups),
        (reads.TRENDS, Trends),
        (reads.HEALTH, QueueHealth),
        (reads.OVERVIEW, QueueOverview),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, reads.Read) else "",
)
def test_every_cadence_is_answered_with_its_own_type(
    source: DataSource, request_: reads.Read[object], answer: type
) -> None:
    assert isinstance(source.read(request_), answer)


def test_a_failure_groups_jobs_are_its_own_and_at_most_the_limit(source: DataSource) -> None:
    group = source.read(reads.FAILURE_GROUPS).groups[0]
    jobs = source.read(reads.GroupJobsRead(group.signature, 2))
    assert isinstance(jobs, GroupJobs)
    assert jobs.signature == group.signature and jobs.total == group.count
    assert 0 < len(jobs.jobs) <= 2
    assert {j.status for j in jobs.jobs} <= set(group.statuses)


def test_a_listed_job_opens_with_its_detail_and_why(source: DataSource) -> None:
    _, task_id = _a_failed_job(source)
    detail = source.read(reads.JobRead(task_id))
    assert isinstance(detail, JobDetail) and str(detail.task_id) == task_id
    why = source.read(reads.WhyRead(task_id))
    assert isinstance(why, Why) and str(why.task_id) == task_id


def test_a_job_that_does_not_exist_is_none_not_an_error(source: DataSource) -> None:
    assert source.read(reads.JobRead(NO_SUCH_JOB)) is None
    assert source.read(reads.WhyRead(NO_SUCH_JOB)) is None


def test_an_id_prefix_finds_only_jobs_that_start_with_it(source: DataSource) -> None:
    _, task_id = _a_failed_job(source)
    found = source.read(reads.PrefixRead(task_id[:8]))
    assert task_id in {str(m.task_id) for m in found}
    assert all(isinstance(m, JobMatch) and str(m.task_id).startswith(task_id[:8]) for m in found)


def test_a_search_answers_found_jobs_up_to_its_limit(source: DataSource) -> None:
    found = source.read(reads.FindRead(FindQuery(limit=3)))
    assert 0 < len(found) <= 3
    assert all(isinstance(j, FoundJob) for j in found)


def test_a_groups_common_factors_name_the_group(source: DataSource) -> None:
    signature, _ = _a_failed_job(source)
    factors = source.read(reads.FactorsRead(signature))
    assert isinstance(factors, CommonFactors) and factors.signature == signature


def test_an_executed_preview_accounts_for_every_job_it_captured(source: DataSource) -> None:
    signature, _ = _a_failed_job(source)
    preview = source.preview(_requeue_of_group(signature))
    assert preview.count > 0 and 0 < len(preview.sample) <= preview.count
    outcome = source.execute(preview, "contract")
    assert outcome.request == preview.request
    assert outcome.requested == preview.count
    assert outcome.changed + outcome.skipped == outcome.requested


def test_a_read_only_source_previews_but_refuses_to_execute(read_only_source: DataSource) -> None:
    assert read_only_source.read_only
    signature, _ = _a_failed_job(read_only_source)
    preview = read_only_source.preview(_requeue_of_group(signature))
    assert preview.count > 0
    with pytest.raises(ReadOnlyError):
        read_only_source.execute(preview, "contract")


@pytest.mark.parametrize(
    "request_",
    [reads.SNAPSHOT, reads.FAILURE_GROUPS, reads.JobRead(NO_SUCH_JOB), reads.OVERVIEW],
    ids=lambda v: type(v).__name__,
)
def test_a_gone_server_is_unavailable_for_every_read(
    gone_source: DataSource, request_: reads.Read[object]
) -> None:
    with pytest.raises(SourceUnavailable):
        gone_source.read(request_)


def test_a_gone_server_is_unavailable_for_a_preview(gone_source: DataSource) -> None:
    with pytest.raises(SourceUnavailable):
        gone_source.preview(_requeue_of_group("any"))


def test_every_request_of_the_port_has_a_fixed_answer() -> None:
    """A request added to the port without a fixed answer fails here, not in a screenshot."""
    from skconsole.tui.showcase.fake_source import FIXED_ANSWERS

    requests = {
        cls
        for cls in vars(reads).values()
        if isinstance(cls, type) and issubclass(cls, reads.Read) and is_dataclass(cls)
    }
    assert requests and requests <= set(FIXED_ANSWERS)


@pytest.mark.parametrize("window", WINDOWS, ids=[w.key for w in WINDOWS])
def test_the_charts_read_the_record_of_their_window_in_its_steps(
    source: DataSource, window: Window
) -> None:
    data = source.read(reads.ChartsRead(window))

    assert data.window == window
    assert data.record.step == window.step
    assert 0 < len(data.record.steps) <= 170
    assert data.record.total().posted > 0


def test_a_failure_groups_curve_is_its_failures_per_minute_over_an_hour(
    source: DataSource,
) -> None:
    group = source.read(reads.FAILURE_GROUPS).groups[0]

    curve = source.read(reads.GroupCurveRead(group.signature, tuple(group.task_types)))

    assert len(curve) == reads.GROUP_CURVE_MINUTES
    assert sum(curve) > 0
