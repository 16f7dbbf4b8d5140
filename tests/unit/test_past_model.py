"""The past read model over a book (read.past.past_at: pure, no database) and its JSON,
which an incident bundle carries."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from skconsole.core.json_read import Doc
from skconsole.core.latency import Histogram
from skconsole.read.past import Book, Gauge, Past, past_at, worst_minute
from skconsole.read.record import Counts, RecordSource

T = datetime(2026, 12, 6, 2, 47, tzinfo=UTC)
M = timedelta(minutes=1)


def a_book() -> Book:
    ok = {
        T - 20 * M: Counts(posted=10, started=10, succeeded=10, run=Histogram.of([0, 2, 8], 1.9)),
        T: Counts(posted=4, started=4, succeeded=3, failed_fatal=1, wait=Histogram.of([1], 0.5)),
    }
    sig = {T - 90 * M: Counts(failed_fatal=1), T: Counts(failed_fatal=1)}
    gauges = (
        Gauge(T - 2 * M, "mail.send", 7, 2, 1, None, False),
        Gauge(T - 2 * M, "", 7, 2, 1, 3, False),
    )
    return Book(
        T - 24 * 60 * M,
        T + 10 * M,
        RecordSource.RECORD,
        T - 24 * 60 * M,
        {"mail.send": ok},
        {("mail.send", "SMTPError: 550 <*>"): sig},
        gauges,
    )


def test_a_past_minute_takes_depth_and_workers_from_the_latest_gauge_within_reach() -> None:
    at = past_at(a_book(), T)

    (t,) = at.types
    assert (t.ready, t.scheduled, t.running, at.workers_alive) == (7, 2, 1, 3)
    assert at.gauges_at == T - 2 * M


def test_a_past_minute_counts_its_minute_and_its_last_15_minutes() -> None:
    (t,) = past_at(a_book(), T).types

    assert (t.minute.posted, t.minute.succeeded, t.minute.failed_for_good) == (4, 3, 1)
    assert (t.recent.posted, t.recent.succeeded) == (4, 3)  # 20 minutes ago is out


def test_a_failure_group_counts_the_hour_and_was_first_seen_before_it() -> None:
    (g,) = past_at(a_book(), T).groups

    assert g.failed == 1  # the hour up to T
    assert g.first_seen == T - 90 * M  # within the day before


def test_without_a_gauge_within_reach_depth_is_not_kept_rather_than_zero() -> None:
    (t,) = past_at(a_book(), T - 20 * M).types

    assert (t.ready, t.scheduled, t.running) == (None, None, None)


def test_a_past_minute_round_trips_through_json() -> None:
    at = past_at(a_book(), T, samples={"SMTPError: 550 <*>": "SMTPError: 550 no such user"})

    again = Past.from_dict(Doc.of(json.loads(json.dumps(at.as_dict()))))

    assert again == at


def test_a_book_round_trips_through_json_and_rebuilds_the_same_minute() -> None:
    b = a_book()

    again = Book.from_dict(Doc.of(json.loads(json.dumps(b.as_dict()))))

    assert past_at(again, T) == past_at(b, T)


def test_the_worst_minute_is_the_one_with_the_most_failures() -> None:
    assert worst_minute(a_book()) == T
