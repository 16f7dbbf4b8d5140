"""Values several test files describe the same way (no database)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from skconsole.read import ScheduleInfo
from skconsole.tui.showcase.fixed_health import REPLICATION

#: a primary with one asynchronous standby, no failover yet (the showcase's own)
PRIMARY_WITH_AN_ASYNC_STANDBY = REPLICATION

#: when the sample schedule was defined, last ticked and runs next
SCHEDULE_AT = datetime(2025, 3, 14, 3, 12, tzinfo=UTC)


def schedule_info(**kw: Any) -> ScheduleInfo:
    """A schedule as the schedules view reads it, with ``kw`` in place of its defaults:
    reports.nightly every 30 s, not paused, its next tick due in 12 s, no job posted yet,
    nothing waiting."""
    base = ScheduleInfo(
        task_type="reports.nightly",
        schedule="every 30s",
        cron=None,
        every_s=30.0,
        timezone="UTC",
        missed="once",
        payload=None,
        error=None,
        paused=False,
        next_run=SCHEDULE_AT,
        next_run_in_s=12.0,
        late_s=None,
        last_tick=SCHEDULE_AT,
        last_task_id=None,
        last_status=None,
        last_posted_at=None,
        last_posted_age_s=None,
        waiting=0,
        waiting_estimated=False,
        defined_at=SCHEDULE_AT,
    )
    return replace(base, **kw)
