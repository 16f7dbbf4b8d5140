"""The tracing middleware without a database: when a worker turns it on, how each
way an attempt ends reads on its span, and the trace context a post captures."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from skconsole.core.errors import Snooze
from skconsole.producer.trace_context import current_trace
from skconsole.worker.jobs import Ending, JobRun, Outcome
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from skconsole.worker.tracing import trace_jobs
from tests.support.attempts import a_run, run_attempt

EXPORTER = InMemorySpanExporter()
PROVIDER = TracerProvider()
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))


@pytest.fixture(autouse=True)
def _no_spans_yet() -> Iterator[None]:
    EXPORTER.clear()
    yield
    EXPORTER.clear()


def traced(**options: Any) -> TaskRegistry:
    tasks = TaskRegistry(TaskOptions(max_attempts=3, **options), tracing=False)
    tasks.middleware(trace_jobs(tracer_provider=PROVIDER))
    return tasks


def the_span() -> ReadableSpan:
    (span,) = EXPORTER.get_finished_spans()
    return span


def outcome_of(span: ReadableSpan) -> Any:
    return (span.attributes or {})["skconsole.job.outcome"]


# -- when tracing is on ---------------------------------------------------------------------


def is_traced(tasks: TaskRegistry) -> list[bool]:
    return [layer.tracing for layer in tasks.worker_middleware()]


def test_tracing_turns_on_by_itself_once_the_application_set_a_tracer_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tasks = TaskRegistry()

    @tasks.middleware
    def mine(payload: Any, ctx: JobContext) -> Any:
        yield

    assert is_traced(tasks) == [False], "OpenTelemetry's default provider: off"
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: PROVIDER)
    assert is_traced(tasks) == [True, False], "outermost once a provider is set"


def test_tracing_false_keeps_it_off_and_true_turns_it_on_without_a_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: PROVIDER)
    assert is_traced(TaskRegistry(tracing=False)) == []
    monkeypatch.undo()
    assert is_traced(TaskRegistry(tracing=True)) == [True]


def test_tracing_registered_by_hand_stays_where_it_was_put(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: PROVIDER)
    tasks = TaskRegistry()

    @tasks.middleware
    def mine(payload: Any, ctx: JobContext) -> Any:
        yield

    tasks.middleware(trace_jobs())
    assert is_traced(tasks) == [False, True]


def test_tracing_must_be_none_true_or_false() -> None:
    with pytest.raises(Exception, match="tracing must be None, True or False"):
        TaskRegistry(tracing="yes")  # type: ignore[arg-type]


# -- how an attempt ends, on its span -------------------------------------------------------


def run_traced(tasks: TaskRegistry, task_type: str, ctx_trace: str | None = None) -> Outcome:
    run = a_run(tasks, task_type)
    if ctx_trace is not None:
        object.__setattr__(run.ctx, "trace_context", ctx_trace)
    return asyncio.run(run_attempt(tasks, run))


def test_an_async_timeout_reads_timed_out_on_the_span() -> None:
    tasks = traced(timeout=0.2)

    @tasks.task("t.slow")
    async def slow(payload: Any) -> None:
        await asyncio.Event().wait()

    assert run_traced(tasks, "t.slow").error is not None
    span = the_span()
    assert outcome_of(span) == "timed out"
    assert (span.attributes or {})["error.type"] == "TimeoutError"
    assert span.status.status_code is StatusCode.ERROR


def test_a_sync_handler_stopped_by_its_timeout_reads_timed_out_on_the_span() -> None:
    tasks = traced(timeout=0.2)

    @tasks.task("t.slow")
    def slow(payload: Any, ctx: JobContext) -> None:
        ctx.sleep(30)

    run_traced(tasks, "t.slow")
    assert outcome_of(the_span()) == "timed out"


def test_a_snooze_reads_snoozed_and_is_no_error() -> None:
    tasks = traced()

    @tasks.task("t.later")
    def later(payload: Any) -> None:
        raise Snooze(60)

    assert run_traced(tasks, "t.later").ending is Ending.HAND_BACK
    span = the_span()
    assert outcome_of(span) == "snoozed"
    assert span.status.status_code is StatusCode.UNSET


def test_a_shutdown_reads_handed_back() -> None:
    tasks = traced()

    @tasks.task("t.long")
    async def long(payload: Any, ctx: JobContext) -> None:
        ctx.state.started.set()
        await asyncio.Event().wait()

    async def main() -> Outcome:
        run: JobRun = a_run(tasks, "t.long")
        run.ctx.state.started = asyncio.Event()
        attempt = asyncio.create_task(run_attempt(tasks, run))
        run.task = attempt  # type: ignore[assignment]
        await run.ctx.state.started.wait()
        run.stop("shutdown")
        return await attempt

    assert asyncio.run(main()).ending is Ending.HAND_BACK
    assert outcome_of(the_span()) == "handed back"


def test_the_run_span_is_current_in_the_handler_and_a_child_of_the_stored_context() -> None:
    tasks, seen = traced(), []
    stored = json.dumps({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})

    @tasks.task("t.sync")
    def handler(payload: Any) -> None:
        seen.append(trace.get_current_span().get_span_context())

    run_traced(tasks, "t.sync", stored)
    span = the_span()
    assert seen == [span.get_span_context()]
    assert span.parent is not None
    assert (span.parent.trace_id, span.parent.span_id) == (
        0x0AF7651916CD43DD8448EB211C80319C,
        0xB7AD6B7169203331,
    )


def test_a_stored_context_that_is_no_trace_context_starts_a_new_trace() -> None:
    tasks = traced()

    @tasks.task("t.sync")
    def handler(payload: Any) -> None:
        pass

    assert run_traced(tasks, "t.sync", "not json").ending is Ending.SUCCESS
    assert the_span().parent is None


# -- what a post captures -------------------------------------------------------------------


def test_a_post_captures_the_current_span_and_nothing_outside_one() -> None:
    assert current_trace() is None
    with PROVIDER.get_tracer("t").start_as_current_span("request") as span:
        captured = current_trace()
    assert captured is not None
    context = span.get_span_context()
    assert json.loads(captured)["traceparent"].startswith(
        f"00-{context.trace_id:032x}-{context.span_id:016x}-"
    )
