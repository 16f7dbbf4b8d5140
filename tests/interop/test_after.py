"""Interop tier: fan-in beside a Stakhanovise.NET application. A .NET consumer never
sees a job that waits for others (it has no queue row); a parent that .NET finishes
(its own SQL, no skconsole finish statement) releases the waiting job through a
skconsole worker's upkeep sweep, and .NET then runs it like any job."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from skconsole.core.status import JobStatus
from skconsole.producer import Job, Producer
from tests.interop.conftest import Workers, result_row, wait_for
from tests.interop.dotnet_app import PROCESSED, DotNetApp, dotnet_json
from tests.interop.tasks_interop import ASSEMBLY, CHARGE_CARD, SYNC_LEDGER

pytestmark = pytest.mark.interop


def test_a_dotnet_finish_releases_the_waiting_job_through_the_sweep(
    net_db: str, net_apps: Callable[..., DotNetApp], workers: Workers
) -> None:
    app = net_apps(net_db, executors={SYNC_LEDGER: lambda task: None})
    parent = app.post(SYNC_LEDGER, ASSEMBLY, {"LedgerId": 1, "Mode": "none"})
    payload = dotnet_json(SYNC_LEDGER, ASSEMBLY, {"LedgerId": 2, "Mode": "none"})
    with Producer(net_db) as p:
        (child,) = p.post_many([Job(SYNC_LEDGER, payload_json=payload, after=[parent])]).ids

    first = app.run_one()
    assert first is not None and first.task_id == parent
    assert result_row(net_db, parent)["task_status"] == PROCESSED
    assert app.run_one() is None, ".NET must not see a job that still waits"
    assert result_row(net_db, child)["task_status"] == JobStatus.UNPROCESSED

    # a skconsole worker that runs none of these types: only its sweep acts
    worker: Any = workers.start(net_db, "--types", CHARGE_CARD)
    wait_for(
        lambda: app.run_one() is not None or result_row(net_db, child)["task_status"] == PROCESSED,
        "the waiting job released by the sweep and run by .NET",
    )
    wait_for(lambda: result_row(net_db, child)["task_status"] == PROCESSED, ".NET ran it")
    assert [r.task_id for r in app.runs] == [parent, child]
    assert workers.stop(worker) == 0, workers.output(worker)
