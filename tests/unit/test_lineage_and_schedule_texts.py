"""How the console and the CLI word a job's lineage and a schedule's state (no database)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from skconsole.core.status import JobStatus
from skconsole.read import JobDetail
from skconsole.tui.widgets.job_view import job_text, lineage_fields, lineage_text
from skconsole.tui.widgets.schedules_panel import SchedulesPanel
from skconsole.views.schedules import last_run_cell, next_run_cell, schedule_cell, short_reason
from tests.support.samples import schedule_info

PARENT = UUID("00000fa0-7c1e-4b9a-9f3d-000001e35660")
AT = datetime(2025, 3, 14, 3, 12, tzinfo=UTC)


def job(**kw: Any) -> JobDetail:
    base = JobDetail(
        task_id=uuid.uuid4(),
        task_type="orders.charge",
        source="tests",
        payload="{}",
        status=JobStatus.PROCESSED,
        priority=0,
        error_count=0,
        last_error=None,
        recoverable=False,
        processing_ms=0,
        posted_at=AT,
        first_attempt_at=None,
        last_attempt_at=None,
        finalized_at=None,
        owner_worker_id=None,
        attempt=1,
        signature=None,
        queued_until=None,
    )
    return replace(base, **kw)


# -- a job's lineage ----------------------------------------------------------------------------
def test_a_stage_job_names_its_pipeline_stage_and_the_job_before_it() -> None:
    stage = job(
        parent_task_id=PARENT, parent_task_type="orders.validate", pipeline="orders", stage=2
    )
    assert lineage_text(stage) == f"stage 2 of orders, after job {PARENT} (orders.validate)"


def test_a_ctx_post_job_names_the_job_that_posted_it_and_its_type() -> None:
    child = job(parent_task_id=PARENT, parent_task_type="orders.fanout")
    assert lineage_text(child) == f"posted by job {PARENT} (orders.fanout)"


def test_a_parent_whose_row_is_gone_is_named_purged() -> None:
    child = job(parent_task_id=PARENT)
    assert lineage_text(child) == f"posted by job {PARENT} (purged)"


def test_a_job_a_producer_posted_has_no_lineage_field() -> None:
    assert lineage_text(job()) is None
    assert lineage_fields(job()) == []


def test_children_and_snoozes_are_counted_in_words() -> None:
    assert lineage_fields(job(children=1, snooze_count=3)) == [
        ("children", "posted 1 job"),
        ("snoozes", "snoozed 3 times"),
    ]
    assert lineage_fields(job(children=1_200)) == [("children", "posted 1,200 jobs")]


def test_the_copied_job_text_carries_its_lineage() -> None:
    child = job(parent_task_id=PARENT, parent_task_type="orders.fanout", snooze_count=1)
    text = job_text(child, "-")
    assert f"lineage: posted by job {PARENT} (orders.fanout)" in text
    assert "snoozes: snoozed 1 time" in text


# -- a schedule's state ---------------------------------------------------------------------------
def test_the_next_run_is_relative_to_the_read() -> None:
    assert schedule_info().next_run_text == "in 12s"
    assert next_run_cell(schedule_info()) == "in 12s"


def test_a_paused_type_says_paused_instead_of_a_next_run() -> None:
    paused = schedule_info(paused=True, next_run=None, next_run_in_s=None)
    assert paused.next_run_text == "paused"
    assert next_run_cell(paused) == ("paused", "warn")


def test_a_tick_nobody_took_says_how_late_it_is() -> None:
    late = schedule_info(late_s=850.0)
    assert late.next_run_text == "late 14m 10s"
    assert next_run_cell(late) == ("late 14m 10s", "warn")


def test_an_unreadable_definition_is_shown_as_stored_with_a_short_reason() -> None:
    error = "unknown time zone 'Mars/Base': use an IANA name such as UTC or Europe/Paris"
    bad = schedule_info(schedule="cron 0 4 * * * (Mars/Base)", error=error, next_run=None)
    assert bad.next_run_text == "unreadable"
    assert next_run_cell(bad) == ("unreadable", "bad")
    assert schedule_cell(bad) == (
        "cron 0 4 * * * (Mars/Base) · unknown time zone 'Mars/Base'",
        "bad",
    )


def test_a_reason_without_a_quoted_value_is_kept_whole() -> None:
    assert short_reason("every= must be at least 1s, got 0.25") == (
        "every= must be at least 1s, got 0.25"
    )


def test_the_last_run_says_how_long_ago_and_the_status_in_its_colour() -> None:
    done = schedule_info(
        last_task_id=PARENT, last_status=JobStatus.PROCESSED, last_posted_age_s=250.0
    )
    failed = replace(done, last_status=JobStatus.FATAL)
    assert last_run_cell(done) == ("4m 10s ago · Processed", "good")
    assert last_run_cell(failed) == ("4m 10s ago · Fatal", "bad")
    assert done.last_job_text == "Processed"


def test_a_purged_last_job_is_said_to_be() -> None:
    purged = schedule_info(last_task_id=PARENT, last_posted_age_s=7200.0)
    assert last_run_cell(purged) == ("2h 00m ago · purged", "muted")
    assert purged.last_job_text == "purged"


def test_a_schedule_that_never_posted_says_so() -> None:
    assert last_run_cell(schedule_info()) == ("none yet", "muted")
    assert schedule_info().last_job_text == "-"


def test_waiting_on_a_sampled_queue_reads_as_an_estimate() -> None:
    (waiting,) = [c for c in SchedulesPanel.COLUMNS if c.key == "waiting"]
    assert waiting.cell(schedule_info(waiting=12_345, waiting_estimated=True), 0.0) == "≈12.3k"
    assert waiting.cell(schedule_info(waiting=12_345), 0.0) == "12,345"
