"""The words a job's errors and an in-flight job's state read in, in the console and the
CLI alike: a recoverability only after an error, a running job as "running"."""

from __future__ import annotations

import uuid
from dataclasses import replace

from skconsole.core.states import InflightState
from skconsole.read import InflightJob
from skconsole.tui.showcase.fixed_data import fixed_failed_job, fixed_parent_job
from skconsole.views.inflight import state_cell
from skconsole.views.job import errors_text, job_text


def test_a_job_without_errors_says_nothing_about_recoverability() -> None:
    processed = fixed_parent_job()  # 3 Processed, no error

    assert errors_text(processed) == "0"
    assert "recoverable" not in job_text(processed, "-")
    assert "errors: 0\n" in job_text(processed, "-")


def test_a_failed_job_says_whether_its_last_error_was_recoverable() -> None:
    failed = fixed_failed_job(str(uuid.uuid4()))

    assert errors_text(failed) == "5 (last one recoverable: yes)"
    assert errors_text(replace(failed, recoverable=False)) == "5 (last one recoverable: no)"


def test_a_job_running_normally_reads_running_as_the_readme_says() -> None:
    job = InflightJob(
        task_id=uuid.uuid4(),
        task_type="emails.send",
        attempt=1,
        error_count=0,
        started_at=None,
        running_s=3.0,
        worker_id=uuid.uuid4(),
        worker_host="w1",
        worker_pid=42,
        worker_connected=True,
        heartbeat_age_s=0.5,
        timeout_s=None,
        state=InflightState.RUNNING,
        note=None,
        hung_reason=None,
        reapable_in_s=None,
    )

    text, tone = state_cell(job)

    assert (text, tone) == (InflightState.RUNNING.value, "muted") == ("running", "muted")
