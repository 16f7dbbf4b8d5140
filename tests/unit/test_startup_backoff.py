"""How long a starting worker waits between attempts to reach the server."""

from __future__ import annotations

import pytest

from skconsole.worker.startup import MAX_RETRY_S, retry_delay


def test_the_wait_starts_at_half_a_second_and_doubles() -> None:
    assert [retry_delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 4.0, 8.0]


def test_the_wait_never_exceeds_ten_seconds_however_many_attempts_failed() -> None:
    assert MAX_RETRY_S == 10.0
    assert [retry_delay(n) for n in (6, 7, 50, 10_000)] == [10.0] * 4


def test_attempts_are_numbered_from_one() -> None:
    with pytest.raises(ValueError):
        retry_delay(0)
