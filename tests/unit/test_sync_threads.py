"""The threads of sync handlers: kept for the next job, never shared by two at once."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from datetime import UTC, datetime

import pytest

from skconsole.worker.execution import HandlerRaised, Threads
from skconsole.worker.jobs import Claimed, JobRun
from skconsole.worker.registry import JobContext
from tests.support.waiting import wait_until


def a_run() -> JobRun:
    job = Claimed(uuid.uuid4(), "t", "s", None, 0, datetime.now(UTC), 1, 1, 0)
    ctx = JobContext(
        task_id=job.task_id,
        task_type="t",
        source="s",
        priority=0,
        attempt=1,
        error_count=0,
        posted_at=job.posted_at,
    )
    return JobRun(job, ctx, None)


def test_jobs_one_after_another_run_on_the_same_thread() -> None:
    async def main() -> set[int]:
        threads = Threads(on_exit=lambda: None)
        idents = {await threads.start(a_run(), threading.get_ident, ()) for _ in range(20)}
        threads.close()
        return idents

    assert len(asyncio.run(main())) == 1


def test_a_blocked_handler_keeps_its_thread_and_the_next_job_gets_another() -> None:
    release = threading.Event()

    async def main() -> tuple[int, int, int, int]:
        threads = Threads(on_exit=lambda: None)
        blocked = threads.start(a_run(), lambda: (release.wait(10), threading.get_ident())[1], ())
        other = await threads.start(a_run(), threading.get_ident, ())
        busy_while_blocked = threads.busy
        release.set()
        first = await blocked
        threads.close()
        return first, other, busy_while_blocked, threads.busy

    first, other, busy_while_blocked, busy_after = asyncio.run(main())
    assert first != other
    assert (busy_while_blocked, busy_after) == (1, 0)


def test_as_many_threads_serve_at_once_as_jobs_run_at_once() -> None:
    async def main() -> int:
        threads = Threads(on_exit=lambda: None)
        idents = await asyncio.gather(
            *(
                threads.start(a_run(), lambda: (time.sleep(0.05), threading.get_ident())[1], ())
                for _ in range(8)
            )
        )
        threads.close()
        return len(set(idents))

    assert asyncio.run(main()) == 8


def test_any_exception_of_a_handler_reaches_the_awaiting_task_wrapped() -> None:
    def exits() -> None:
        raise SystemExit(3)

    async def main() -> None:
        threads = Threads(on_exit=lambda: None)
        try:
            await threads.start(a_run(), exits, ())
        finally:
            threads.close()

    with pytest.raises(HandlerRaised) as raised:
        asyncio.run(main())
    assert isinstance(raised.value.original, SystemExit)


def test_closing_ends_the_idle_threads() -> None:
    async def main() -> None:
        threads = Threads(on_exit=lambda: None)
        await asyncio.gather(*(threads.start(a_run(), time.sleep, (0.02,)) for _ in range(4)))
        threads.close()

    before = {t.ident for t in threading.enumerate() if t.name == "sk-task"}
    asyncio.run(main())

    def left() -> set[int | None]:
        return {t.ident for t in threading.enumerate() if t.name == "sk-task"} - before

    wait_until(lambda: not left(), 5, lambda: f"threads left: {left()}", interval=0.01)
