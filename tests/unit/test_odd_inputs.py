"""Inputs that are no JSON or no sensible time are refused when made, with one line.

NaN, Infinity and -Infinity: Python's json writes and reads them, JSON has
none, and a consumer in another language (a .NET one) fails on them. A
``run_at`` (or ``--run-at``) more than 100 years from now: a sentinel ("never",
year 9999), from which the read models could tell no wait. And an age past
100 years, which only such a time gives, reads "unknown".
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from skconsole.core.durations import MAX_DURATION_S, format_age, parse_time
from skconsole.core.errors import ConfigError, InvalidJobError
from skconsole.ops.edit import EditParams
from skconsole.producer import MAX_DELAY_S, Job, validate_payload_json
from skconsole.read.flow import slo_text

NOT_JSON = "which JSON cannot hold (send null or a string instead)"


# -- payloads ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "payload",
    [math.nan, math.inf, {"a": [1, -math.inf]}],
    ids=["nan", "infinity", "nested -infinity"],
)
def test_a_payload_holding_nan_or_infinity_is_refused_in_one_line(payload: Any) -> None:
    with pytest.raises(InvalidJobError) as refused:
        Job("odd", payload)
    assert str(refused.value) == f"payload holds NaN or Infinity, {NOT_JSON}"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_payload_json_holding_nan_or_infinity_is_refused_in_one_line(constant: str) -> None:
    text = f'{{"a": [{constant}]}}'
    with pytest.raises(InvalidJobError) as refused:
        validate_payload_json(text)
    assert str(refused.value) == f"payload holds {constant}, {NOT_JSON}"
    with pytest.raises(InvalidJobError, match="payload holds"):
        Job("odd", payload_json=text)


def test_nan_and_infinity_as_strings_are_fine_payloads() -> None:
    assert Job("odd", {"a": "NaN", "b": "Infinity"}).payload_json == '{"a":"NaN","b":"Infinity"}'
    assert validate_payload_json('["NaN", "-Infinity"]') == '["NaN", "-Infinity"]'


def test_other_unserialisable_payloads_keep_their_own_reason() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(InvalidJobError, match="not JSON-serialisable: Circular reference"):
        Job("odd", loop)


def test_edit_refuses_a_payload_holding_nan_in_one_line() -> None:
    with pytest.raises(ConfigError) as refused:
        EditParams(payload='{"a": NaN}')
    assert str(refused.value) == f"--payload: payload holds NaN, {NOT_JSON}"


# -- run_at -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "run_at",
    [
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
        datetime.max.replace(tzinfo=UTC),
        datetime(1, 1, 1, tzinfo=UTC),
        datetime.now(UTC) + timedelta(seconds=MAX_DELAY_S + 86_400),
    ],
    ids=["year 9999", "datetime.max", "year 1", "a day past 100 years"],
)
def test_a_run_at_more_than_100_years_from_now_is_refused_in_one_line(run_at: datetime) -> None:
    with pytest.raises(InvalidJobError) as refused:
        Job("odd", run_at=run_at)
    assert str(refused.value) == (
        f"run_at must be within 100 years of now, got {run_at.isoformat()}"
        " (for a job that should never run, do not post it)"
    )


def test_a_run_at_a_day_within_100_years_either_way_is_taken() -> None:
    reach = timedelta(seconds=MAX_DELAY_S - 86_400)
    for when in (datetime.now(UTC) + reach, datetime.now(UTC) - reach):
        assert Job("odd", run_at=when).run_at == when


@pytest.mark.parametrize("text", ["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00Z"])
def test_a_time_option_more_than_100_years_from_now_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_time(text, option="--run-at")
    assert str(refused.value) == (
        f"--run-at must be within 36500d (100 years) of now, got '{text}'"
    )


# -- ages nobody meant ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "seconds", [MAX_DURATION_S + 1, 6.4e10, math.inf, -math.inf, math.nan], ids=repr
)
def test_an_age_past_100_years_or_not_a_number_reads_unknown(seconds: float) -> None:
    assert format_age(seconds) == "unknown"


def test_an_age_of_100_years_still_reads_as_an_age() -> None:
    assert format_age(MAX_DURATION_S) == "36500d 00h"


def test_an_slo_with_ready_jobs_none_of_whose_wait_is_known_reads_wait_unknown() -> None:
    assert slo_text(30.0, None, ready=2) == "wait unknown"
    assert slo_text(30.0, None, ready=0) == "met: none ready"
