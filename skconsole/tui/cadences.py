"""The console's cadences, declared as data: what is read, how often, and what takes it.

Each :class:`Cadence` is one background read (a snapshot, the failure groups, the
trends, the queue health); :class:`Cadences` runs a table of them, one
:class:`~skconsole.tui.polling.PollLoop` each, so every read keeps the loop's rules: in
a worker thread (no database call on the UI thread), never two at once, nothing
repainted under an open dialog, a slower read following the refresh instead of
running beside it. The App declares its table and handlers; this runs them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from skconsole.tui.polling import PollHost, PollLoop
from skconsole.tui.source import DataSource

#: the refresh intervals + and - step through
INTERVALS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
MAX_BACKOFF_S = 10.0
TRENDS_EVERY_S = 20.0  # per-minute history: its own, slower cycle
#: failure groups: their own, slower cycle (right after a refresh once this has passed)
FAILURES_EVERY_S = 10.0
FAILURES_FRESH_S = 2.0  # entering their panel reads them again once they are this old
#: queue-table health: its own, slower cycle (activity and lock views, table sizes)
HEALTH_EVERY_S = 10.0
HEALTH_FRESH_S = 5.0  # entering its panel reads it again once it is this old
#: several queues: each queue's overview (what check reads), on a loop of its own, at
#: most this often (or the refresh interval, when slower)
OVERVIEW_EVERY_S = 5.0

H = TypeVar("H", bound=PollHost)  # the App: it runs the workers and takes the results


@dataclass(frozen=True)
class Cadence(Generic[H]):
    """One background read: its name (also its worker group), what it reads of the data
    source, every how many seconds, and the host's handlers for its result.

    ``done(host, value, elapsed_ms)`` and ``error(host, error)`` keep the books (they run
    first, on the UI thread); ``show(host, value)`` paints, once no dialog is open;
    ``retry(host, failures)`` is the wait after a failure (else ``every``); ``follows``
    names the cadence whose reads this one follows (it must come before it).
    """

    name: str
    read: Callable[[DataSource], Any]
    every: Callable[[H], float]
    show: Callable[[H, Any], None]
    done: Callable[[H, Any, float], None] | None = None
    error: Callable[[H, BaseException], None] | None = None
    retry: Callable[[H, int], float] | None = None
    follows: str | None = None


def following(
    leader: str,
    name: str,
    read: Callable[[DataSource], Any],
    every_s: float,
    show: Callable[[H, Any], None],
    *,
    done: Callable[[H, Any, float], None],
    error: Callable[[H, BaseException], None] | None = None,
) -> Cadence[H]:
    """A slower read on a fixed cycle of ``every_s`` seconds, made right after a read of
    ``leader`` once it is due."""
    return Cadence(name, read, lambda _host: every_s, show, done=done, error=error, follows=leader)


class Cadences(Generic[H]):
    """The loops of a table of cadences, by name, and what is done to all of them at once."""

    def __init__(
        self,
        host: H,
        source: DataSource,
        table: tuple[Cadence[H], ...],
        *,
        auto: bool,
        ready: Callable[[], bool],
    ) -> None:
        self.loops: dict[str, PollLoop[Any]] = {}
        for c in table:
            self.loops[c.name] = PollLoop(
                host,
                c.name,
                _bind_read(c, source),
                _bind(c.show, host),
                every=_bind_every(c.every, host),
                on_done=None if c.done is None else _bind_done(c.done, host),
                on_error=None if c.error is None else _bind(c.error, host),
                retry=None if c.retry is None else _bind_retry(c.retry, host),
                auto=auto,
                ready=ready,
                follows=None if c.follows is None else self.loops[c.follows],
            )

    def __getitem__(self, name: str) -> PollLoop[Any]:
        return self.loops[name]

    def __iter__(self) -> Iterator[PollLoop[Any]]:
        return iter(self.loops.values())

    def retire(self) -> None:
        """Done with them all (the console shows another queue): what they were reading
        lands nowhere."""
        for loop in self:
            loop.retire()

    def pause(self) -> None:
        for loop in self:
            loop.pause()

    def resume(self) -> None:
        for loop in self:
            loop.resume()

    def read_all_soon(self) -> None:
        """Every cadence reads now: the ones that follow right after their leader's read."""
        for loop in self:
            loop.request_soon()

    def flush(self) -> None:
        """A dialog closed: show what arrived while it was open."""
        for loop in self:
            loop.flush()

    def worker_failed(self, group: str, error: BaseException) -> None:
        """A read that raised past its own handling (its worker group is the loop's name)."""
        loop = self.loops.get(group)
        if loop is not None:
            loop.failed(error)


def _bind_read(c: Cadence[Any], source: DataSource) -> Callable[[], Any]:
    return lambda: c.read(source)


def _bind_every(f: Callable[[H], float], host: H) -> Callable[[], float]:
    return lambda: f(host)


def _bind(f: Callable[[H, Any], None], host: H) -> Callable[[Any], None]:
    return lambda value: f(host, value)


def _bind_done(f: Callable[[H, Any, float], None], host: H) -> Callable[[Any, float], None]:
    return lambda value, ms: f(host, value, ms)


def _bind_retry(f: Callable[[H, int], float], host: H) -> Callable[[int], float]:
    return lambda failures: f(host, failures)
