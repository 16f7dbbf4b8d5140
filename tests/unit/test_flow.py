"""The flow read model's arithmetic and wording, on made-up figures (no database)."""

from __future__ import annotations

import pytest

from skconsole.read.flow import (
    SloState,
    TypeFlow,
    breach_in_s,
    drain_seconds,
    drain_text,
    growth_per_min,
    per_minute,
    rate_text,
    slo_state,
    slo_text,
)


def type_flow(**kw: object) -> TypeFlow:
    values: dict[str, object] = {
        "task_type": "emails.send",
        "window_s": 300.0,
        "arrivals": 0,
        "completions": 0,
        "ready": 0,
        "ready_estimated": False,
        "oldest_ready_s": None,
        "slo_max_wait_s": None,
        "paused": False,
    }
    return TypeFlow(**{**values, **kw})  # type: ignore[arg-type]


# -- rates and drain -------------------------------------------------------------------
def test_a_count_over_a_window_is_a_rate_per_minute() -> None:
    assert per_minute(600, 300.0) == 120.0
    assert per_minute(5, 30.0) == 10.0


def test_a_shrinking_backlog_drains_at_the_net_rate() -> None:
    # 1,000 ready; 300/min finish, 50/min arrive: net 250/min, so 4 minutes
    assert drain_seconds(1_000, 50.0, 300.0) == pytest.approx(240.0)
    assert drain_text(1_000, 50.0, 300.0) == "drains in 4m 00s"


def test_a_growing_backlog_says_how_fast_it_grows() -> None:
    assert drain_seconds(500, 200.0, 80.0) is None
    assert growth_per_min(500, 200.0, 80.0) == 120.0
    assert drain_text(500, 200.0, 80.0) == "growing 120/min"


def test_an_empty_backlog_is_drained_and_not_growing() -> None:
    assert drain_seconds(0, 200.0, 80.0) == 0.0
    assert growth_per_min(0, 200.0, 80.0) is None
    assert drain_text(0, 200.0, 80.0) == "empty"


def test_a_backlog_nobody_works_off_is_stalled_and_one_kept_level_is_steady() -> None:
    assert drain_seconds(10, 0.0, 0.0) is None
    assert drain_text(10, 0.0, 0.0) == "stalled"
    assert drain_text(10, 60.0, 60.0) == "steady"


def test_rates_read_as_people_write_them() -> None:
    assert rate_text(0.0) == "0/min"
    assert rate_text(2.5) == "2.5/min"
    assert rate_text(1234.4) == "1,234/min"


def test_a_type_flow_derives_its_rates_and_drain_from_its_counts() -> None:
    f = type_flow(arrivals=250, completions=1_500, ready=1_000)  # 50/min in, 300/min out

    assert (f.arrivals_per_min, f.completions_per_min) == (50.0, 300.0)
    assert f.drain_s == pytest.approx(240.0)
    assert f.as_dict()["drain"] == "drains in 4m 00s"


# -- SLO -------------------------------------------------------------------------------
def test_breach_in_counts_down_to_the_slo_and_below_zero_past_it() -> None:
    assert breach_in_s(30.0, 18.0) == 12.0
    assert breach_in_s(30.0, 110.0) == -80.0
    assert breach_in_s(None, 110.0) is None
    assert breach_in_s(30.0, None) is None


def test_the_slo_wording() -> None:
    assert slo_text(30.0, 18.0) == "breach in 12s"
    assert slo_text(30.0, 110.0) == "breached 1m 20s ago"
    assert slo_text(30.0, None) == "met: none ready"
    assert slo_text(None, 110.0) == "-"


@pytest.mark.parametrize(
    ("oldest", "state"),
    [
        (None, SloState.OK),
        (10.0, SloState.OK),
        (23.9, SloState.OK),
        (24.0, SloState.WARNING),  # within 20% of 30 s
        (30.0, SloState.WARNING),  # at the SLO, not past it
        (30.1, SloState.BREACHED),
    ],
)
def test_an_slo_turns_to_warning_within_20_percent_and_breached_past_it(
    oldest: float | None, state: SloState
) -> None:
    assert slo_state(30.0, oldest) is state


def test_a_type_without_slo_has_no_state_and_no_colour() -> None:
    assert slo_state(None, 500.0) is SloState.NONE
    assert SloState.NONE.style is None
    assert {SloState.OK.style, SloState.WARNING.style, SloState.BREACHED.style} == {
        "green",
        "yellow",
        "red",
    }


def test_a_type_flow_as_a_document() -> None:
    f = type_flow(ready=3, oldest_ready_s=95.0, slo_max_wait_s=30.0)

    doc = f.as_dict()

    assert (doc["slo_state"], doc["slo"], doc["breach_in_s"]) == (
        "breached",
        "breached 1m 05s ago",
        -65.0,
    )
    assert doc["drain"] == "stalled"
