"""Latency histograms of the per-minute record: how long jobs waited once due, and ran.

A minute's waits and run times cannot be kept one by one for weeks, and percentiles
cannot be added across minutes, workers or types; counts per bucket can. So the record
keeps, per minute and type, how many attempts fell in each bucket (the SQL twin of
:func:`bucket_of` is ``sk_record_bucket()``, sql/schema/146_skconsole_record.sql; a
test checks they agree), adds them for any span, and a percentile is read from the sum:
exact to its bucket, whose edges are a factor of sqrt(2) apart, and said as the
bucket's geometric middle (within 19 % of the true value). The maximum is kept exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: buckets in all: 0 is below 1 ms, b >= 1 is [2^((b-1)/2), 2^(b/2)) ms, the last open
BUCKETS = 64


def bucket_of(ms: float) -> int:
    """The bucket a time in milliseconds counts in."""
    if ms < 1:
        return 0
    if ms >= 2**31 or math.isnan(ms):
        return BUCKETS - 1
    # the SQL's own arithmetic (2 ln(ms) / ln(2)), so both put an edge in one bucket
    return min(BUCKETS - 1, 1 + math.floor(2 * math.log(ms) / math.log(2)))


def bucket_bounds(bucket: int) -> tuple[float, float]:
    """The times a bucket holds, [low, high) in milliseconds (the last: high is inf)."""
    if bucket <= 0:
        return (0.0, 1.0)
    high = math.inf if bucket >= BUCKETS - 1 else 2 ** (bucket / 2)
    return (2 ** ((bucket - 1) / 2), high)


@dataclass(frozen=True)
class Latency:
    """A span's waits or run times: p50 and p95 to their bucket, the max exact; None
    where nothing was timed."""

    count: int = 0
    p50_ms: float | None = None
    p95_ms: float | None = None
    max_ms: float | None = None


@dataclass(frozen=True)
class Histogram:
    """Attempts per bucket (index = bucket), and the longest time, exactly."""

    counts: tuple[int, ...] = ()
    max_ms: float | None = None

    @classmethod
    def of(cls, counts: Sequence[int] | None, max_ms: float | None) -> Histogram:
        """A histogram as the record stores it (NULL arrays: nothing timed)."""
        return cls(tuple(int(c) for c in counts or ()), None if max_ms is None else float(max_ms))

    def __add__(self, other: Histogram) -> Histogram:
        longer, shorter = sorted((self.counts, other.counts), key=len, reverse=True)
        counts = tuple(c + (shorter[i] if i < len(shorter) else 0) for i, c in enumerate(longer))
        maxes = [m for m in (self.max_ms, other.max_ms) if m is not None]
        return Histogram(counts, max(maxes) if maxes else None)

    @property
    def count(self) -> int:
        return sum(self.counts)

    def percentile(self, share: float) -> float | None:
        """The time below which ``share`` (0-1) of the attempts fall: the middle of its
        bucket, never above the exact maximum."""
        total = self.count
        if total == 0:
            return None
        rank = max(1, math.ceil(share * total))
        seen = 0
        for bucket, n in enumerate(self.counts):
            seen += n
            if seen >= rank:
                return _middle(bucket, self.max_ms)
        return self.max_ms

    def latency(self) -> Latency:
        return Latency(self.count, self.percentile(0.5), self.percentile(0.95), self.max_ms)


def _middle(bucket: int, max_ms: float | None) -> float:
    low, high = bucket_bounds(bucket)
    middle = low / 2 if bucket == 0 else (math.sqrt(low * high) if math.isfinite(high) else low)
    return min(middle, max_ms) if max_ms is not None else middle
