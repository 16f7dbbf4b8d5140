"""Interop tier: a per-key limit beside a Stakhanovise.NET application, in both set-up
orders. `limit --per` builds its key index on .NET's own queue table; .NET still posts
into it and dequeues from it, and skconsole's workers run .NET's jobs one per key
while another key's job runs beside them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from tests.interop.conftest import Workers, result_row, run_skconsole, set_up_in_order, wait_for
from tests.interop.dotnet_app import PROCESSED, DotNetApp
from tests.interop.tasks_interop import ASSEMBLY, CHARGE_CARD

pytestmark = pytest.mark.interop


def set_up(dsn: str, first: str, net_apps: Callable[..., DotNetApp]) -> DotNetApp:
    app = net_apps(dsn, executors={CHARGE_CARD: lambda task: None})
    set_up_in_order(app, first)
    return app


def attempts(dsn: str, task_ids: list[Any]) -> list[tuple[Any, Any]]:
    """Each job's recorded attempts: (started, ended), by start."""
    with psycopg.connect(dsn, autocommit=True) as c:
        return [
            (r[0], r[1])
            for r in c.execute(
                "SELECT started_at_ts, ended_at_ts FROM sk_attempts_t"
                " WHERE task_id = ANY(%s) ORDER BY started_at_ts",
                (task_ids,),
            ).fetchall()
        ]


@pytest.mark.parametrize("first", ["dotnet", "skconsole"])
def test_a_per_key_limit_runs_dotnet_jobs_one_per_key_and_dotnet_still_posts_and_dequeues(
    fresh_database: str, first: str, net_apps: Callable[..., DotNetApp], workers: Workers
) -> None:
    dsn = fresh_database
    app = set_up(dsn, first, net_apps)
    limited = run_skconsole(
        dsn, "limit", CHARGE_CARD, "--concurrency", "1", "--per", "payload.CustomerId", "--yes"
    )
    assert limited.returncode == 0, limited.stderr
    # .NET posts after the key index exists: its insert maintains it
    busy = [app.post(CHARGE_CARD, ASSEMBLY, {"CustomerId": "A", "SleepMs": 300}) for _ in range(3)]
    other = app.post(CHARGE_CARD, ASSEMBLY, {"CustomerId": "B", "SleepMs": 300})

    worker: Any = workers.start(dsn, "--concurrency", "4")
    wait_for(
        lambda: all(result_row(dsn, t)["task_status"] == PROCESSED for t in [*busy, other]),
        "skconsole ran the four .NET jobs",
        timeout=60,
    )
    worker.terminate()
    worker.wait(30)

    runs = attempts(dsn, busy)
    assert len(runs) == 3, "each of customer A's jobs ran once"
    assert all(runs[i][1] <= runs[i + 1][0] for i in range(2)), "customer A's runs overlapped"
    (b_run,) = attempts(dsn, [other])
    assert b_run[0] < runs[-1][0], "customer B's job waited for customer A's backlog"

    last = app.post(CHARGE_CARD, ASSEMBLY, {"CustomerId": "A"})
    done = app.run_one()
    assert done is not None and done.task_id == last, ".NET dequeues beside the key index"
