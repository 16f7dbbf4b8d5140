"""What a worker does with a tick it finds late: missed="once" posts it, "skip" drops it."""

from __future__ import annotations

from datetime import datetime, timedelta

from skconsole.schedule import Schedule
from skconsole.worker.schedules import posts_tick

TICK = datetime.fromisoformat("2026-11-24T03:00:00+00:00")


def test_a_nightly_tick_found_hours_late_runs_once_with_missed_once() -> None:
    nightly = Schedule(cron="0 3 * * *", missed="once")
    assert posts_tick(nightly, TICK, TICK + timedelta(hours=2))


def test_a_nightly_tick_found_hours_late_is_skipped_with_missed_skip() -> None:
    nightly = Schedule(cron="0 3 * * *", missed="skip")
    assert not posts_tick(nightly, TICK, TICK + timedelta(hours=2))


def test_a_tick_found_within_a_minute_runs_with_missed_skip() -> None:
    nightly = Schedule(cron="0 3 * * *", missed="skip")
    assert posts_tick(nightly, TICK, TICK + timedelta(seconds=59))


def test_a_short_interval_tick_is_late_after_one_period() -> None:
    often = Schedule(every=10.0, missed="skip")
    assert posts_tick(often, TICK, TICK + timedelta(seconds=9))
    assert not posts_tick(often, TICK, TICK + timedelta(seconds=11))
