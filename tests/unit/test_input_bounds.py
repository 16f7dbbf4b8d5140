"""Input bounds the Python API checks when a value is made (a job, a selection, a
duration, a priority change): the same refusals the CLI gives, with no database."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

import pytest

from skconsole import Snooze, ops
from skconsole.core.durations import MAX_DURATION_S, parse_duration
from skconsole.core.errors import ConfigError, InvalidJobError
from skconsole.ops import LimitParams, Rate
from skconsole.ops.bump import BumpParams
from skconsole.ops.model import Selection
from skconsole.producer import (
    MAX_DELAY_S,
    MAX_PAYLOAD_DEPTH,
    Job,
    validate_payload_json,
)

NOT_UTF8 = b"t.\xff\xfe".decode("utf-8", errors="surrogateescape")  # as Python gives argv


# -- the Python API refuses the same input ------------------------------------------------------
@pytest.mark.parametrize(
    "delay", [math.nan, math.inf, -math.inf, -1.0, MAX_DELAY_S + 1, 1e300], ids=repr
)
def test_a_job_refuses_a_delay_that_is_not_finite_or_beyond_100_years(delay: float) -> None:
    with pytest.raises(InvalidJobError, match="delay must be between 0 and 3,153,600,000"):
        Job("t.a", delay=delay)


def test_a_job_accepts_a_delay_of_exactly_100_years() -> None:
    assert Job("t.a", delay=MAX_DELAY_S).delay == MAX_DELAY_S


@pytest.mark.parametrize("field", ["task_type", "key", "source", "payload_json"])
def test_a_job_refuses_text_that_is_not_utf8(field: str) -> None:
    value = f'"{NOT_UTF8}"' if field == "payload_json" else NOT_UTF8
    kwargs: dict[str, Any] = {"task_type": "t.a", field: value}

    with pytest.raises(InvalidJobError, match="not valid UTF-8"):
        Job(**kwargs)


def _nested(depth: int) -> list[Any]:
    doc: list[Any] = []
    for _ in range(depth - 1):
        doc = [doc]
    return doc


def test_a_payload_nested_deeper_than_the_limit_is_refused_before_it_is_parsed() -> None:
    for text in (
        "[" * 50_000,
        "[" * 50_000 + "]" * 50_000,
        json.dumps(_nested(MAX_PAYLOAD_DEPTH + 1)),
    ):
        with pytest.raises(InvalidJobError, match="nested too deeply"):
            validate_payload_json(text)
    with pytest.raises(InvalidJobError, match="nested too deeply"):
        Job("t.a", _nested(50_000))


def test_a_payload_at_the_depth_limit_is_accepted_and_brackets_in_strings_do_not_count() -> None:
    at_limit = json.dumps(_nested(MAX_PAYLOAD_DEPTH))
    brackets_in_strings = json.dumps({"a": "[" * 1_000, "b": '\\"[{' * 1_000})

    assert validate_payload_json(at_limit) == at_limit
    assert validate_payload_json(brackets_in_strings) == brackets_in_strings
    assert Job("t.a", _nested(MAX_PAYLOAD_DEPTH)).payload_json == at_limit.replace(" ", "")


def test_a_selection_refuses_a_task_type_longer_than_250_characters() -> None:
    assert Selection(task_type="x" * 250).task_type == "x" * 250
    with pytest.raises(ConfigError, match="longer than 250 characters"):
        Selection(task_type="x" * 251)


@pytest.mark.parametrize("field", ["task_type", "group"])
def test_a_selection_refuses_text_that_is_not_utf8_or_holds_nul(field: str) -> None:
    for value, fragment in ((NOT_UTF8, "not valid UTF-8"), ("a\x00b", "NUL")):
        kwargs: dict[str, Any] = {field: value}
        with pytest.raises(ConfigError, match=fragment):
            Selection(**kwargs)


@pytest.mark.parametrize("seconds", [math.nan, math.inf, -1.0, MAX_DURATION_S + 1], ids=repr)
def test_a_selection_refuses_an_age_that_is_not_finite_or_beyond_100_years(
    seconds: float,
) -> None:
    with pytest.raises(ConfigError, match="--older-than must be between 0s and 36500d"):
        Selection(older_than_seconds=seconds)


def test_a_frozen_selection_at_the_age_limit_has_a_cutoff_100_years_back() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 1, 1, tzinfo=UTC)

    frozen = Selection(older_than_seconds=MAX_DURATION_S).frozen(now)

    assert frozen.cutoff is not None and frozen.cutoff.year == 1926


@pytest.mark.parametrize(
    ("text", "bounds", "fragment"),
    [
        ("36501d", {}, "must be between 0s and 36500d"),
        ("9" * 400, {}, "must be between 0s and 36500d"),
        ("5ms", {"minimum": 0.01}, "must be between 10ms and 36500d"),
        ("2h", {"maximum": 3600.0}, "must be between 0s and 1h"),
        ("1e5", {}, "invalid duration '1e5'"),
        ("\u0663s", {}, "invalid duration"),  # an Arabic-Indic digit is not a number here
    ],
    ids=[
        "past-100-years",
        "400-digits",
        "below-minimum",
        "above-maximum",
        "exponent",
        "non-ascii-digit",
    ],
)
def test_parse_duration_refuses_values_outside_its_bounds(
    text: str, bounds: dict[str, float], fragment: str
) -> None:
    with pytest.raises(ConfigError, match=fragment):
        parse_duration(text, option="--x", **bounds)


def test_parse_duration_accepts_its_bounds() -> None:
    assert parse_duration("36500d") == MAX_DURATION_S
    assert parse_duration("10ms", minimum=0.01) == 0.01


@pytest.mark.parametrize(
    ("by", "to", "fragment"),
    [
        (None, 2**31, "--to must be between 0 and 2147483647"),
        (0, None, "--by must be between 1"),
        (1.5, None, "--by must be a whole number"),
        (None, True, "--to must be a whole number"),
    ],
)
def test_bump_refuses_a_priority_change_out_of_range_or_not_whole(
    by: Any, to: Any, fragment: str
) -> None:
    with pytest.raises(ConfigError, match=fragment):
        BumpParams(by=by, to=to)


def test_a_priority_beyond_a_postgres_integer_is_refused() -> None:
    with pytest.raises(InvalidJobError, match="priority"):
        Job("t.bad", priority=2**31)


def test_a_non_integer_priority_is_refused() -> None:
    with pytest.raises(InvalidJobError, match="priority"):
        Job("t.bad", priority=1.5)  # type: ignore[arg-type]


def test_a_task_type_longer_than_the_column_is_refused() -> None:
    with pytest.raises(InvalidJobError, match="longer than 250"):
        Job("t" * 251)


def test_a_negative_delay_is_refused() -> None:
    with pytest.raises(InvalidJobError, match="delay"):
        Job("t.bad", delay=-1)


def test_payload_text_holding_a_raw_nul_character_is_refused() -> None:
    with pytest.raises(InvalidJobError):
        Job("t.bad", payload_json='"a\x00b"')


def test_a_naive_run_at_is_refused() -> None:
    with pytest.raises(InvalidJobError, match="timezone-aware"):
        Job("x", run_at=datetime(2030, 1, 1))


def test_run_at_with_a_delay_is_refused() -> None:
    with pytest.raises(InvalidJobError, match="either delay or run_at"):
        Job("x", delay=5, run_at=datetime.now(UTC))


def test_run_at_must_be_a_datetime() -> None:
    with pytest.raises(InvalidJobError, match="run_at must be a datetime"):
        Job("x", run_at="tomorrow")  # type: ignore[arg-type]


@pytest.mark.parametrize("seconds", [-1, float("nan"), float("inf"), 10**10])
def test_a_snooze_of_an_impossible_length_is_refused(seconds: float) -> None:
    with pytest.raises(ValueError, match="between 0 and 100 years"):
        Snooze(seconds)


def test_a_snooze_of_something_else_than_seconds_is_refused() -> None:
    with pytest.raises(TypeError, match="number of seconds"):
        Snooze("5m")  # type: ignore[arg-type]


def test_a_payload_nested_too_deeply_is_refused_as_the_producer_refuses_it() -> None:
    with pytest.raises(ConfigError, match="nested too deeply"):
        ops.EditParams(payload="[" * 600 + "]" * 600)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"concurrency": 0}, "--concurrency must be 1"),
        ({"concurrency": -3}, "--concurrency must be 1"),
        ({}, "limit needs --concurrency"),
        ({"concurrency": 2, "clear_concurrency": True}, "not both"),
    ],
)
def test_limit_parameters_are_checked_when_made(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        LimitParams(**kw)


@pytest.mark.parametrize("text", ["10", "10/hour", "-5/s", "0/s", "ten/s", "5/ms"])
def test_a_rate_is_n_per_second_or_minute(text: str) -> None:
    with pytest.raises(ConfigError, match="--rate"):
        Rate.parse(text)
