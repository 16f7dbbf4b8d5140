"""Interop tier: the trace context skconsole keeps with a job (132_skconsole_trace.sql)
is a column of its own on the results table, which Stakhanovise.NET's SQL neither
names nor minds: its post and its dequeue (``sk_try_dequeue_task``, then the
results ``UPDATE ... RETURNING *`` read by name) work as before, beside jobs
skconsole posted inside a trace."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from opentelemetry.sdk.trace import TracerProvider

from skconsole.producer import Job, Producer
from tests.interop.conftest import result_row, set_up_in_order
from tests.interop.dotnet_app import PROCESSED, DequeuedTask, DotNetApp, dotnet_json
from tests.interop.tasks_interop import ASSEMBLY, CHARGE_CARD

pytestmark = pytest.mark.interop


@pytest.mark.parametrize("first", ["dotnet", "skconsole"])
def test_dotnet_posts_and_dequeues_beside_jobs_posted_inside_a_trace(
    fresh_database: str, net_apps: Callable[..., DotNetApp], first: str
) -> None:
    """Whichever set itself up first: the .NET setup run after skconsole's leaves the
    trace column alone, and skconsole's after the .NET one adds it."""
    net_db = fresh_database
    ran: list[DequeuedTask] = []
    app = net_apps(net_db, executors={CHARGE_CARD: ran.append})
    set_up_in_order(app, first)
    payload = dotnet_json(CHARGE_CARD, ASSEMBLY, {"CardId": 1, "SleepMs": 0})
    with (
        Producer(net_db) as producer,
        TracerProvider().get_tracer("test").start_as_current_span("POST /charge") as span,
    ):
        traced = producer.post_many([Job(CHARGE_CARD, payload_json=payload)]).ids[0]
    by_net = app.post(CHARGE_CARD, ASSEMBLY, {"CardId": 2, "SleepMs": 0})

    first, second = app.run_one(), app.run_one()
    assert first is not None and second is not None, app.crashed
    assert {first.task_id, second.task_id} == {traced, by_net}
    assert sorted(t.payload.fields["CardId"] for t in ran) == [1, 2]
    traced_row, net_row = result_row(net_db, traced), result_row(net_db, by_net)
    assert traced_row["task_status"] == net_row["task_status"] == PROCESSED
    stored = json.loads(traced_row["sk_trace_context"])
    assert stored["traceparent"].split("-")[1] == f"{span.get_span_context().trace_id:032x}"
    assert net_row["sk_trace_context"] is None
