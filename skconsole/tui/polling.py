"""One cadence of background reads: the refresh loop, the failure groups, the trends, and
any to come.

A :class:`PollLoop` reads in a worker thread (``run_worker(thread=True,
exclusive=True, group=name)``, what ``@work`` does), so no database call runs
on the UI thread, and keeps these rules for every cadence:

- No overlapping reads: a read starts only when none is running, and the next
  one is scheduled only once the previous one has finished, however slow the
  server is. ``request()`` while a read runs is a no-op.
- After a failure the next read waits ``retry(failures)`` seconds (a back-off)
  when given, else the usual interval.
- Paused, it schedules nothing (a read already under way still lands, and
  ``request()`` still reads once: "refresh now").
- It never repaints under a modal dialog: a result that arrives while one is
  open is kept as ``pending`` and shown by ``flush()`` when the dialog closes.
- A slower loop may *follow* another (``follows``): once its interval has
  passed it is only ``due``, and it reads right after the loop it follows
  finished a read, in the gap before that one's next read, instead of at any
  moment (on a small machine a costly read that overlaps a refresh makes the
  refresh twice as slow). It is due from the start: its first read comes
  right after the first one of the loop it follows. ``request()`` still reads
  at once; ``request_soon()`` makes it due (and holds while paused).

The worker posts :class:`PollLoop.Done` or :class:`PollLoop.Failed` to the
host App, whose handlers hand them back to the loop (``finished``/``failed``):
one handler each serves every loop. A loop that is done with (the console
switched to another queue) is retired: nothing more is scheduled, and a
read still under way lands nowhere. :class:`Loops` is a set of loops the App
acts on at once (pause, resume, flush, retire): a table's cadences, every
queue's overview.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from textual.message import Message
from textual.screen import ModalScreen

T = TypeVar("T")


class _Timer(Protocol):
    def stop(self) -> None: ...


class PollHost(Protocol):
    """What a loop needs of the App (a Textual ``App`` has all of it)."""

    @property
    def screen(self) -> object: ...

    def post_message(self, message: Message) -> bool: ...

    def set_timer(self, delay: float, callback: Callable[[], Any]) -> _Timer: ...

    def run_worker(
        self,
        work: Callable[[], None],
        *,
        group: str,
        exclusive: bool,
        thread: bool,
        exit_on_error: bool,
    ) -> object: ...


def backoff(failures: int, interval: float, cap: float) -> float:
    """Seconds before retrying after ``failures`` failed reads in a row: 0.5 s doubling
    up to ``cap``, and never more than five intervals (one second at least)."""
    return min(0.5 * 2.0 ** (failures - 1), cap, max(interval, 1.0) * 5)


@dataclass(eq=False, repr=False)
class PollLoop(Generic[T]):
    """Reads ``read()`` every ``every()`` seconds and shows the result with ``show``.

    ``on_done(value, elapsed_ms)`` and ``on_error(error)`` run on the UI thread
    after each read, before the result is shown (bookkeeping: connection state,
    timings); ``auto`` False reads only on ``request()`` (fixed-data scenes).
    """

    class Done(Message):
        def __init__(self, loop: PollLoop[Any], value: object, elapsed_ms: float) -> None:
            super().__init__()
            self.loop = loop
            self.value = value
            self.elapsed_ms = elapsed_ms

    class Failed(Message):
        def __init__(self, loop: PollLoop[Any], error: BaseException) -> None:
            super().__init__()
            self.loop = loop
            self.error = error

    host: PollHost
    name: str  # also the worker group
    read: Callable[[], T]
    show: Callable[[T], None]
    _: KW_ONLY
    every: Callable[[], float]
    on_done: Callable[[T, float], None] | None = None
    on_error: Callable[[BaseException], None] | None = None
    retry: Callable[[int], float] | None = None
    auto: bool = True
    follows: PollLoop[Any] | None = None
    busy: bool = field(default=False, init=False)
    paused: bool = field(default=False, init=False)
    #: done with for good (retire)
    retired: bool = field(default=False, init=False)
    failures: int = field(default=0, init=False)  # failed reads in a row
    pending: T | None = field(default=None, init=False)
    _timer: _Timer | None = field(default=None, init=False)
    #: a follower reads after its leader's first read
    due: bool = field(default=False, init=False)
    _followers: list[PollLoop[Any]] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        if self.follows is not None:
            self.due = True
            self.follows._followers.append(self)

    # -- reading -------------------------------------------------------------------
    def request(self) -> None:
        """Read now unless a read is running; replaces the scheduled one."""
        if self.busy or self.retired:
            return
        self._cancel_timer()
        self.busy = True
        self.due = False
        self.host.run_worker(
            self._work, group=self.name, exclusive=True, thread=True, exit_on_error=False
        )

    def request_soon(self) -> None:
        """A follower: read right after the next read of the loop it follows; else now."""
        if self.follows is None:
            self.request()
        else:
            self.due = True

    def _leader_finished(self) -> None:
        if self.due:  # set by its timer, or asked for (which holds while paused too)
            self.request()

    def _work(self) -> None:
        """The worker thread: the read, and its result posted to the UI."""
        started = time.perf_counter()
        try:
            value = self.read()
        except Exception as exc:
            self.host.post_message(self.Failed(self, exc))
            return
        self.host.post_message(self.Done(self, value, (time.perf_counter() - started) * 1000.0))

    # -- results (UI thread) -------------------------------------------------------------
    def finished(self, value: T, elapsed_ms: float) -> None:
        if self.retired:  # read for what is no longer shown
            return
        self.busy = False
        self.failures = 0
        if self.on_done is not None:
            self.on_done(value, elapsed_ms)
        if self.held:
            self.pending = value  # don't repaint under an open dialog
        else:
            self.pending = None
            self.show(value)
        self._schedule(self.every())
        for follower in self._followers:  # the gap before this loop's next read
            follower._leader_finished()

    def failed(self, error: BaseException) -> None:
        if self.retired:
            return
        self.busy = False
        self.failures += 1
        if self.on_error is not None:
            self.on_error(error)
        retry = self.retry
        self._schedule(retry(self.failures) if retry is not None else self.every())

    @property
    def held(self) -> bool:
        """A modal dialog is open: results wait in ``pending``."""
        return isinstance(self.host.screen, ModalScreen)

    def flush(self) -> None:
        """Show what arrived while a dialog was open (once none is open)."""
        if self.held or self.pending is None:
            return
        value, self.pending = self.pending, None
        self.show(value)

    # -- cadence -------------------------------------------------------------------------
    def retire(self) -> None:
        """Done with for good: nothing is scheduled again, and a read under way is dropped
        when it lands (neither shown nor counted)."""
        self.retired = True
        self.pending = None
        self._cancel_timer()

    def pause(self) -> None:
        self.paused = True
        self._cancel_timer()

    def resume(self) -> None:
        self.paused = False
        self.request_soon()

    def reschedule(self) -> None:
        """The interval changed: wait the new one from now (unless a read is running)."""
        if not self.busy:
            self._schedule(self.every())

    def _schedule(self, delay: float) -> None:
        self._cancel_timer()
        if self.auto and not self.paused:
            self._timer = self.host.set_timer(delay, self.request_soon)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    @property
    def scheduled(self) -> bool:
        return self._timer is not None


class Loops:
    """Loops by name, and what the App does to all of them at once (pause, resume, show
    what a dialog held back, retire): a table's cadences, every queue's overview."""

    def __init__(self, loops: dict[str, PollLoop[Any]]) -> None:
        self.loops = loops

    def __getitem__(self, name: str) -> PollLoop[Any]:
        return self.loops[name]

    def __iter__(self) -> Iterator[PollLoop[Any]]:
        return iter(self.loops.values())

    def _each(self, act: Callable[[PollLoop[Any]], None]) -> None:
        for loop in self:
            act(loop)

    def request(self) -> None:
        """Every loop reads now (unless it is reading)."""
        self._each(PollLoop.request)

    def request_soon(self) -> None:
        """Every loop reads now: one that follows another, right after that one's read."""
        self._each(PollLoop.request_soon)

    def pause(self) -> None:
        self._each(PollLoop.pause)

    def resume(self) -> None:
        self._each(PollLoop.resume)

    def flush(self) -> None:
        """A dialog closed: show what arrived while it was open."""
        self._each(PollLoop.flush)

    def retire(self) -> None:
        """Done with them all (the console shows another queue): what they were reading
        lands nowhere."""
        self._each(PollLoop.retire)

    def worker_failed(self, group: str, error: BaseException) -> None:
        """A read that raised past its own handling ends as a failed read of its loop
        (the worker group is the loop's name)."""
        for loop in self:
            if loop.name == group:
                loop.failed(error)
