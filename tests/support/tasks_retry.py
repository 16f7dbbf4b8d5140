"""Task handlers for the retry and producer tests, with small back-offs.

A worker subprocess loads them with ``--tasks tests.support.tasks_retry`` (its cwd is
the repository root). :class:`EngineThread` runs an engine in-process, on an
event loop of its own in a background thread, so a test can stay synchronous
and watch the database with ``wait_until``.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from dataclasses import replace
from typing import Any

from skconsole.core.errors import FatalTaskError
from skconsole.db.connect import Database
from skconsole.worker.engine import Engine, WorkerConfig
from skconsole.worker.registry import TaskOptions, TaskRegistry

# Quick retries by default: 3 attempts, 50 ms then 100 ms apart.
tasks = TaskRegistry(TaskOptions(max_attempts=3, backoff=0.05, max_backoff=0.2, timeout=10.0))

LONG_BACKOFF = 30.0


class UpstreamUnavailable(Exception):
    pass


@tasks.task("retry.ok")
async def succeed(payload: Any) -> None:
    """Succeeds at once."""


@tasks.task("retry.fails_then_waits", backoff=LONG_BACKOFF, max_backoff=LONG_BACKOFF)
async def fail_with_long_backoff(payload: Any) -> None:
    """Always fails recoverably; the first retry waits 30 s, so a test sees the job backing off."""
    raise UpstreamUnavailable(f"upstream unavailable for order {payload['n']}")


@tasks.task("retry.always_fails")
def always_fail(payload: Any) -> None:
    """Always fails recoverably (sync handler); 3 attempts a few tens of ms apart."""
    raise ValueError(f"cannot parse amount {payload!r}")


@tasks.task("retry.fatal")
async def fail_fatally(payload: Any) -> None:
    raise FatalTaskError("recipient address is invalid: will never succeed")


@tasks.task("retry.slow", timeout=0.2, backoff=LONG_BACKOFF, max_backoff=LONG_BACKOFF)
async def exceed_timeout(payload: Any) -> None:
    """Sleeps far past its 0.2 s timeout."""
    await asyncio.sleep(30)


# -- retry_on= / fatal_on= / a backoff= callable -------------------------------------------
class RecipientRejected(Exception):
    pass


class UpstreamTimedOut(UpstreamUnavailable):
    pass


@tasks.task("retry.fatal_on", fatal_on=RecipientRejected)
async def reject_recipient(payload: Any) -> None:
    raise RecipientRejected("mailbox does not exist")


@tasks.task("retry.not_in_retry_on", retry_on=(UpstreamUnavailable,))
async def fail_with_a_bug(payload: Any) -> None:
    raise KeyError("amount")


@tasks.task("retry.in_retry_on", retry_on=(UpstreamUnavailable,))
def time_out_upstream(payload: Any) -> None:
    """Fails with a subclass of a retry_on class: retried (sync handler)."""
    raise UpstreamTimedOut("upstream timed out")


#: what the backoff callable of retry.callable_backoff was called with
BACKOFF_CALLS: list[int] = []


def backoff_seconds(attempt: int) -> float:
    BACKOFF_CALLS.append(attempt)
    return 40.0 + attempt


@tasks.task("retry.callable_backoff", backoff=backoff_seconds, max_backoff=100.0)
async def fail_then_wait_a_chosen_time(payload: Any) -> None:
    raise UpstreamUnavailable("upstream unavailable")


def backoff_that_raises(attempt: int) -> float:
    return 1 / 0


@tasks.task("retry.backoff_raises", backoff=backoff_that_raises)
async def fail_under_a_broken_backoff(payload: Any) -> None:
    raise UpstreamUnavailable("upstream unavailable")


@tasks.task("retry.backoff_negative", backoff=lambda attempt: -1)
async def fail_under_a_negative_backoff(payload: Any) -> None:
    raise UpstreamUnavailable("upstream unavailable")


@tasks.task("retry.slow_fatal_on_timeout", timeout=0.2, fatal_on=(TimeoutError,))
async def exceed_a_fatal_timeout(payload: Any) -> None:
    await asyncio.sleep(30)


@tasks.task(
    "retry.slow_retry_on",
    timeout=0.2,
    retry_on=(UpstreamUnavailable,),
    backoff=LONG_BACKOFF,
    max_backoff=LONG_BACKOFF,
)
async def exceed_a_timeout_under_retry_on(payload: Any) -> None:
    await asyncio.sleep(30)


TEST_CONFIG = WorkerConfig(
    concurrency=4,
    batch_size=10,
    poll_interval=0.1,
    heartbeat_interval=0.5,
    reap=False,
    metrics_interval=3600.0,  # metrics are written when the engine stops
    grace_period=2.0,
)


class EngineThread:
    """An :class:`Engine` running in a background thread; use as a context manager."""

    def __init__(self, dsn: str | Database, registry: TaskRegistry = tasks, **config: Any) -> None:
        config.setdefault("process_id", f"test-worker-{uuid.uuid4().hex[:8]}")
        cfg = replace(TEST_CONFIG, **config)
        self.engine = Engine(Database(dsn) if isinstance(dsn, str) else dsn, registry, cfg)
        self.error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="engine-under-test", daemon=True)

    @property
    def process_id(self) -> str:
        return self.engine.config.process_id

    @property
    def metrics_owner(self) -> str:
        """The owner id of this engine's metric rows."""
        return self.engine.metrics_owner

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def _main(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._ready.set()
            await self.engine.run()

        try:
            asyncio.run(main())
        except BaseException as exc:  # reported by stop()
            self.error = exc
        finally:
            self._ready.set()

    def start(self) -> EngineThread:
        self._thread.start()
        assert self._ready.wait(10), "the engine's event loop did not start"
        return self

    def join(self, timeout: float = 30.0) -> None:
        """Wait for the engine to end by itself (burst mode)."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the engine did not stop by itself"
        if self.error is not None:
            raise self.error

    def stop(self, timeout: float = 30.0) -> None:
        if self._thread.is_alive() and self._loop is not None:
            self._loop.call_soon_threadsafe(self.engine.stop)
        self.join(timeout)

    def __enter__(self) -> EngineThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
