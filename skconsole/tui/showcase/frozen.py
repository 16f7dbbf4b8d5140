"""The frozen clock every fixed scene is drawn from (03:12 one night), and the ids and
trends built from it, so each screen draws the same on every run."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

FROZEN_AT = datetime(2025, 3, 14, 3, 12, 0, tzinfo=UTC)


class FrozenClock:
    """A clock that moves only when told to."""

    def __init__(self, at: datetime = FROZEN_AT) -> None:
        self.now = at.timestamp()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def ago(seconds: float) -> datetime:
    """The instant ``seconds`` before the frozen clock's."""
    return FROZEN_AT - timedelta(seconds=seconds)


def fixed_wave(
    n: int, base: float, amp: float, period: float, phase: float = 0.0
) -> tuple[int, ...]:
    return tuple(max(int(base + amp * math.sin((i + phase) / period)), 0) for i in range(n))


def fixed_id(n: int) -> str:
    return f"{n:08x}-7c1e-4b9a-9f3d-{n * 7919:012x}"
