"""Interop tier (``tests/interop``): skconsole's read models over what .NET wrote.

.NET stores its errors as ``QueuedTaskError`` JSON and its metrics as absolute
values per process, minima and maxima starting at long.MaxValue / MinValue:
the failure groups, the job detail and the metrics view must read both as
what they mean.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from skconsole import read
from skconsole.db.connect import Database
from tests.interop.conftest import cli_json
from tests.interop.dotnet_app import (
    LONG_MAX,
    LONG_MIN,
    DequeuedTask,
    DotNetApp,
    NetException,
)
from tests.interop.tasks_interop import ASSEMBLY, CHARGE_CARD

pytestmark = pytest.mark.interop

PARAMETERS = ("cardId", "amount", "currency")
STACK_TRACE = (
    "   at Billing.Tasks.ChargeCardExecutor.ExecuteAsync(ChargeCard payload,"
    " ITaskExecutionContext context) in /src/Billing/Tasks/ChargeCardExecutor.cs:line 31\n"
    "   at LVD.Stakhanovise.NET.Processor.StandardTaskWorker.ExecuteTaskAsync("
    "IQueuedTaskToken queuedTaskToken)"
)


def failing_charge(task: DequeuedTask) -> None:
    """Fails as the payload says: an ArgumentException (not recoverable: 6 Fatal) naming
    a parameter and a value, or a TimeoutException (recoverable: 4 Error)."""
    f = task.payload.fields
    if f["Kind"] == "argument":
        raise NetException(
            "System.ArgumentException",
            f"Value {f['N']} is out of range. (Parameter '{f['Param']}')",
            recoverable=False,
            stack_trace=STACK_TRACE,
        )
    raise NetException(
        "System.TimeoutException",
        f"The operation has timed out after {f['N']} ms.",
        stack_trace=STACK_TRACE,
    )


def run_all(app: DotNetApp) -> None:
    while app.run_one() is not None:
        pass


def test_dotnet_errors_group_by_exception_type_and_message(
    net_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    """37 jobs fail with System.ArgumentException (messages differing by parameter name
    and number) and 10 with System.TimeoutException: `status failures --json` shows
    two groups of 37 and 10, each named by its exception type (today: one group of 47,
    signed "{<str>:<str>,<str>:<str>,<str>:<str>}")."""
    app = net_apps(net_db, executors={CHARGE_CARD: failing_charge}, retry_delay=lambda n: 3600)
    for n in range(37):
        app.post(CHARGE_CARD, ASSEMBLY, {"Kind": "argument", "N": n, "Param": PARAMETERS[n % 3]})
    for n in range(10):
        app.post(CHARGE_CARD, ASSEMBLY, {"Kind": "timeout", "N": 1000 + n})
    run_all(app)

    groups = cli_json(net_db, "status", "failures", "--json")["groups"]

    by_count = {g["count"]: g["signature"] for g in groups}
    assert sorted(by_count) == [10, 37], groups
    assert "System.ArgumentException" in by_count[37]
    assert "System.TimeoutException" in by_count[10]


def values(doc: Any, skip: tuple[str, ...]) -> Iterator[Any]:
    """Every leaf value of a JSON-like document, except under the keys ``skip``."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key not in skip:
                yield from values(value, skip)
    elif isinstance(doc, list | tuple):
        for value in doc:
            yield from values(value, skip)
    else:
        yield doc


def test_job_detail_shows_a_dotnet_errors_type_message_and_stack_trace(
    net_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    """The job detail (`read.job`) gives a .NET error's type, message and stack trace
    as fields of their own, not only inside the stored JSON (today: only the raw
    JSON in last_error)."""
    app = net_apps(net_db, executors={CHARGE_CARD: failing_charge})
    task_id = app.post(CHARGE_CARD, ASSEMBLY, {"Kind": "argument", "N": 7, "Param": "amount"})
    run_all(app)

    with Database(net_db).connect() as conn:
        detail = read.job(conn, task_id)
    assert detail is not None
    shown = set(values(detail.as_dict(), skip=("last_error", "payload")))

    assert "System.ArgumentException" in shown
    assert "Value 7 is out of range. (Parameter 'amount')" in shown
    assert STACK_TRACE in shown


def metric_values(doc: dict[str, Any]) -> dict[str, Any]:
    """metric id -> value, over every category of `status metrics --json`."""
    return {m["metric_id"]: m["value"] for ms in doc["categories"].values() for m in ms}


def test_metrics_of_several_dotnet_processes_aggregate_by_kind(
    net_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    """Three .NET processes write their metrics (one never dequeued, so its minimum and
    maximum are still long.MaxValue / MinValue; no process ever wrote a result).
    `status metrics --json` sums the counters, takes the max of the maxima (12, not
    22) and the min of the minima, shows null for a metric every process still has
    at its start value, and does not fail (today: "bigint out of range")."""
    a, b, c = (net_apps(net_db, process_id=f"billing-{n}") for n in "abc")
    a.metrics.set("queue-consumer@dequeue-count", 5)
    a.metrics.set("queue-consumer@total-dequeue-duration", 40)
    a.metrics.set("queue-consumer@minimum-dequeue-duration", 3)
    a.metrics.set("queue-consumer@maximum-dequeue-duration", 12)
    b.metrics.set("queue-consumer@dequeue-count", 6)
    b.metrics.set("queue-consumer@total-dequeue-duration", 50)
    b.metrics.set("queue-consumer@minimum-dequeue-duration", 4)
    b.metrics.set("queue-consumer@maximum-dequeue-duration", 10)
    assert c.metrics.values["queue-consumer@minimum-dequeue-duration"] == LONG_MAX
    assert c.metrics.values["queue-consumer@maximum-dequeue-duration"] == LONG_MIN
    for app in (a, b, c):
        app.flush_metrics()

    got = metric_values(cli_json(net_db, "status", "metrics", "--json", "--sample", "0"))

    assert got["queue-consumer@dequeue-count"] == 11
    assert got["queue-consumer@total-dequeue-duration"] == 90
    assert got["queue-consumer@maximum-dequeue-duration"] == 12
    assert got["queue-consumer@minimum-dequeue-duration"] == 3
    assert got["result-queue@minimum-result-write-duration"] is None
    assert got["result-queue@maximum-result-write-duration"] is None
