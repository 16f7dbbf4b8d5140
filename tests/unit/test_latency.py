"""Latency histograms: buckets, percentiles read from them, and adding them."""

from __future__ import annotations

import math

from skconsole.core.latency import BUCKETS, Histogram, bucket_bounds, bucket_of
from skconsole.read.record import Counts


def test_every_time_falls_within_its_buckets_bounds() -> None:
    for ms in (0.0, 0.5, 1.0, 1.5, 2.0, 7.0, 100.0, 12_345.0, 9e9):
        low, high = bucket_bounds(bucket_of(ms))
        assert low <= ms < high


def test_buckets_are_a_factor_of_root_two_wide() -> None:
    for b in range(2, BUCKETS - 1):
        low, high = bucket_bounds(b)
        assert math.isclose(high / low, math.sqrt(2))


def test_a_percentile_is_within_its_bucket_and_never_above_the_max() -> None:
    h = Histogram.of([0] * bucket_of(100.0) + [90, 10], max_ms=150.0)

    p50, p95 = h.percentile(0.5), h.percentile(0.95)

    assert p50 is not None and p95 is not None
    assert bucket_bounds(bucket_of(100.0))[0] <= p50 < bucket_bounds(bucket_of(100.0))[1]
    assert p95 <= 150.0


def test_an_empty_histogram_has_no_percentile() -> None:
    assert Histogram().latency().p50_ms is None
    assert Histogram().latency().count == 0


def test_histograms_of_different_lengths_add_bucket_by_bucket() -> None:
    a = Histogram.of([1, 2], 3.0)
    b = Histogram.of([0, 1, 5], 9.0)

    assert a + b == Histogram((1, 3, 5), 9.0)


def test_counts_add_like_the_record_adds() -> None:
    total = Counts(posted=1, failed_fatal=2) + Counts(posted=3, reaped=1, failed_recoverable=1)

    assert total == Counts(posted=4, failed_fatal=2, reaped=1, failed_recoverable=1)
    assert total.failed == 3
