"""Middleware around every handler call (docs/howto/middleware.md): the first
registered is the outermost; it may time, enrich, answer for the handler, or fail
the attempt as a handler's exception does; the engine's timeout and cancellations
still apply. Run on the engine's executor, without a database."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Generator
from typing import Any

import pytest

from skconsole.core.errors import ConfigError
from skconsole.core.status import JobStatus
from skconsole.worker.jobs import Ending, Outcome
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from tests.support.attempts import a_run, run_attempt

Next = Callable[[], Any]
ANext = Callable[[], Awaitable[Any]]


def registry() -> TaskRegistry:
    return TaskRegistry(TaskOptions(max_attempts=3, timeout=5.0), tracing=False)


def run_job(tasks: TaskRegistry, task_type: str, payload: Any = None) -> Outcome:
    return asyncio.run(run_attempt(tasks, a_run(tasks, task_type, payload)))


def does_nothing(payload: Any) -> None:
    """A sync handler with nothing to do."""


async def does_nothing_async(payload: Any) -> None:
    """An async handler with nothing to do."""


def around_async(name: str, seen: list[str]) -> Callable[[Any, JobContext, ANext], Any]:
    """An async middleware that notes ``NAME in`` before the rest of the chain and
    ``NAME out`` after it."""

    async def middleware(payload: Any, ctx: JobContext, call_next: ANext) -> Any:
        seen.append(f"{name} in")
        result = await call_next()
        seen.append(f"{name} out")
        return result

    return middleware


# -- order ----------------------------------------------------------------------------------


def test_the_first_registered_middleware_is_the_outermost_around_a_sync_handler() -> None:
    tasks, seen = registry(), []

    @tasks.middleware
    def outer(payload: Any, ctx: JobContext, call_next: Next) -> Any:
        seen.append(("outer in", threading.current_thread().name))
        try:
            return call_next()
        finally:
            seen.append(("outer out", threading.current_thread().name))

    @tasks.middleware
    def inner(payload: Any, ctx: JobContext, call_next: Next) -> Any:
        seen.append(("inner in", threading.current_thread().name))
        return call_next()

    @tasks.task("t.sync")
    def handler(payload: Any) -> None:
        seen.append(("handler", threading.current_thread().name))

    assert run_job(tasks, "t.sync").ending is Ending.SUCCESS
    assert [what for what, _ in seen] == ["outer in", "inner in", "handler", "outer out"]
    assert {thread for _, thread in seen} == {"sk-task"}, "the chain runs on the handler's thread"


def test_async_middleware_awaits_the_async_handler_in_order() -> None:
    tasks, seen = registry(), []

    tasks.middleware(around_async("outer", seen))
    tasks.middleware(around_async("inner", seen))

    @tasks.task("t.async")
    async def handler(payload: Any) -> None:
        await asyncio.sleep(0)
        seen.append("handler")

    assert run_job(tasks, "t.async").ending is Ending.SUCCESS
    assert seen == ["outer in", "inner in", "handler", "inner out", "outer out"]


def test_a_generator_middleware_wraps_sync_and_async_handlers_alike() -> None:
    tasks, seen = registry(), []

    @tasks.middleware
    def around(payload: Any, ctx: JobContext) -> Generator[None, Any, None]:
        seen.append(f"{ctx.task_type} in")
        result = yield
        seen.append(f"{ctx.task_type} out: {result}")

    @tasks.task("t.sync")
    def sync_handler(payload: Any) -> str:
        return "sync result"

    @tasks.task("t.async")
    async def async_handler(payload: Any) -> str:
        return "async result"

    assert run_job(tasks, "t.sync").ending is Ending.SUCCESS
    assert run_job(tasks, "t.async").ending is Ending.SUCCESS
    assert seen == [
        "t.sync in",
        "t.sync out: sync result",
        "t.async in",
        "t.async out: async result",
    ]


# -- enrich, answer -------------------------------------------------------------------------


def test_a_middleware_enriches_the_context_the_handler_reads() -> None:
    tasks, seen = registry(), []

    @tasks.middleware
    def who(payload: Any, ctx: JobContext) -> Generator[None, Any, None]:
        ctx.state.user = payload["user"]
        yield

    @tasks.task("t.sync")
    def handler(payload: Any, ctx: JobContext) -> None:
        seen.append(ctx.state.user)

    run_job(tasks, "t.sync", {"user": "ada"})
    assert seen == ["ada"]


def test_a_middleware_answers_for_the_handler_without_calling_it() -> None:
    tasks, called = registry(), []

    @tasks.middleware
    def cached(payload: Any, ctx: JobContext, call_next: Next) -> Any:
        return {"cached": True}

    @tasks.task("t.sync", then="t.next")
    def handler(payload: Any) -> Any:
        called.append(payload)

    @tasks.task("t.next")
    def next_stage(payload: Any) -> None:
        pass

    outcome = run_job(tasks, "t.sync")
    assert outcome.ending is Ending.SUCCESS
    assert called == []
    assert outcome.stage is not None and outcome.stage.payload_json == '{"cached":true}'


def test_a_generator_middleware_answers_by_returning_before_its_yield() -> None:
    tasks, called = registry(), []

    @tasks.middleware
    def skip(payload: Any, ctx: JobContext) -> Generator[None, Any, Any]:
        if payload == "skip":
            return "skipped"
        yield

    @tasks.task("t.async", then="t.next")
    async def handler(payload: Any) -> str:
        called.append(payload)
        return "ran"

    @tasks.task("t.next")
    async def next_stage(payload: Any) -> None:
        pass

    skipped, ran = run_job(tasks, "t.async", "skip"), run_job(tasks, "t.async", "run")
    assert called == ["run"]
    assert skipped.stage is not None and skipped.stage.payload_json == '"skipped"'
    assert ran.stage is not None and ran.stage.payload_json == '"ran"'


# -- failures -------------------------------------------------------------------------------


def test_a_sync_middleware_that_raises_fails_the_attempt_with_its_error() -> None:
    tasks, called = registry(), []

    @tasks.middleware
    def refuse(payload: Any, ctx: JobContext, call_next: Next) -> Any:
        raise PermissionError("tenant 42 is suspended")

    @tasks.task("t.sync")
    def handler(payload: Any) -> None:
        called.append(payload)

    outcome = run_job(tasks, "t.sync")
    assert (outcome.ending, outcome.status, outcome.recoverable) == (
        Ending.FAILURE,
        JobStatus.ERROR,
        True,
    )
    assert outcome.error is not None
    assert outcome.error.headline == "PermissionError: tenant 42 is suspended"
    assert "in refuse" in (outcome.error.stack_trace or "")
    assert called == []


def test_an_async_middleware_that_raises_fails_the_attempt_with_its_error() -> None:
    tasks = registry()

    @tasks.middleware
    async def refuse(payload: Any, ctx: JobContext, call_next: ANext) -> Any:
        await call_next()
        raise LookupError("no audit sink")

    @tasks.task("t.async")
    async def handler(payload: Any) -> None:
        pass

    outcome = run_job(tasks, "t.async")
    assert outcome.ending is Ending.FAILURE and outcome.status is JobStatus.ERROR
    assert outcome.error is not None and outcome.error.headline == "LookupError: no audit sink"


def test_a_middleware_error_follows_the_types_retry_policy() -> None:
    tasks = registry()

    @tasks.middleware
    def refuse(payload: Any, ctx: JobContext) -> Generator[None, Any, None]:
        raise PermissionError("never allowed")
        yield

    @tasks.task("t.sync", fatal_on=PermissionError)
    def handler(payload: Any) -> None:
        pass

    outcome = run_job(tasks, "t.sync")
    assert outcome.status is JobStatus.FATAL


def test_a_generator_middleware_sees_the_handlers_exception_which_fails_the_attempt() -> None:
    tasks, seen = registry(), []

    @tasks.middleware
    def watch(payload: Any, ctx: JobContext) -> Generator[None, Any, None]:
        try:
            yield
        except ValueError as exc:
            seen.append(str(exc))
            raise

    @tasks.task("t.async")
    async def handler(payload: Any) -> None:
        raise ValueError("bad order")

    outcome = run_job(tasks, "t.async")
    assert seen == ["bad order"]
    assert outcome.error is not None and outcome.error.headline == "ValueError: bad order"


def test_a_generator_middleware_that_catches_the_handlers_exception_answers_instead() -> None:
    tasks = registry()

    @tasks.middleware
    def fallback(payload: Any, ctx: JobContext) -> Generator[None, Any, Any]:
        try:
            yield
        except ValueError:
            return "fallback"

    @tasks.task("t.sync", then="t.next")
    def handler(payload: Any) -> None:
        raise ValueError("bad order")

    @tasks.task("t.next")
    def next_stage(payload: Any) -> None:
        pass

    outcome = run_job(tasks, "t.sync")
    assert outcome.ending is Ending.SUCCESS
    assert outcome.stage is not None and outcome.stage.payload_json == '"fallback"'


def test_calling_call_next_twice_fails_the_attempt_and_runs_the_handler_once() -> None:
    tasks, called = registry(), []

    @tasks.middleware
    def twice(payload: Any, ctx: JobContext, call_next: Next) -> Any:
        call_next()
        return call_next()

    @tasks.task("t.sync")
    def handler(payload: Any) -> None:
        called.append(1)

    outcome = run_job(tasks, "t.sync")
    assert called == [1]
    assert outcome.error is not None
    assert outcome.error.headline.startswith("skconsole.worker.middleware.MiddlewareError:")
    assert "call_next() twice" in outcome.error.headline


def test_a_generator_middleware_that_yields_twice_fails_the_attempt() -> None:
    tasks = registry()

    @tasks.middleware
    def greedy(payload: Any, ctx: JobContext) -> Generator[None, Any, None]:
        yield
        yield

    @tasks.task("t.async")
    async def handler(payload: Any) -> None:
        pass

    outcome = run_job(tasks, "t.async")
    assert outcome.error is not None and "yielded more than once" in outcome.error.headline


# -- the engine's timeout and cancellations -------------------------------------------------


def test_the_timeout_still_applies_to_an_async_handler_inside_middleware() -> None:
    tasks, seen = registry(), []

    @tasks.middleware
    async def watch(payload: Any, ctx: JobContext, call_next: ANext) -> Any:
        try:
            return await call_next()
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    @tasks.task("t.async", timeout=0.2)
    async def handler(payload: Any) -> None:
        await asyncio.Event().wait()

    outcome = run_job(tasks, "t.async")
    assert outcome.error is not None and outcome.error.type == "TimeoutError"
    assert outcome.status is JobStatus.ERROR
    assert seen == ["cancelled"]


def test_the_timeout_still_applies_to_a_sync_handler_inside_middleware() -> None:
    tasks = registry()

    @tasks.middleware
    def around(payload: Any, ctx: JobContext, call_next: Next) -> Any:
        return call_next()

    @tasks.task("t.sync", timeout=0.2)
    def handler(payload: Any, ctx: JobContext) -> None:
        ctx.sleep(30)  # wakes with JobStopped once the timeout asks it to stop

    outcome = run_job(tasks, "t.sync")
    assert outcome.error is not None and outcome.error.type == "TimeoutError"


def test_a_shutdown_still_hands_the_job_back_through_middleware() -> None:
    tasks = registry()

    @tasks.middleware
    async def around(payload: Any, ctx: JobContext, call_next: ANext) -> Any:
        ctx.state.started.set()
        return await call_next()

    @tasks.task("t.async")
    async def handler(payload: Any) -> None:
        await asyncio.Event().wait()

    async def main() -> Outcome:
        run = a_run(tasks, "t.async")
        run.ctx.state.started = asyncio.Event()
        attempt = asyncio.create_task(run_attempt(tasks, run))
        run.task = attempt  # type: ignore[assignment]  # what the engine cancels
        await run.ctx.state.started.wait()
        run.stop("shutdown")
        return await attempt

    assert asyncio.run(main()).ending is Ending.HAND_BACK


# -- no cost without middleware -------------------------------------------------------------


def test_without_middleware_the_handler_is_called_with_nothing_made_around_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tasks = registry()
    tasks.register("t.sync", does_nothing)
    tasks.register("t.async", does_nothing_async)

    def no_chain(*args: Any) -> None:
        raise AssertionError("a Chain was made for a registry without middleware")

    monkeypatch.setattr("skconsole.worker.execution.Chain", no_chain)
    assert run_job(tasks, "t.sync").ending is Ending.SUCCESS
    assert run_job(tasks, "t.async").ending is Ending.SUCCESS


# -- registration ---------------------------------------------------------------------------


def test_a_sync_call_next_middleware_cannot_wrap_an_async_handler_either_way_round() -> None:
    def log_jobs(payload: Any, ctx: JobContext, call_next: Next) -> Any:
        return call_next()

    async def handler(payload: Any) -> None:
        pass

    first = registry()
    first.register("t.async", handler)
    with pytest.raises(ConfigError, match=r"log_jobs calls call_next\(\) synchronously.*generator"):
        first.middleware(log_jobs)

    second = registry()
    second.middleware(log_jobs)
    with pytest.raises(ConfigError, match=r"cannot wrap the async handler of 't\.async'"):
        second.register("t.async", handler)


def test_an_async_middleware_cannot_wrap_a_sync_handler() -> None:
    tasks = registry()

    @tasks.middleware
    async def audit(payload: Any, ctx: JobContext, call_next: ANext) -> Any:
        return await call_next()

    with pytest.raises(ConfigError, match="audit is async, so it cannot wrap the sync handler"):
        tasks.register("t.sync", lambda payload: None)


@pytest.mark.parametrize(
    "fn",
    [
        lambda payload, ctx: None,  # a call_next shape needs three parameters
        lambda payload: (yield),  # a generator takes (payload, ctx)
    ],
)
def test_a_middleware_of_the_wrong_shape_is_refused(fn: Any) -> None:
    with pytest.raises(ConfigError, match=r"must take \(payload, ctx"):
        registry().middleware(fn)


def test_an_async_generator_middleware_is_refused() -> None:
    async def around(payload: Any, ctx: JobContext) -> Any:
        yield

    with pytest.raises(ConfigError, match="async generator"):
        registry().middleware(around)


def test_a_subset_of_the_registry_keeps_its_middleware() -> None:
    tasks = registry()

    @tasks.middleware
    def around(payload: Any, ctx: JobContext, call_next: Next) -> Any:
        return call_next()

    tasks.register("t.a", lambda payload: None)
    tasks.register("t.b", lambda payload: None)
    assert [layer.fn for layer in tasks.subset(["t.a"]).middlewares] == [around]
