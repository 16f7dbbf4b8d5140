"""How the console writes counts: an estimate is never shown as an exact-looking number."""

from __future__ import annotations

import pytest

from skconsole.tui.formatting import fmt_count, fmt_estimate


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0, "≈0"),
        (999, "≈999"),
        (1000, "≈1k"),
        (39_996, "≈40k"),
        (999_499, "≈999k"),
        (999_500, "≈1M"),
        (1_007_433, "≈1.01M"),
        (3_873_934, "≈3.87M"),
    ],
)
def test_an_estimate_has_three_significant_digits_and_says_so(value: int, shown: str) -> None:
    assert fmt_estimate(value) == shown


def test_a_count_is_exact_unless_estimated() -> None:
    assert fmt_count(3_873_934, False) == "3,873,934"
    assert fmt_count(3_873_934, True) == "≈3.87M"
