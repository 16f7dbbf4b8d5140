"""A past moment as an operator types it (core.moments): a time of day in UTC, a duration
back, an ISO time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from skconsole.core.errors import ConfigError
from skconsole.core.moments import parse_moment

NOW = datetime(2026, 12, 6, 9, 30, 15, tzinfo=UTC)


def test_a_time_of_day_already_past_is_today_s() -> None:
    assert parse_moment("02:47", option="--at", now=NOW) == datetime(2026, 12, 6, 2, 47, tzinfo=UTC)


def test_a_time_of_day_still_ahead_is_yesterday_s() -> None:
    assert parse_moment("23:10", option="--at", now=NOW) == datetime(
        2026, 12, 5, 23, 10, tzinfo=UTC
    )


def test_a_duration_ago_counts_back_from_now() -> None:
    assert parse_moment("2h ago", option="--at", now=NOW) == NOW - timedelta(hours=2)


def test_an_iso_time_with_its_zone_is_that_instant() -> None:
    assert parse_moment("2026-12-06T03:47:00+01:00", option="--at", now=NOW) == datetime(
        2026, 12, 6, 2, 47, tzinfo=UTC
    )


def test_a_time_in_the_future_is_refused() -> None:
    with pytest.raises(ConfigError, match="in the future"):
        parse_moment("2026-12-07T00:00:00Z", option="--at", now=NOW)


def test_words_are_refused_naming_the_option() -> None:
    with pytest.raises(ConfigError, match="--since"):
        parse_moment("yesterday", option="--since", now=NOW)
