"""Starting a worker while the server cannot be reached: try again until it can.

A worker process usually starts beside its database (a deploy, a reboot, a
container orchestrator starting both at once), so a server that does not
answer yet is a reason to wait, not to fail: :func:`until_connected` tries
again with back-off (:func:`retry_delay`), one log line per attempt, until it
connects or the process is told to stop (SIGTERM, SIGINT), which ends the wait
at once, even in the middle of an attempt (:class:`StopSignals`). A server that
answers and refuses (a wrong password, a database or role that does not
exist, a bad DSN, a transaction pooler) is a mistake to fix, not to wait out:
it fails at once, as before (:func:`skconsole.db.connect.unreachable` tells
the two apart).
"""

from __future__ import annotations

import contextlib
import logging
import math
import signal
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, TypeVar

from skconsole.core.errors import ServerUnreachable

log = logging.getLogger("skconsole.worker")
T = TypeVar("T")

#: the first wait between two attempts to reach the server, doubled after each
FIRST_RETRY_S = 0.5
#: the longest wait: a server that comes back is used within this many seconds
MAX_RETRY_S = 10.0


def retry_delay(attempt: int) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1, 2, ...): 0.5 s,
    doubling, at most 10 s."""
    if attempt < 1:
        raise ValueError("attempts are numbered from 1")
    return min(MAX_RETRY_S, math.ldexp(FIRST_RETRY_S, min(attempt - 1, 32)))


class StopRequested(Exception):
    """SIGTERM or SIGINT came while the worker was still trying to reach the server."""


class StopSignals:
    """SIGTERM and SIGINT before the engine's own handlers take over (``run_engine``).

    While ``interrupting`` (waiting for the server), a signal raises
    :class:`StopRequested` wherever the main thread is, a connection attempt
    included. Afterwards it is only counted (``seen``), for the engine to honour
    once it runs: a stop that came between connecting and the engine's start is
    not lost.
    """

    def __init__(self) -> None:
        self.seen = 0
        self.interrupting = True
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.seen += 1
        if self.interrupting:
            self.interrupting = False  # once: the clean-up that follows is not interrupted
            raise StopRequested(signal.Signals(signum).name)

    @contextlib.contextmanager
    def installed(self) -> Iterator[StopSignals]:
        """Handle SIGTERM and SIGINT while the block runs; from its end, count them only.
        The handlers stay until the engine's event loop replaces them."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._previous.setdefault(sig, signal.getsignal(sig))
            signal.signal(sig, self._handle)
        try:
            yield self
        except BaseException:
            self.restore()
            raise
        finally:
            self.interrupting = False

    def restore(self) -> None:
        """Put back the handlers that were there before."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()


def until_connected(connect: Callable[[], T], *, sleep: Callable[[float], None] = time.sleep) -> T:
    """``connect()`` until it returns, waiting :func:`retry_delay` after each attempt
    that found the server unreachable (:class:`ServerUnreachable`), one log line
    each; any other error is raised at once. A stop request (:class:`StopRequested`,
    raised by :class:`StopSignals`) ends the wait."""
    attempt = 0
    while True:
        try:
            return connect()
        except ServerUnreachable as exc:
            attempt += 1
            delay = retry_delay(attempt)
            log.warning(
                "server unreachable (attempt %d): %s; retrying in %.1fs", attempt, exc, delay
            )
            sleep(delay)
