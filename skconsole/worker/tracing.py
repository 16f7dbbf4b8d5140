"""OpenTelemetry: each attempt is a span, ``skconsole run TYPE`` (kind CONSUMER),
child of the trace context the job was posted under (docs/howto/tracing.md).

The span is one middleware (worker/middleware.py), a generator, so the same code
wraps sync handlers (on their thread) and async ones (on the loop); the engine
knows nothing of it. While the handler runs the span is the current one, so
whatever the handler does is traced under it, and ``ctx.post`` children, and
the pipeline's next stage, are posted under it: their runs continue the trace.

This module imports OpenTelemetry: it is imported only when tracing is on
(``TaskRegistry.worker_middleware``), never by a worker whose application does
not trace.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Generator
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from skconsole.core.errors import Snooze
from skconsole.core.stored_error import StoredError
from skconsole.core.version import __version__
from skconsole.producer.trace_context import carrier_of
from skconsole.worker.middleware import TRACING_MARK

#: the instrumentation scope of skconsole's spans
TRACER_NAME = "skconsole"
#: how the attempt ended, as the middleware saw it (the stored outcome, a retry
#: or 5 Faulted say, is the type's policy's: the job's attempts show it)
OUTCOME = "skconsole.job.outcome"
_PROPAGATOR = TraceContextTextMapPropagator()


def trace_jobs(tracer_provider: trace.TracerProvider | None = None) -> Any:
    """The tracing middleware, with spans from ``tracer_provider`` (default: the
    global one). Workers put it outermost on their own when tracing is on
    (``TaskRegistry(tracing=...)``); register it yourself to place it elsewhere:
    ``tasks.middleware(trace_jobs())``."""
    tracer = trace.get_tracer(TRACER_NAME, __version__, tracer_provider=tracer_provider)

    def skconsole_tracing(payload: Any, ctx: Any) -> Generator[None, Any, None]:
        # an empty carrier gives an empty context: a job posted outside a trace starts one
        parent = _PROPAGATOR.extract(carrier_of(ctx.trace_context))
        span = tracer.start_span(
            f"skconsole run {ctx.task_type}",
            context=parent,
            kind=SpanKind.CONSUMER,
            attributes={
                "messaging.system": "skconsole",
                "messaging.operation.type": "process",
                "messaging.destination.name": ctx.task_type,
                "skconsole.job.id": str(ctx.task_id),
                "skconsole.job.type": ctx.task_type,
                "skconsole.job.attempt": ctx.attempt,
            },
            record_exception=False,
            set_status_on_exception=False,
        )
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        try:
            yield
        except BaseException as exc:
            _raised(span, ctx, exc)
            raise
        else:
            _returned(span, ctx)
        finally:
            otel_context.detach(token)
            span.end()

    setattr(skconsole_tracing, TRACING_MARK, True)
    return skconsole_tracing


def _returned(span: trace.Span, ctx: Any) -> None:
    if ctx.stop.cancelled:
        outcome = "cancelled"  # the engine records it 7 Cancelled, returned or not
    elif ctx.stop.reason == "timeout":
        outcome = "timed out"  # a sync handler that returned past its timeout
    else:
        outcome = "succeeded"
    _record(span, outcome, None)


def _raised(span: trace.Span, ctx: Any, exc: BaseException) -> None:
    """Name how the attempt ended; never raises (the handler's exception is the one kept)."""
    reason = ctx.stop.reason
    if ctx.stop.cancelled:
        outcome = "cancelled"
    elif reason in ("shutdown", "fence"):
        outcome = "handed back"
    elif reason == "timeout" or (
        isinstance(exc, asyncio.CancelledError) and _cancelled_by_the_engine()
    ):
        # an async handler's timeout cancels it with no stop reason: the only
        # cancellation the engine starts without one
        outcome = "timed out"
    elif isinstance(exc, Snooze):
        outcome = "snoozed"
    else:
        outcome = "failed"
    _record(span, outcome, exc)


def _record(span: trace.Span, outcome: str, exc: BaseException | None) -> None:
    """The outcome on the span, with the error of a timeout or a failure; never raises."""
    with contextlib.suppress(Exception):
        span.set_attribute(OUTCOME, outcome)
        if outcome == "timed out":
            _error(span, "TimeoutError", "the job exceeded its timeout")
        elif outcome == "failed" and exc is not None:
            error = StoredError.from_exception(exc)
            _error(span, error.type, error.headline)
            span.record_exception(exc)


def _error(span: trace.Span, kind: str, headline: str) -> None:
    span.set_attribute("error.type", kind)
    span.set_attribute("skconsole.job.error", headline)
    span.set_status(Status(StatusCode.ERROR, headline))


def _cancelled_by_the_engine() -> bool:
    try:
        task = asyncio.current_task()
    except RuntimeError:  # a sync handler's thread has no loop
        return False
    return task is not None and task.cancelling() > 0
