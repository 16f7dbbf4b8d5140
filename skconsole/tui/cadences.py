"""The console's cadences, declared as data: what is read, how often, and what takes it.

Each :class:`Cadence` is one background read (a snapshot, the failure groups, the
trends, the queue health); :class:`Cadences` runs a table of them, one
:class:`~skconsole.tui.polling.PollLoop` each, so every read keeps the loop's rules: in
a worker thread (no database call on the UI thread), never two at once, nothing
repainted under an open dialog, a slower read following the refresh instead of
running beside it. The App declares its table and handlers; this runs them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

from skconsole.tui.action_runner import is_connection_error
from skconsole.tui.polling import Loops, PollHost, PollLoop
from skconsole.tui.reads import Read
from skconsole.tui.source import DataSource, NotKept

#: the refresh intervals + and - step through
INTERVALS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
MAX_BACKOFF_S = 10.0
TRENDS_EVERY_S = 20.0  # per-minute history: its own, slower cycle
#: failure groups: their own, slower cycle (right after a refresh once this has passed)
FAILURES_EVERY_S = 10.0
#: execution times and the flow window's finished jobs: minutes of history, read every few seconds
WINDOWS_EVERY_S = 5.0
FAILURES_FRESH_S = 2.0  # entering their panel reads them again once they are this old
#: queue-table health: its own, slower cycle (activity and lock views, table sizes)
HEALTH_EVERY_S = 10.0
HEALTH_FRESH_S = 5.0  # entering its panel reads it again once it is this old
#: several queues: each queue's overview (what check reads), on a loop of its own, at
#: most this often (or the refresh interval, when slower)
OVERVIEW_EVERY_S = 5.0


class CadenceHost(PollHost, Protocol):
    """What the cadences need of the App: a loop's host, and where an error is said."""

    def report_error(self, what: str, exc: BaseException) -> None: ...


H = TypeVar("H", bound=CadenceHost)  # the App: it runs the workers and takes the results


@dataclass(frozen=True)
class Cadence(Generic[H]):
    """One background read: its name (also its worker group), what it asks the data
    source (a :mod:`~skconsole.tui.reads` request), every how many seconds, and the host's handlers for its result.

    ``done(host, value, elapsed_ms)`` and ``error(host, error)`` keep the books (they run
    first, on the UI thread); ``show(host, value)`` paints, once no dialog is open;
    ``retry(host, failures)`` is the wait after a failure (else ``every``); ``follows``
    names the cadence whose reads this one follows (it must come before it), and
    ``failing`` (instead of ``error``) says in words what a failed read of it could not
    read: the host reports it once (a lost connection is for the cadence it follows to say).
    """

    name: str
    read: Read[Any]
    every: Callable[[H], float]
    show: Callable[[H, Any], None]
    done: Callable[[H, Any, float], None] | None = None
    error: Callable[[H, BaseException], None] | None = None
    retry: Callable[[H, int], float] | None = None
    follows: str | None = None
    failing: str | None = None


def following(
    leader: str,
    name: str,
    read: Read[Any],
    every_s: float,
    show: Callable[[H, Any], None],
    *,
    done: Callable[[H, Any, float], None],
    failing: str | None = None,
) -> Cadence[H]:
    """A slower read on a fixed cycle of ``every_s`` seconds, made right after a read of
    ``leader`` once it is due."""
    return Cadence(
        name, read, lambda _host: every_s, show, done=done, follows=leader, failing=failing
    )


class Cadences(Loops, Generic[H]):
    """The loops of a table of cadences, by name (what is done to all of them at once:
    :class:`~skconsole.tui.polling.Loops`)."""

    def __init__(
        self,
        host: H,
        source: DataSource,
        table: tuple[Cadence[H], ...],
        *,
        auto: bool,
    ) -> None:
        super().__init__({})
        for c in table:
            loop: PollLoop[Any] = PollLoop(
                host,
                c.name,
                partial(source.read, c.read),
                partial(c.show, host),
                every=partial(c.every, host),
                on_done=None if c.done is None else partial(c.done, host),
                on_error=None if c.error is None else partial(c.error, host),
                retry=None if c.retry is None else partial(c.retry, host),
                auto=auto,
                follows=None if c.follows is None else self.loops[c.follows],
            )
            if c.failing is not None:
                loop.on_error = partial(_said_once, host, loop, c.failing)
            self.loops[c.name] = loop


def _said_once(host: CadenceHost, loop: PollLoop[Any], what: str, error: BaseException) -> None:
    """A follower's failed read, reported once; a lost connection, never: the loop it
    follows says that (the status line shows it)."""
    if loop.failures == 1 and not is_connection_error(error) and not isinstance(error, NotKept):
        host.report_error(what, error)
