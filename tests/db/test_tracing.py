"""OpenTelemetry across jobs (docs/howto/tracing.md): a post made inside a span stores
its W3C trace context with the job; the worker's tracing middleware runs each attempt
as a span ``skconsole run TYPE`` (CONSUMER) under it; and what a job posts (its
pipeline's next stage, ctx.post children, fan-in children) is posted under the run's
span, so a request and every job it leads to are one trace. Spans are read back from
the SDK's in-memory exporter; no global tracer provider is set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from skconsole.db.connect import Database
from skconsole.producer import AsyncProducer, Job, Producer
from skconsole.testing import run_until_idle
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from skconsole.worker.tracing import trace_jobs
from tests.conftest import ROOT

Conn = psycopg.Connection[Any]

EXPORTER = InMemorySpanExporter()
PROVIDER = TracerProvider()
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))
tracer = PROVIDER.get_tracer("tests.request")

tasks = TaskRegistry(TaskOptions(max_attempts=1, timeout=30.0), tracing=False)
tasks.middleware(trace_jobs(tracer_provider=PROVIDER))


@tasks.task("tr.validate", then="tr.charge")
def validate(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "valid": True}


@tasks.task("tr.charge", then="tr.ship")
async def charge(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "charged": True}


@tasks.task("tr.ship")
def ship(payload: dict[str, Any]) -> None:
    pass


@tasks.task("tr.parent")
def parent(payload: Any, ctx: JobContext) -> None:
    ctx.post("tr.leaf", {"from": "parent"})


@tasks.task("tr.split")
async def split(payload: Any, ctx: JobContext) -> None:
    parts = [ctx.post("tr.leaf", {"part": n}) for n in range(2)]
    ctx.post("tr.join", {"joined": True}, after=parts)


@tasks.task("tr.leaf")
def leaf(payload: Any) -> None:
    pass


@tasks.task("tr.join")
async def join(payload: Any) -> None:
    pass


@tasks.task("tr.fails")
def fails(payload: Any) -> None:
    raise ValueError("card declined")


@pytest.fixture(autouse=True)
def _no_spans_yet() -> Iterator[None]:
    EXPORTER.clear()
    yield
    EXPORTER.clear()


def runs(task_type: str) -> list[ReadableSpan]:
    """The run spans of ``task_type``'s jobs."""
    return [s for s in EXPORTER.get_finished_spans() if s.name == f"skconsole run {task_type}"]


def one_run(task_type: str) -> ReadableSpan:
    (span,) = runs(task_type)
    return span


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan | trace.Span) -> int:
    context = span.get_span_context()
    assert context is not None
    return context.span_id


def trace_id(span: ReadableSpan | trace.Span) -> int:
    context = span.get_span_context()
    assert context is not None
    return context.trace_id


def run_all(db: Database) -> None:
    report = run_until_idle(db, tasks)
    assert not report.pending, report


def stored_contexts(conn: Conn, ids: list[uuid.UUID]) -> list[str | None]:
    rows = conn.execute(
        "SELECT task_id, sk_trace_context FROM sk_task_results_t WHERE task_id = ANY(%s)", (ids,)
    ).fetchall()
    by_id = dict(rows)
    return [by_id[i] for i in ids]


def test_a_pipeline_posted_in_a_request_is_one_trace(db: Database) -> None:
    with Producer(db) as producer, tracer.start_as_current_span("POST /orders") as request:
        producer.post("tr.validate", {"order": 7})
    run_all(db)

    first, second, third = one_run("tr.validate"), one_run("tr.charge"), one_run("tr.ship")
    assert {trace_id(s) for s in (first, second, third)} == {trace_id(request)}
    assert parent_id(first) == span_id(request)
    assert parent_id(second) == span_id(first)
    assert parent_id(third) == span_id(second)
    assert {s.kind for s in (first, second, third)} == {SpanKind.CONSUMER}


def test_a_run_span_says_which_job_ran_and_how_it_ended(db: Database) -> None:
    with Producer(db) as producer, tracer.start_as_current_span("request"):
        job_id = producer.post("tr.ship", {"order": 1})
    run_all(db)

    attributes = one_run("tr.ship").attributes or {}
    assert attributes["skconsole.job.id"] == str(job_id)
    assert attributes["skconsole.job.type"] == "tr.ship"
    assert attributes["skconsole.job.attempt"] == 1
    assert attributes["skconsole.job.outcome"] == "succeeded"


def test_a_failed_run_records_its_exception_on_the_span(db: Database) -> None:
    with Producer(db) as producer:
        producer.post("tr.fails", None)
    run_all(db)

    span = one_run("tr.fails")
    attributes = span.attributes or {}
    assert attributes["skconsole.job.outcome"] == "failed"
    assert attributes["error.type"] == "ValueError"
    assert attributes["skconsole.job.error"] == "ValueError: card declined"
    assert span.status.status_code is StatusCode.ERROR
    assert [e.name for e in span.events] == ["exception"]


