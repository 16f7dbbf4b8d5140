"""The W3C trace context a job is posted under, kept with it so that the span of
its run continues the trace of the code that posted it (docs/howto/tracing.md).

OpenTelemetry is never imported here: only an application that has imported it
already (``opentelemetry.trace`` in ``sys.modules``) can have a span to continue,
so without it a post pays one dictionary lookup. The context is stored as the
JSON text of the W3C carrier, ``{"traceparent": ..., "tracestate": ...}``, in
``sk_task_results_t.sk_trace_context`` (sql/schema/132_skconsole_trace.sql):
a column of skconsole's own, which Stakhanovise.NET's SQL neither reads nor
needs to write.
"""

from __future__ import annotations

import json
import sys
from typing import Any

#: the module whose presence says the application uses OpenTelemetry
OTEL_TRACE = "opentelemetry.trace"


def current_trace() -> str | None:
    """The W3C trace context of the span active here, as stored with a job; None
    when OpenTelemetry is not imported or no valid span context is active."""
    trace = sys.modules.get(OTEL_TRACE)
    if trace is None:
        return None
    return _capture(trace)


def _capture(trace: Any) -> str | None:
    try:
        if not trace.get_current_span().get_span_context().is_valid:
            return None
        from opentelemetry.trace.propagation.tracecontext import (
            TraceContextTextMapPropagator,
        )

        carrier: dict[str, str] = {}
        TraceContextTextMapPropagator().inject(carrier)
    except Exception:  # tracing is a courtesy: it never fails a post
        return None
    return json.dumps(carrier, separators=(",", ":")) if carrier else None


def carrier_of(stored: str | None) -> dict[str, str]:
    """The W3C carrier a stored trace context holds (empty when it holds none, or
    is not what :func:`current_trace` writes: the column is anyone's to write)."""
    if not stored:
        return {}
    try:
        found = json.loads(stored)
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, str)}
