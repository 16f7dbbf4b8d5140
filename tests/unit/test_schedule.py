"""Ticks of periodic types: the same in every worker, from a cron expression or an interval."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from skconsole.core.errors import ConfigError
from skconsole.core.schedule import Schedule, tick_id
from skconsole.worker.registry import TaskRegistry


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_interval_ticks_are_multiples_of_the_interval_since_the_epoch() -> None:
    s = Schedule(every=30.0)
    assert s.latest_tick(at("2026-11-24T06:00:59+00:00")) == at("2026-11-24T06:00:30+00:00")
    assert s.next_tick(at("2026-11-24T06:00:59+00:00")) == at("2026-11-24T06:01:00+00:00")


def test_a_tick_at_exactly_now_is_the_latest_not_the_next() -> None:
    s = Schedule(every=2.0)
    now = at("2026-11-24T06:00:02+00:00")
    assert s.latest_tick(now) == now
    assert s.next_tick(now) == now + timedelta(seconds=2)


def test_cron_ticks_follow_the_time_zone() -> None:
    s = Schedule(cron="0 3 * * *", timezone="Europe/Paris")
    now = at("2026-11-24T12:00:00+00:00")
    assert s.latest_tick(now) == at("2026-11-24T02:00:00+00:00")  # 03:00 in Paris (UTC+1)
    assert s.next_tick(now) == at("2026-11-25T02:00:00+00:00")


def test_a_cron_time_skipped_by_daylight_saving_runs_at_the_next_valid_time() -> None:
    s = Schedule(cron="30 2 * * *", timezone="Europe/Paris")
    # 2026-03-29: clocks jump from 02:00 to 03:00 in Paris
    tick = s.next_tick(at("2026-03-29T00:00:00+00:00"))
    assert tick.astimezone(ZoneInfo("Europe/Paris")).date().isoformat() == "2026-03-29"
    assert s.next_tick(tick) > tick


def test_cron_at_exactly_a_tick_counts_that_tick_as_due() -> None:
    s = Schedule(cron="*/5 * * * *")
    now = at("2026-11-24T06:05:00+00:00")
    assert s.latest_tick(now) == now


def test_the_usual_cron_shorthands_are_understood() -> None:
    assert Schedule(cron="@daily").describe() == "cron @daily"
    now = at("2026-11-24T06:00:00+00:00")
    assert Schedule(cron="@hourly").next_tick(now) == at("2026-11-24T07:00:00+00:00")


def test_a_tick_id_depends_on_the_type_and_the_tick_only() -> None:
    tick = at("2026-11-24T06:00:00+00:00")
    assert tick_id("a", tick) == tick_id("a", tick.astimezone(ZoneInfo("Asia/Tokyo")))
    assert tick_id("a", tick) != tick_id("b", tick)
    assert tick_id("a", tick) != tick_id("a", tick + timedelta(seconds=1))


def test_describe_says_what_the_schedule_is() -> None:
    assert Schedule(every=30.0).describe() == "every 30s"
    assert Schedule(cron="0 3 * * *", timezone="Europe/Paris").describe() == (
        "cron 0 3 * * * (Europe/Paris)"
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cron": "61 * * * *"}, "invalid cron expression"),
        ({"cron": "* * * *"}, "invalid cron expression"),
        ({"every": "0.5s"}, "every= must be between"),
        ({"every": "soon"}, "invalid duration"),
        ({"every": "10s", "cron": "* * * * *"}, "exactly one of cron= and every="),
        ({"every": "10s", "timezone": "Mars/Olympus"}, "unknown time zone"),
        ({"every": "10s", "missed": "twice"}, "missed= must be"),
        ({"every": "10s", "payload": {1, 2}}, "payload must be JSON"),
    ],
)
def test_a_bad_schedule_is_refused_when_the_task_is_registered(
    kwargs: dict[str, object], message: str
) -> None:
    tasks = TaskRegistry()
    with pytest.raises(ConfigError, match=message):
        tasks.task("t", **kwargs)(lambda p: None)  # type: ignore[arg-type]


def test_a_payload_without_a_schedule_is_refused() -> None:
    with pytest.raises(ConfigError, match="need cron= or every="):
        TaskRegistry().task("t", payload={"a": 1})


def test_the_registry_lists_its_periodic_types() -> None:
    tasks = TaskRegistry()
    tasks.task("a", every="1m")(lambda p: None)
    tasks.task("b")(lambda p: None)
    assert list(tasks.schedules()) == ["a"]
    assert tasks.schedules()["a"] == Schedule(every=60.0)


def test_a_task_cannot_be_its_own_next_stage() -> None:
    with pytest.raises(ConfigError, match="its own next stage"):
        TaskRegistry().task("a", then="a")(lambda p: None)


def test_the_pipeline_name_defaults_to_the_type_up_to_its_last_dot() -> None:
    tasks = TaskRegistry()
    tasks.task("orders.validate", then="orders.charge")(lambda p: p)
    tasks.task("solo", then="solo.next")(lambda p: p)
    tasks.task("x.y", then="x.z", pipeline="checkout")(lambda p: p)
    names = {n: tasks.get(n).pipeline_name for n in tasks.names()}  # type: ignore[union-attr]
    assert names == {"orders.validate": "orders", "solo": "solo", "x.y": "checkout"}


def test_now_in_any_zone_gives_the_same_ticks() -> None:
    s = Schedule(cron="15 * * * *", timezone="America/New_York")
    now = datetime(2026, 11, 24, 6, 20, tzinfo=UTC)
    assert s.latest_tick(now) == s.latest_tick(now.astimezone(ZoneInfo("Asia/Tokyo")))
