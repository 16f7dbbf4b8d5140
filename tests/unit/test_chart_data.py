"""The charts' figures shaped from the per-minute record (skconsole.tui.chart_data), and
the history view's span and steps: pure, no terminal and no database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from skconsole.core.latency import Histogram, bucket_of
from skconsole.read.failures import FailureGroup
from skconsole.read.record import FROM_ROWS_NOTE, Counts, Record, RecordSource
from skconsole.tui.chart_data import (
    BY_KEY,
    WINDOWS,
    ChartData,
    bounds,
    chart_set,
    figure_label,
    known_steps,
    nice_top,
    ticks,
    ticks_for_width,
    y_ticks,
)
from skconsole.tui.screens.group_jobs import curve_line
from skconsole.tui.widgets.failures_panel import fit_signature
from skconsole.views.failures import NEW_MARK, is_new, signature_cell
from skconsole.views.history import default_step, span
from skconsole.views.registry import ViewArgs

NOW = datetime(2026, 3, 14, 3, 12, 30, tzinfo=UTC)


def _record(
    window_key: str = "15m",
    *,
    starts_at: datetime | None = None,
    source: RecordSource = RecordSource.RECORD,
    by_type: dict[str, dict[datetime, Counts]] | None = None,
) -> Record:
    window = BY_KEY[window_key]
    since, until = bounds(window, NOW)
    return Record(
        since,
        until,
        window.step,
        source,
        since if starts_at is None else starts_at,
        by_type or {},
        {},
    )


def _data(record: Record, slos: dict[str, float] | None = None) -> ChartData:
    window = next(
        w for w in WINDOWS if w.step == record.step and w.span == record.until - record.since
    )
    return ChartData(window, record, slos or {})


# -- windows and steps -------------------------------------------------------------------
def test_every_window_has_at_most_170_points() -> None:
    for window in WINDOWS:
        assert window.span / window.step <= 170


def test_a_windows_bounds_are_whole_steps_ending_with_the_step_now_falls_in() -> None:
    since, until = bounds(BY_KEY["24h"], NOW)

    assert until == datetime(2026, 3, 14, 3, 15, tzinfo=UTC)
    assert until - since == timedelta(hours=24)


def test_a_window_read_twice_within_a_step_has_the_same_bounds() -> None:
    window = BY_KEY["7d"]
    assert bounds(window, NOW) == bounds(window, NOW + timedelta(minutes=20))


# -- the x axis ----------------------------------------------------------------------------
def test_ticks_are_at_most_the_number_asked_and_end_at_the_last_step() -> None:
    steps = [NOW + timedelta(minutes=i) for i in range(60)]

    shown = ticks(steps, "%H:%M", 6)

    assert len(shown) <= 6
    assert shown[-1] == (59, steps[59].strftime("%H:%M"))


def test_a_narrow_chart_gets_fewer_time_labels_than_a_wide_one() -> None:
    steps = [NOW + timedelta(hours=i) for i in range(168)]

    narrow = ticks_for_width(steps, "%a %d", 30)
    wide = ticks_for_width(steps, "%a %d", 110)

    assert 1 <= len(narrow) < len(wide) <= 6


def test_a_weeks_time_labels_name_the_day() -> None:
    steps = [datetime(2026, 3, 9, tzinfo=UTC) + timedelta(hours=i) for i in range(168)]

    assert ticks(steps, BY_KEY["7d"].tick_format, 2)[-1][1] == "Sun 15"


# -- the y axis ----------------------------------------------------------------------------
def test_the_y_axis_tops_at_a_round_figure_at_or_above_the_highest_value() -> None:
    assert [nice_top(v) for v in (0, 0.7, 3, 19_460, 2_001)] == [1.0, 1.0, 5.0, 20_000.0, 2_500.0]


def test_y_labels_are_short() -> None:
    assert [label for _, label in y_ticks(19_460)] == ["0", "5k", "10k", "15k", "20k"]
    assert figure_label(1_500_000) == "1.5M"


# -- the charts ----------------------------------------------------------------------------
def _minute(posted: int, failed: int, wait_ms: float) -> Counts:
    waits = [0] * (bucket_of(wait_ms) + 1)
    waits[-1] = posted
    return Counts(
        posted=posted,
        succeeded=posted - failed,
        failed_fatal=failed,
        wait=Histogram(tuple(waits), wait_ms),
    )


def test_the_throughput_chart_has_each_steps_posted_succeeded_and_failed() -> None:
    record = _record()
    at = record.steps[3]
    record.by_type["a"] = {at: _minute(10, 2, 100)}

    throughput = chart_set(_data(record), None).charts[0]

    assert [line.label for line in throughput.lines] == ["posted", "succeeded", "failed"]
    assert [line.values[3] for line in throughput.lines] == [10.0, 8.0, 2.0]
    assert throughput.lines[0].values[2] == 0.0


def test_one_types_charts_leave_the_other_types_out() -> None:
    record = _record()
    at = record.steps[0]
    record.by_type.update({"a": {at: _minute(10, 0, 100)}, "b": {at: _minute(5, 0, 100)}})

    assert chart_set(_data(record), "b").charts[0].lines[0].values[0] == 5.0
    assert chart_set(_data(record), None).charts[0].lines[0].values[0] == 15.0


def test_a_types_wait_slo_is_drawn_across_its_wait_chart_and_not_the_queues() -> None:
    record = _record()
    record.by_type["a"] = {record.steps[0]: _minute(10, 0, 2_000)}

    wait = chart_set(_data(record, {"a": 3.0}), "a").charts[2]
    queue_wait = chart_set(_data(record, {"a": 3.0}), None).charts[2]

    assert wait.threshold is not None and wait.threshold.label == "SLO 3 s"
    assert wait.threshold.value == 3_000.0 and wait.y_label == "ms"
    assert queue_wait.threshold is None


def test_long_waits_are_drawn_in_seconds() -> None:
    record = _record()
    record.by_type["a"] = {record.steps[0]: _minute(10, 0, 45_000)}

    wait = chart_set(_data(record), "a").charts[2]

    assert wait.y_label == "s"
    assert 20 < (wait.lines[0].values[0] or 0) < 60


def test_a_step_where_nothing_ran_has_no_latency_rather_than_zero() -> None:
    record = _record()
    record.by_type["a"] = {record.steps[0]: _minute(10, 0, 100)}

    wait = chart_set(_data(record), "a").charts[2]

    assert wait.lines[1].values[1] is None
    assert wait.lines[1].points()[0] == [0]


def test_steps_before_the_record_starts_are_unknown_not_zero() -> None:
    record = _record("1h", starts_at=NOW - timedelta(minutes=10))

    known = known_steps(record)
    throughput = chart_set(_data(record), None).charts[0]

    assert known[0] is False and known[-1] is True
    assert throughput.lines[0].values[0] is None
    assert throughput.lines[0].values[-1] == 0.0


def test_a_window_reaching_before_the_record_says_where_it_starts() -> None:
    record = _record("1h", starts_at=datetime(2026, 3, 14, 3, 2, tzinfo=UTC))

    assert chart_set(_data(record), None).notes == (
        "the record starts at 2026-03-14 03:02: nothing is known before it",
    )


def test_a_window_within_the_record_has_no_note() -> None:
    assert chart_set(_data(_record("1h")), None).notes == ()


def test_charts_read_from_the_job_rows_say_so() -> None:
    record = _record(source=RecordSource.ROWS)

    assert chart_set(_data(record), None).notes == (FROM_ROWS_NOTE,)


def test_a_hostile_type_name_is_escaped_in_the_charts_title() -> None:
    assert "\x1b" not in chart_set(_data(_record()), "evil\x1b[2J").title


# -- status history's span ------------------------------------------------------------------
def test_the_default_step_keeps_a_span_within_170_rows() -> None:
    assert default_step(timedelta(hours=1)) == timedelta(minutes=1)
    assert default_step(timedelta(hours=24)) == timedelta(minutes=15)
    assert default_step(timedelta(days=7)) == timedelta(hours=1)
    assert default_step(timedelta(days=90)) == timedelta(days=1)


def test_since_goes_back_from_until_and_minutes_is_the_default_span() -> None:
    until = NOW - timedelta(hours=2)

    assert span(ViewArgs(since_s=3600.0, until=until), NOW)[:2] == (
        until - timedelta(hours=1),
        until,
    )
    end = datetime(2026, 3, 14, 3, 13, tzinfo=UTC)  # the end of the minute NOW falls in
    assert span(ViewArgs(minutes=30), NOW)[:2] == (end - timedelta(minutes=30), end)


def test_without_until_the_span_ends_with_the_step_now_falls_in() -> None:
    assert span(ViewArgs(since_s=86_400.0), NOW)[1] == datetime(2026, 3, 14, 3, 15, tzinfo=UTC)
    assert span(ViewArgs(), NOW)[1] == span(ViewArgs(), NOW + timedelta(seconds=20))[1]


def test_a_step_given_is_kept() -> None:
    assert span(ViewArgs(since_s=86_400.0, step_s=3600.0), NOW)[2] == timedelta(hours=1)


# -- panel 3: new groups, the group's curve ----------------------------------------------------
def _group(first_seen_s_ago: float) -> FailureGroup:
    first = NOW - timedelta(seconds=first_seen_s_ago)
    return FailureGroup("mod.Boom: no <n>", 3, {4: 3}, ["a"], first, NOW, None, None)


def test_a_group_first_seen_less_than_5_minutes_ago_is_marked_new() -> None:
    now = NOW.timestamp()

    assert is_new(_group(120), now) and not is_new(_group(301), now)
    assert signature_cell(_group(120), now) == (NEW_MARK + "mod.Boom: no <n>", "bad")
    assert signature_cell(_group(900), now) == ("mod.Boom: no <n>", "bad")


def test_a_new_groups_mark_stays_whole_when_its_signature_is_shortened() -> None:
    text = NEW_MARK + "skconsole.demo.handlers.PaymentDeclined: card declined for order <n>"

    shown = fit_signature(text, 50)

    assert shown.startswith(NEW_MARK + "s.d.")
    assert len(shown) <= 50


def test_a_groups_curve_is_one_line_of_bars_and_its_peak() -> None:
    line = curve_line(tuple([0] * 50 + [1, 2, 4, 8, 4, 2, 1, 0, 0, 0]))

    assert line.startswith("1 h ▁") and line.endswith("peak 8/min")
    assert len(line) <= 80


def test_a_quiet_groups_curve_says_so() -> None:
    assert curve_line((0,) * 60) == "No failures in the last 60 min (the record)"