def test_a_job_posted_outside_a_trace_starts_one(db: Database) -> None:
    with Producer(db) as producer:
        producer.post("tr.validate", {"order": 2})
    run_all(db)

    first, second = one_run("tr.validate"), one_run("tr.charge")
    assert first.parent is None
    assert parent_id(second) == span_id(first) and trace_id(second) == trace_id(first)


def test_a_ctx_post_child_runs_under_its_parents_run_span(db: Database) -> None:
    with Producer(db) as producer, tracer.start_as_current_span("request") as request:
        producer.post("tr.parent", None)
    run_all(db)

    posted_by, child = one_run("tr.parent"), one_run("tr.leaf")
    assert parent_id(child) == span_id(posted_by)
    assert trace_id(child) == trace_id(request)


def test_a_fan_in_child_a_handler_posts_continues_its_trace(db: Database) -> None:
    with Producer(db) as producer, tracer.start_as_current_span("request") as request:
        producer.post("tr.split", None)
    run_all(db)

    split_run, join_run = one_run("tr.split"), one_run("tr.join")
    assert [parent_id(s) for s in runs("tr.leaf")] == [span_id(split_run)] * 2
    assert parent_id(join_run) == span_id(split_run)
    assert trace_id(join_run) == trace_id(request)


def test_a_fan_in_job_a_producer_posts_runs_under_the_posting_span(db: Database) -> None:
    parts = [Job("tr.leaf", {"part": n}) for n in range(2)]
    joined = Job("tr.join", None, after=[p.task_id for p in parts])
    with Producer(db) as producer, tracer.start_as_current_span("request") as request:
        producer.post_many([*parts, joined])
    run_all(db)

    assert parent_id(one_run("tr.join")) == span_id(request)
    assert {trace_id(s) for s in runs("tr.leaf")} == {trace_id(request)}


#: each way a post is written (producer/plan.py), given a job to wait for
WAYS: dict[str, Callable[[uuid.UUID], list[Job]]] = {
    "one job": lambda _: [Job("tr.leaf", 1)],
    "keyed": lambda _: [Job("tr.leaf", 1, key=f"k-{uuid.uuid4()}")],
    "copy": lambda _: [Job("tr.leaf", n) for n in range(250)],
    "after": lambda parent: [Job("tr.leaf", 1, after=[parent])],
}


@pytest.mark.parametrize("way", list(WAYS))
def test_every_way_of_posting_stores_the_posting_span(db: Database, conn: Conn, way: str) -> None:
    with Producer(db) as producer, tracer.start_as_current_span("request") as request:
        parent = producer.post("tr.leaf", 0)
        ids = producer.post_many(WAYS[way](parent)).ids

    context = request.get_span_context()
    expected = f"00-{context.trace_id:032x}-{context.span_id:016x}"
    stored = stored_contexts(conn, [parent, *ids])
    assert None not in stored
    assert {json.loads(s)["traceparent"][:-3] for s in stored if s is not None} == {expected}


async def test_an_async_producer_stores_the_posting_span(db: Database, conn: Conn) -> None:
    async with AsyncProducer(db) as producer:
        with tracer.start_as_current_span("request") as request:
            ids = [
                await producer.post("tr.leaf", 1),
                *(await producer.post_many([Job("tr.leaf", n) for n in range(250)])).ids,
            ]

    stored = {json.loads(s)["traceparent"].split("-")[1] for s in stored_contexts(conn, ids)}
    assert stored == {f"{trace_id(request):032x}"}


def test_a_post_outside_any_span_stores_no_trace_context(db: Database, conn: Conn) -> None:
    with Producer(db) as producer:
        ids = [
            producer.post("tr.leaf", 1),
            *producer.post_many([Job("tr.leaf", n) for n in range(250)]).ids,
        ]
    assert set(stored_contexts(conn, ids)) == {None}


SCRIPT = """
import sys
from skconsole import Job, JobContext, Producer, TaskRegistry
from skconsole.testing import run_until_idle

tasks = TaskRegistry()

@tasks.task("plain.first", then="plain.second")
def first(payload, ctx: JobContext):
    ctx.post("plain.child", 1)
    return payload

@tasks.task("plain.second")
def second(payload):
    pass

@tasks.task("plain.child")
async def child(payload):
    pass

with Producer(sys.argv[1]) as producer:
    producer.post("plain.first", 1)
    producer.post_many([Job("plain.child", n) for n in range(250)])
report = run_until_idle(sys.argv[1], tasks)
assert not report.pending, report
print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
"""


def test_without_opentelemetry_imported_nothing_imports_it_or_is_stored(
    dsn: str, conn: Conn
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, dsn],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    counts = conn.execute(
        "SELECT count(*), count(sk_trace_context) FROM sk_task_results_t"
    ).fetchone()
    assert counts == (253, 0)
