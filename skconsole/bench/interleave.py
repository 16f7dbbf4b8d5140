"""Two ways of doing one thing, measured round by round on one server, and their ratio.

Noise on a shared machine moves both sides of a round alike, so each round's
ratio is the figure to read, not either rate alone; the two sides alternate
within every round rather than running as two blocks.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

#: one side: its label and what measures it once (a rate, higher is better)
Side = tuple[str, Callable[[], float]]


def arguments(doc: str | None, *, size: str, default: int) -> argparse.ArgumentParser:
    """``--dsn``, the work a side does per round (``size``: ``--posts``, ``--jobs``) and ``--rounds``."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--dsn", required=True)
    parser.add_argument(size, type=int, default=default)
    parser.add_argument("--rounds", type=int, default=3)
    return parser


def interleave(
    rounds: int, base: Side, other: Side, *, unit: str, reset: Callable[[], None] | None = None
) -> None:
    """Each round measures ``base`` then ``other`` (``reset`` before each) and prints
    both rates and ``other / base``."""
    for n in range(1, rounds + 1):
        rates = []
        for _label, measure in (base, other):
            if reset is not None:
                reset()
            rates.append(measure())
        print(
            f"round {n}: {base[0]} {rates[0]:,.0f}{unit}, {other[0]} {rates[1]:,.0f}{unit},"
            f" ratio {rates[1] / rates[0]:.2f}",
            flush=True,
        )
