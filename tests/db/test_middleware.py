"""Middleware on the real engine (docs/howto/middleware.md): what a middleware
raises is the attempt's stored error, as a handler's would be; what it answers in
the handler's place is the job's result, which a pipeline's next stage receives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.producer import Producer
from skconsole.testing import run_until_idle
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry

tasks = TaskRegistry(TaskOptions(max_attempts=1, timeout=30.0), tracing=False)


@tasks.middleware
def tenants(payload: Any, ctx: JobContext, call_next: Callable[[], Any]) -> Any:
    if payload.get("tenant") == "suspended":
        raise PermissionError("tenant is suspended")
    if "cached" in payload:
        return payload["cached"]
    return call_next()


@tasks.task("mw.price", then="mw.invoice")
def price(payload: dict[str, Any]) -> dict[str, Any]:
    return {"price": 10}


@tasks.task("mw.invoice")
def invoice(payload: dict[str, Any]) -> None:
    pass


def test_a_middlewares_exception_is_the_jobs_stored_error(db: Database) -> None:
    with Producer(db) as producer:
        job_id = producer.post("mw.price", {"tenant": "suspended"})
    report = run_until_idle(db, tasks)

    job = report.job(job_id)
    assert job.status is JobStatus.FAULTED
    assert job.error_summary == "PermissionError: tenant is suspended"
    assert "in tenants" in (job.error or "")
    assert report.by_type("mw.invoice") == []


def test_a_middlewares_answer_is_the_payload_of_the_next_stage(db: Database) -> None:
    with Producer(db) as producer:
        producer.post("mw.price", {"cached": {"price": 7}})
        producer.post("mw.price", {})
    report = run_until_idle(db, tasks)

    report.assert_all_succeeded()
    assert sorted(j.payload["price"] for j in report.by_type("mw.invoice")) == [7, 10]


def test_a_test_run_with_its_own_backoff_keeps_the_middleware_and_the_pipeline(
    db: Database,
) -> None:
    with Producer(db) as producer:
        producer.post("mw.price", {"cached": {"price": 7}})
    report = run_until_idle(db, tasks, backoff=0)

    assert [j.payload for j in report.by_type("mw.invoice")] == [{"price": 7}]
