"""Interop tier (``tests/interop``): a .NET application that renamed its objects with capitals.

Stakhanovise.NET pastes mapped names into its SQL unquoted, so PostgreSQL folds
``Billing_sk_tasks_queue_t`` to ``billing_sk_tasks_queue_t`` (and the channel
``Billing_Channel`` to ``billing_channel``). Given the same mapping file,
skconsole must find those objects, never create a second set beside them, and
notify on the channel the .NET listener really listens on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from tests.interop.conftest import cli_json, run_skconsole, statuses, wait_for
from tests.interop.dotnet_app import PROCESSED, DotNetApp, NetMapping, dotnet_json
from tests.interop.tasks_interop import ASSEMBLY, CHARGE_CARD

pytestmark = pytest.mark.interop

BILLING = NetMapping(
    queue_table="Billing_sk_tasks_queue_t",
    results_table="Billing_sk_task_results_t",
    execution_time_stats_table="Billing_sk_task_execution_time_stats_t",
    dequeue_function="Billing_sk_try_dequeue_task",
    metrics_table="Billing_sk_metrics_t",
    channel="Billing_Channel",
)
POSTED = 150


@pytest.fixture
def billing_db(fresh_database: str, tmp_path: Path) -> tuple[str, Path]:
    """(DSN, mapping file): a database the Billing application set up with its mapping
    (skconsole not yet), and its appsettings section as skconsole's --mapping file."""
    DotNetApp(fresh_database, mapping=BILLING).setup()
    mapping_file = tmp_path / "appsettings.json"
    mapping_file.write_text(json.dumps({"QueuedTaskMapping": BILLING.settings()}))
    return fresh_database, mapping_file


def queue_like_tables(dsn: str) -> list[str]:
    """Every table named like one of Stakhanovise's four, in any schema."""
    with psycopg.connect(dsn, autocommit=True) as c:
        rows = c.execute(
            "SELECT n.nspname || '.' || c.relname FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE c.relkind IN ('r', 'p') AND (c.relname ILIKE '%sk_tasks_queue_t'"
            " OR c.relname ILIKE '%sk_task_results_t' OR c.relname ILIKE '%sk_metrics_t'"
            " OR c.relname ILIKE '%sk_task_execution_time_stats_t') ORDER BY 1"
        ).fetchall()
    return [r[0] for r in rows]


def test_the_mapping_file_finds_the_folded_dotnet_tables_and_creates_no_second_set(
    billing_db: tuple[str, Path], net_apps: Callable[..., DotNetApp]
) -> None:
    """.NET posts 150 jobs into its Billing_* objects; `skconsole --mapping FILE status
    --json` shows them waiting, and no table named with capitals, nor any second set
    of queue tables, exists afterwards (today: a quoted "Billing_sk_tasks_queue_t"
    set is created beside the real one, and reads 0 jobs)."""
    dsn, mapping_file = billing_db
    app = net_apps(dsn, mapping=BILLING)
    for n in range(POSTED):
        app.post(CHARGE_CARD, ASSEMBLY, {"CardId": n})

    doc = cli_json(dsn, "--mapping", str(mapping_file), "status", "--json")

    depth = {t["task_type"]: t["ready"] for t in doc["depth"]["types"]}
    assert depth == {CHARGE_CARD: POSTED}
    assert doc["statuses"]["Unprocessed"] == POSTED
    assert queue_like_tables(dsn) == [
        "public.billing_sk_metrics_t",
        "public.billing_sk_task_execution_time_stats_t",
        "public.billing_sk_task_results_t",
        "public.billing_sk_tasks_queue_t",
    ]


def test_a_skconsole_post_wakes_the_dotnet_listener_on_the_folded_channel(
    billing_db: tuple[str, Path], net_apps: Callable[..., DotNetApp]
) -> None:
    """A .NET consumer that polls only once a minute (so only a notification can wake
    it in time) runs a job posted by `skconsole --mapping FILE enqueue`: the post went
    into .NET's tables and notified billing_channel, the channel .NET's unquoted
    LISTEN Billing_Channel listens on."""
    dsn, mapping_file = billing_db
    seen: list[int] = []
    app = net_apps(
        dsn,
        mapping=BILLING,
        executors={CHARGE_CARD: lambda task: seen.append(task.payload.fields["CardId"])},
        poll_interval=60,
    ).start()
    wait_for(lambda: app.polls >= 1, "the .NET consumer's first (empty) poll")

    posted = run_skconsole(
        dsn,
        "--mapping",
        str(mapping_file),
        "--setup",  # skconsole's objects are added beside .NET's by the first post
        "enqueue",
        CHARGE_CARD,
        "--payload",
        dotnet_json(CHARGE_CARD, ASSEMBLY, {"CardId": 42}),
    )
    assert posted.returncode == 0, posted.stderr

    wait_for(lambda: seen == [42] or app.crashed is not None, "the .NET consumer ran the job", 15)
    assert app.crashed is None, repr(app.crashed)
    assert app.metrics.values["listener@task-notification-count"] >= 1
    # the consumer writes the result after its executor returns: wait for that write
    wait_for(lambda: statuses(dsn, BILLING) == {PROCESSED: 1}, "the job's result written", 15)
