"""The forecast of an action, against a fixed flow: when the backlog clears, how long a
type meets its wait SLO, what a rate limit or a spread takes at least, and how far the
figures hold at the volume counted (skconsole.read.forecast, pure)."""

from __future__ import annotations

import pytest

from skconsole.read.flow import WINDOW_S, TypeFlow
from skconsole.read.forecast import (
    NO_FORECAST,
    Change,
    Clearing,
    Effect,
    SloOutlook,
    about,
    error_text,
    forecast,
    relative_error,
    type_forecast,
)


def flow(
    *,
    completions: int = 450,  # 1.5/s over the 5-minute window
    arrivals: int = 0,
    ready: int = 30,  # a backlog stood before the action: the workers were busy
    oldest_ready_s: float | None = None,
    slo_s: float | None = None,
    task_type: str = "emails.send",
) -> TypeFlow:
    return TypeFlow(
        task_type=task_type,
        window_s=WINDOW_S,
        arrivals=arrivals,
        completions=completions,
        ready=ready,
        ready_estimated=False,
        oldest_ready_s=oldest_ready_s,
        slo_max_wait_s=slo_s,
        paused=False,
    )


def requeue(
    n: int,
    task_type: str = "emails.send",
    *,
    rate_per_s: float | None = None,
    spread_s: float | None = None,
) -> Effect:
    """The effect of requeuing ``n`` jobs of ``task_type``."""
    return Effect(n, (Change(task_type, added=n, rate_per_s=rate_per_s),), spread_s)


def test_a_backlog_of_1284_jobs_at_1_5_per_second_clears_in_about_14_minutes() -> None:
    f = forecast(requeue(1254), [flow(ready=30)], WINDOW_S)

    (t,) = f.types
    assert (t.clearing, t.backlog) == (Clearing.CLEARS, 1284)
    assert t.clear_s == pytest.approx(1284 / 1.5)
    assert f.text.startswith("1,254 jobs: the backlog clears in ~14 min at the present rate")


def test_workers_that_kept_up_with_arrivals_give_no_clear_time() -> None:
    f = forecast(requeue(600), [flow(completions=450, arrivals=450, ready=3)], WINDOW_S)

    assert f.types[0].clearing is Clearing.KEPT_UP and f.types[0].clear_s is None
    assert f.text == (
        "600 jobs: emails.send's workers kept up with its arrivals (1.5/s): how fast they"
        " go with a backlog is not measured, no clear time"
    )


def test_the_backlog_clears_at_completions_net_of_arrivals() -> None:
    t = type_forecast(flow(completions=450, arrivals=150, ready=100), Change("emails.send", 500))

    assert t.backlog == 600
    assert t.clear_s == pytest.approx(600 / 1.0)


def test_a_backlog_fed_faster_than_it_is_worked_off_does_not_clear() -> None:
    f = forecast(requeue(1284), [flow(completions=300, arrivals=360)], WINDOW_S)

    assert f.types[0].clearing is Clearing.GROWS and f.types[0].clear_s is None
    assert "the backlog does not clear: arrivals outpace completions" in f.text


def test_a_type_with_no_completion_in_the_window_has_no_forecast() -> None:
    f = forecast(requeue(1284), [flow(completions=0, arrivals=20)], WINDOW_S)

    assert f.types[0].clearing is Clearing.UNKNOWN
    assert f.text == f"1,284 jobs: {NO_FORECAST}"


def test_a_type_the_flow_does_not_list_has_no_forecast() -> None:
    assert forecast(requeue(3, "new.type"), [flow()], WINDOW_S).text == f"3 jobs: {NO_FORECAST}"


def test_a_type_meets_its_wait_slo_until_the_oldest_waiting_job_reaches_it() -> None:
    # 1,000 ready at 1.5/s take 11 min to start; the oldest has waited 4 of its 10 min
    busy = flow(ready=1000, oldest_ready_s=240.0, slo_s=600.0)

    f = forecast(requeue(284), [busy], WINDOW_S)

    assert (f.types[0].slo, f.types[0].breach_s) == (SloOutlook.BREACHES, pytest.approx(360.0))
    assert "emails.send meets its wait SLO for ~6 min" in f.text


def test_jobs_made_ready_now_breach_a_max_wait_the_backlog_outlasts() -> None:
    t = type_forecast(flow(slo_s=300.0), Change("emails.send", added=1284))

    assert (t.slo, t.breach_s) == (SloOutlook.BREACHES, 300.0)


def test_a_backlog_started_within_the_max_wait_stays_within_it() -> None:
    f = forecast(requeue(60), [flow(ready=30, oldest_ready_s=5.0, slo_s=120.0)], WINDOW_S)

    assert f.types[0].slo is SloOutlook.WITHIN
    assert "emails.send stays within its wait SLO" in f.text


def test_a_type_past_its_max_wait_is_said_to_be_past_it_already() -> None:
    f = forecast(requeue(10), [flow(ready=5, oldest_ready_s=700.0, slo_s=600.0)], WINDOW_S)

    assert (f.types[0].slo, f.types[0].breach_s) == (SloOutlook.BREACHED, 100.0)
    assert "emails.send is past its wait SLO already (by ~2 min)" in f.text


