"""Figures of a series of timings, as every benchmark prints them."""

from __future__ import annotations

import statistics


def ms_stats(values: list[float]) -> dict[str, float]:
    """How many, the median, the 95th percentile and the most, in milliseconds (rounded
    to a tenth); empty for no values."""
    if not values:
        return {}
    s = sorted(values)
    return {
        "n": len(s),
        "median_ms": round(statistics.median(s), 1),
        "p95_ms": round(s[min(len(s) - 1, int(0.95 * len(s)))], 1),
        "max_ms": round(s[-1], 1),
    }
