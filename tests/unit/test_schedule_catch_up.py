"""What a worker does with a due tick: missed="once" posts it, "skip" only an on-time
tick that follows the last one taken."""

from __future__ import annotations

from datetime import datetime, timedelta

from skconsole.core.schedule import Schedule
from skconsole.worker.schedules import posts_tick

TICK = datetime.fromisoformat("2026-11-24T03:00:00+00:00")
DAY = timedelta(days=1)


def test_a_nightly_tick_found_hours_late_runs_once_with_missed_once() -> None:
    nightly = Schedule(cron="0 3 * * *", missed="once")
    assert posts_tick(nightly, TICK - 3 * DAY, TICK, TICK + timedelta(hours=2))


def test_a_nightly_tick_found_hours_late_is_skipped_with_missed_skip() -> None:
    nightly = Schedule(cron="0 3 * * *", missed="skip")
    assert not posts_tick(nightly, TICK - DAY, TICK, TICK + timedelta(hours=2))


def test_an_on_time_tick_that_follows_the_last_one_runs_with_missed_skip() -> None:
    nightly = Schedule(cron="0 3 * * *", missed="skip")
    assert posts_tick(nightly, TICK - DAY, TICK, TICK + timedelta(seconds=59))


def test_an_on_time_tick_after_a_gap_is_skipped_with_missed_skip() -> None:
    """The workers were down over the previous ticks: the first one they find is
    among the missed ones, however fresh."""
    often = Schedule(every=2.0, missed="skip")
    assert not posts_tick(often, TICK - timedelta(seconds=20), TICK, TICK + timedelta(seconds=0.3))


def test_a_short_interval_tick_is_late_after_one_period() -> None:
    often = Schedule(every=10.0, missed="skip")
    last = TICK - timedelta(seconds=10)
    assert posts_tick(often, last, TICK, TICK + timedelta(seconds=9))
    assert not posts_tick(often, last, TICK, TICK + timedelta(seconds=11))