def test_a_claim_rate_limit_is_the_least_the_backlog_takes() -> None:
    f = forecast(requeue(1284, rate_per_s=10.0), [flow(completions=6000, ready=516)], WINDOW_S)

    (t,) = f.types
    assert t.floor_s == pytest.approx(180.0)
    assert t.clear_s == pytest.approx(180.0)  # capped at 10/s, not the 20/s counted
    assert f.text.startswith("1,284 jobs: the backlog clears in ~3 min at its rate limit of 10/s")


def test_a_claim_rate_limit_above_the_present_rate_is_a_floor() -> None:
    f = forecast(requeue(1284, rate_per_s=10.0), [flow(completions=600)], WINDOW_S)

    assert f.types[0].clear_s == pytest.approx(657.0)
    assert "clears in ~11 min at the present rate" in f.text
    assert "at 10/s the backlog takes at least 2 min" in f.text


def test_a_spread_makes_the_last_job_due_at_its_end() -> None:
    f = forecast(requeue(1284, spread_s=600.0), [flow()], WINDOW_S)

    assert f.spread_per_s == pytest.approx(2.14, abs=0.01)
    assert f.types[0].clear_s == pytest.approx(1314 / 1.5)  # longer than the spread
    assert "spread at 2.1/s, the last is due in ~10 min" in f.text
    quick = forecast(requeue(10, spread_s=600.0), [flow()], WINDOW_S)
    assert quick.types[0].clear_s == 600.0


def test_jobs_moved_ahead_are_done_in_their_count_over_the_completion_rate() -> None:
    effect = Effect(90, (Change("emails.send", ahead=90),))

    f = forecast(effect, [flow(ready=5000)], WINDOW_S)

    assert f.types[0].ahead_s == pytest.approx(60.0)
    assert f.text == "90 jobs: if they run first, the 90 are done in ~1 min"


def test_a_lowered_concurrency_scales_the_completion_rate() -> None:
    t = type_forecast(flow(ready=900), Change("emails.send", scale=0.5))

    assert t.clear_s == pytest.approx(900 / 0.75)
    f = forecast(Effect(0, (Change("emails.send", scale=0.5),)), [flow(ready=900)], WINDOW_S)
    assert f.text.startswith("the backlog clears in ~20 min at ~50 % of the present rate")


def test_a_resumed_type_that_ran_nothing_in_the_window_has_no_forecast() -> None:
    paused = flow(completions=0, ready=400, oldest_ready_s=60.0, slo_s=600.0)

    f = forecast(Effect(400, (Change("emails.send", resumed=True),)), [paused], WINDOW_S)

    assert f.types[0].slo is SloOutlook.NONE
    assert f.text == f"400 jobs: {NO_FORECAST}"


def test_several_types_are_said_by_name_most_jobs_first() -> None:
    effect = Effect(30, (Change("sms.send", added=10), Change("emails.send", added=20)))
    flows = [flow(), flow(task_type="sms.send", completions=30)]

    f = forecast(effect, flows, WINDOW_S)

    assert [t.task_type for t in f.types] == ["emails.send", "sms.send"]
    assert "emails.send's backlog clears in ~35 s" in f.text
    assert "sms.send's backlog clears in ~7 min" in f.text


@pytest.mark.parametrize(
    ("completions", "arrivals", "band"),
    [
        (11, 0, "±30 % at this volume"),
        (100, 0, "±10 % at this volume"),
        (450, 150, "±10 % at this volume"),
        (10_000, 0, "±5 % at this volume"),
        (2, 1, "±more than 100 % at this volume: a guess"),
    ],
)
def test_the_error_band_follows_the_volume_counted(
    completions: int, arrivals: int, band: str
) -> None:
    assert error_text(relative_error(completions, arrivals)) == band


def test_no_error_band_without_a_net_completion_rate() -> None:
    assert relative_error(0, 0) is None
    assert relative_error(10, 10) is None


def test_the_band_is_said_with_the_clear_time() -> None:
    f = forecast(requeue(20), [flow(completions=11)], WINDOW_S)

    assert "the backlog clears in ~23 min at the present rate (±30 % at this volume)" in f.text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.2, "~1 s"),
        (7.4, "~7 s"),
        (42.0, "~40 s"),
        (856.0, "~14 min"),
        (60.0 * 89, "~89 min"),
        (3600.0 * 2.5, "~2.5 h"),
        (3600.0 * 2, "~2 h"),
        (3600.0 * 30, "~30 h"),
        (86400.0 * 3, "~3 days"),
    ],
)
def test_durations_are_rounded_as_people_say_them(seconds: float, text: str) -> None:
    assert about(seconds) == text


def test_the_forecast_as_json_holds_its_figures_and_its_sentence() -> None:
    f = forecast(requeue(1284), [flow()], WINDOW_S)

    doc = f.as_dict()

    assert doc["text"] == f.text and doc["jobs"] == 1284
    assert doc["types"] == [f.types[0].as_dict()]
    assert f.types[0].as_dict()["clearing"] == "clears"
