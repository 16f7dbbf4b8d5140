"""The fixed data source of the snapshot tests builds the read models' own dataclasses."""

from __future__ import annotations

from uuid import UUID

from skconsole import read
from skconsole.core.status import JobStatus
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import GROUPS, PARENT_JOB, STAGE_JOB
from skconsole.tui.widgets.job_view import job_text, owner_text
from skconsole.views.failures import statuses_text


def test_snapshot_rows_are_read_model_dataclasses() -> None:
    source = FixedSource()
    snap = source.snapshot().with_failures(source.failure_groups())
    assert all(isinstance(g, read.FailureGroup) for g in snap.failures)
    assert all(isinstance(j, read.InflightJob) for j in snap.inflight)
    assert all(isinstance(t, read.TypeTimes) for t in snap.exec_stats)
    assert all(isinstance(w, read.WorkerInfo) for w in snap.workers)
    assert isinstance(snap.statuses, read.StatusCounts)
    assert snap.hung_count == 2
    assert snap.failed_jobs == sum(g.count for g in GROUPS)


def test_statuses_are_job_status_members() -> None:
    snap = FixedSource().snapshot()
    for group in FixedSource().failure_groups().groups:
        assert all(isinstance(s, JobStatus) and s.is_failed for s in group.statuses)
    assert all(isinstance(s, JobStatus) for s in snap.statuses.counts)
    jobs = FixedSource().group_jobs(GROUPS[0].signature, 200)
    assert all(isinstance(j.status, JobStatus) for j in jobs.jobs)
    detail = FixedSource().job_detail(str(jobs.jobs[0].task_id))
    assert detail is not None and detail.status is JobStatus.FAULTED


def test_group_jobs_are_the_groups_own_failed_jobs() -> None:
    group = GROUPS[0]
    jobs = FixedSource().group_jobs(group.signature, 10)
    assert isinstance(jobs, read.GroupJobs)
    assert jobs.signature == group.signature and jobs.total == group.count
    assert len(jobs.jobs) == 10
    assert all(isinstance(j, read.FailedJob) and isinstance(j.task_id, UUID) for j in jobs.jobs)
    assert {j.status for j in jobs.jobs} <= set(group.statuses)


def test_group_statuses_read_as_labels_most_first() -> None:
    assert statuses_text(GROUPS[0]) == "Error 1,190, Faulted 94"


def test_job_detail_owner_is_named_by_a_known_worker() -> None:
    source = FixedSource()
    detail = source.job_detail("00001388-7c1e-4b9a-9f3d-0000025c2bf8")
    assert isinstance(detail, read.JobDetail)
    workers = source.snapshot().workers
    assert owner_text(detail, workers) == "web-2 pid 2201"
    assert owner_text(detail) == f"worker {str(detail.owner_worker_id)[:8]}"
    text = job_text(detail, owner_text(detail, workers))
    assert "status: Faulted" in text and "owner: web-2 pid 2201" in text


def test_snapshot_schedules_are_read_model_dataclasses() -> None:
    schedules = FixedSource().snapshot().schedules
    assert schedules and all(isinstance(s, read.ScheduleInfo) for s in schedules)
    assert [s.task_type for s in schedules] == sorted(s.task_type for s in schedules)


def test_the_second_job_of_a_group_is_a_pipeline_stage_whose_parent_can_be_opened() -> None:
    source = FixedSource()
    stage = source.job_detail(STAGE_JOB)
    assert stage is not None and stage.parent_task_id == UUID(PARENT_JOB)
    parent = source.job_detail(PARENT_JOB)
    assert parent is not None and (parent.task_type, parent.children) == ("checkout.validate", 1)
