"""PollLoop's scheduling, on a fake host: no App, no threads, no database."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.message import Message
from textual.screen import ModalScreen

from skconsole.tui.polling import PollLoop, backoff


class FakeTimer:
    def __init__(self, delay: float, callback: Callable[[], Any]) -> None:
        self.delay = delay
        self.callback = callback
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


class FakeHost:
    """Runs nothing by itself: the test starts workers and fires timers."""

    def __init__(self) -> None:
        self.screen: object = object()
        self.workers: list[tuple[Callable[[], None], dict[str, Any]]] = []
        self.timers: list[FakeTimer] = []
        self.messages: list[Message] = []

    def post_message(self, message: Message) -> bool:
        self.messages.append(message)
        return True

    def set_timer(self, delay: float, callback: Callable[[], Any]) -> FakeTimer:
        timer = FakeTimer(delay, callback)
        self.timers.append(timer)
        return timer

    def run_worker(
        self,
        work: Callable[[], None],
        *,
        group: str,
        exclusive: bool,
        thread: bool,
        exit_on_error: bool,
    ) -> object:
        self.workers.append((work, {"group": group, "exclusive": exclusive, "thread": thread}))
        return None

    @property
    def live_timers(self) -> list[FakeTimer]:
        return [t for t in self.timers if not t.stopped]

    def run_next_worker(self) -> None:
        """The worker thread's part, then the UI's handling of what it posted."""
        work, _ = self.workers.pop(0)
        work()
        message = self.messages.pop()
        if isinstance(message, PollLoop.Done):
            message.loop.finished(message.value, message.elapsed_ms)
        else:
            assert isinstance(message, PollLoop.Failed)
            message.loop.failed(message.error)


class Reader:
    def __init__(self) -> None:
        self.calls = 0
        self.fail_with: BaseException | None = None

    def __call__(self) -> int:
        self.calls += 1
        if self.fail_with is not None:
            raise self.fail_with
        return self.calls


def make_loop(host: FakeHost, reader: Reader, shown: list[int], **kw: Any) -> PollLoop[int]:
    return PollLoop(host, "refresh", reader, shown.append, every=lambda: 2.0, **kw)


def test_reads_in_a_thread_worker_of_its_own_exclusive_group() -> None:
    host, shown = FakeHost(), []
    loop = make_loop(host, Reader(), shown)
    loop.request()
    assert host.workers[0][1] == {"group": "refresh", "exclusive": True, "thread": True}


def test_request_while_a_read_runs_starts_no_second_read() -> None:
    host, reader, shown = FakeHost(), Reader(), []
    loop = make_loop(host, reader, shown)
    loop.request()
    loop.request()
    loop.request()
    assert len(host.workers) == 1 and loop.busy


def test_next_read_is_scheduled_only_after_the_previous_finished() -> None:
    host, reader, shown = FakeHost(), Reader(), []
    loop = make_loop(host, reader, shown)
    loop.request()
    assert host.live_timers == []
    host.run_next_worker()
    assert shown == [1] and not loop.busy
    [timer] = host.live_timers
    assert timer.delay == 2.0
    timer.callback()
    host.run_next_worker()
    assert shown == [1, 2]


def test_a_request_replaces_the_scheduled_read() -> None:
    host, reader, shown = FakeHost(), Reader(), []
    loop = make_loop(host, reader, shown)
    loop.request()
    host.run_next_worker()
    first = host.live_timers[0]
    loop.request()
    assert first.stopped and len(host.workers) == 1


def test_failures_back_off_and_a_success_resets_the_count() -> None:
    host, reader, shown = FakeHost(), Reader(), []
    errors: list[BaseException] = []
    loop = make_loop(
        host,
        reader,
        shown,
        on_error=errors.append,
        retry=lambda n: backoff(n, 2.0, 10.0),
    )
    reader.fail_with = RuntimeError("down")
    delays = []
    for _ in range(6):
        loop.request()
        host.run_next_worker()
        delays.append(host.live_timers[-1].delay)
    assert delays == [0.5, 1.0, 2.0, 4.0, 8.0, 10.0]
    assert loop.failures == 6 and len(errors) == 6 and shown == []
    reader.fail_with = None
    loop.request()
    host.run_next_worker()
    assert loop.failures == 0 and host.live_timers[-1].delay == 2.0


def test_without_retry_a_failure_waits_the_usual_interval() -> None:
    host, reader, shown = FakeHost(), Reader(), []
    loop = make_loop(host, reader, shown)
    reader.fail_with = RuntimeError("down")
    loop.request()
    host.run_next_worker()
    assert host.live_timers[-1].delay == 2.0


@pytest.mark.parametrize(
    ("failures", "interval", "expected"),
    [(1, 2.0, 0.5), (3, 2.0, 2.0), (10, 2.0, 10.0), (10, 0.5, 5.0), (10, 1.0, 5.0)],
)
def test_backoff_doubles_up_to_the_cap_and_five_intervals(
    failures: int, interval: float, expected: float
) -> None:
    assert backoff(failures, interval, 10.0) == expected


def test_paused_loop_schedules_nothing_but_still_reads_on_request() -> None:
    host, reader, shown = FakeHost(), Reader(), []
    loop = make_loop(host, reader, shown)
    loop.request()
    host.run_next_worker()
    loop.pause()
    assert host.live_timers == []
    loop.request()  # "refresh now" while paused
    host.run_next_worker()
    assert shown == [1, 2] and host.live_timers == []
    loop.resume()
    assert len(host.workers) == 1


def test_result_under_a_modal_waits_until_flushed() -> None:
    host, reader, shown = FakeHost(), Reader(), []
    done: list[int] = []
    loop = make_loop(host, reader, shown, on_done=lambda v, _ms: done.append(v))
    host.screen = ModalScreen[None]()
    loop.request()
    host.run_next_worker()
    assert done == [1] and shown == [] and loop.pending == 1
    loop.flush()  # still under the dialog
    assert shown == []
    host.screen = object()
    loop.flush()
    assert shown == [1] and loop.pending is None
    loop.flush()
    assert shown == [1]


def test_auto_off_reads_only_on_request() -> None:
    host, reader, shown = FakeHost(), Reader(), []
    loop = make_loop(host, reader, shown, auto=False)
    loop.request()
    host.run_next_worker()
    assert shown == [1] and host.timers == []


def test_reschedule_waits_the_new_interval_unless_a_read_runs() -> None:
    host, reader, shown = FakeHost(), Reader(), []
    interval = [2.0]
    loop = PollLoop(host, "refresh", reader, shown.append, every=lambda: interval[0])
    loop.request()
    host.run_next_worker()
    interval[0] = 5.0
    loop.reschedule()
    assert [t.delay for t in host.live_timers] == [5.0]
    host.live_timers[0].callback()
    loop.reschedule()  # a read is running: the next one is scheduled when it finishes
    assert host.live_timers == []


def test_a_follower_reads_right_after_the_loop_it_follows() -> None:
    host = FakeHost()
    shown: list[int] = []
    slow: list[int] = []
    leader = make_loop(host, Reader(), shown)
    follower = PollLoop(host, "slow", Reader(), slow.append, every=lambda: 10.0, follows=leader)
    leader.request()
    assert len(host.workers) == 1  # not yet: it is due after the first snapshot
    host.run_next_worker()
    assert shown == [1] and follower.busy and not follower.due
    host.run_next_worker()
    assert slow == [1]
    follower_timer = next(t for t in host.live_timers if t.delay == 10.0)
    leader.request()
    host.run_next_worker()
    assert not follower.busy and len(host.workers) == 0  # not due: the leader reads alone
    follower_timer.callback()  # its interval passed: due, but it does not read now
    assert follower.due and not follower.busy
    leader.request()
    assert not follower.busy  # not while the leader reads
    host.run_next_worker()
    assert follower.busy  # right after it
    host.run_next_worker()
    assert slow == [1, 2]


def test_a_follower_asked_for_reads_after_the_next_leader_read_even_paused() -> None:
    host = FakeHost()
    shown: list[int] = []
    slow: list[int] = []
    leader = make_loop(host, Reader(), shown)
    follower = PollLoop(host, "slow", Reader(), slow.append, every=lambda: 10.0, follows=leader)
    follower.due = False
    for loop in (leader, follower):
        loop.pause()
    follower.request_soon()
    assert follower.due and not follower.busy
    leader.request()  # "refresh now" while paused
    host.run_next_worker()
    host.run_next_worker()
    assert shown == [1] and slow == [1] and host.live_timers == []
    follower.request()  # at once, whatever the leader does
    assert follower.busy


def test_a_failed_leader_read_leaves_a_due_follower_waiting() -> None:
    host, reader = FakeHost(), Reader()
    shown: list[int] = []
    slow: list[int] = []
    leader = make_loop(host, reader, shown)
    follower = PollLoop(host, "slow", Reader(), slow.append, every=lambda: 10.0, follows=leader)
    reader.fail_with = RuntimeError("down")
    leader.request()
    host.run_next_worker()
    assert follower.due and not follower.busy
    reader.fail_with = None
    leader.request()
    host.run_next_worker()
    assert follower.busy


def test_a_retired_loop_drops_the_read_under_way_and_schedules_nothing() -> None:
    host, reader, shown = FakeHost(), Reader(), []
    loop = make_loop(host, reader, shown)
    loop.request()
    loop.retire()
    host.run_next_worker()  # the read that was under way lands
    loop.request()
    assert shown == [] and host.live_timers == [] and host.workers == []
