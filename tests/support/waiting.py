"""Waiting for a condition: the one loop every tier of the tests uses.

A test waits for what it then checks, never for a fixed time. :func:`wait_until`
is the loop for plain code; :func:`until_async` is the same loop on an event
loop, where the wait between two checks is a step the caller gives (a Textual
pilot's pause lets the console run; the console tests' ``until`` is built on it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

#: what was awaited, for the failure: a text, or a callable called at the failure (to show
#: the state then)
Describe = str | Callable[[], object] | None


def _not_met(timeout: float, describe: Describe) -> AssertionError:
    said = describe() if callable(describe) else describe
    return AssertionError(
        f"condition not met within {timeout:g}s" + (f": {said}" if said is not None else "")
    )


def wait_until(
    predicate: Callable[[], object],
    timeout: float = 60.0,
    describe: Describe = None,
    interval: float = 0.1,
) -> float:
    """Until ``predicate()`` holds, checked every ``interval`` seconds for at most
    ``timeout``; returns the seconds it took. The failure says what was awaited
    (``describe``)."""
    started = time.monotonic()
    deadline = started + timeout
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic() - started
        time.sleep(interval)
    raise _not_met(timeout, describe)


async def until_async(
    predicate: Callable[[], object],
    step: Callable[[], Awaitable[object]] | None = None,
    timeout: float = 30.0,
    describe: Describe = None,
    interval: float = 0.05,
) -> float:
    """:func:`wait_until` on an event loop: between two checks it awaits ``step()``
    (by default ``asyncio.sleep(interval)``); returns the seconds it took."""
    started = time.monotonic()
    deadline = started + timeout
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic() - started
        await (step() if step is not None else asyncio.sleep(interval))
    raise _not_met(timeout, describe)
