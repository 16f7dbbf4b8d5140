"""Interop tier (``tests/interop``): setting the schema up beside Stakhanovise.NET.

A .NET application runs its setup at every start, so on a shared database the
two setups alternate for ever, in either order: both must succeed every time,
neither may replace the other's objects, and skconsole may add no index that
only repeats one of .NET's under another name.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from tests.conftest import select_only_role
from tests.interop.conftest import cli_json, skconsole_setup
from tests.interop.dotnet_app import DequeuedTask, DotNetApp, NetException
from tests.interop.tasks_interop import ASSEMBLY, CHARGE_CARD

pytestmark = pytest.mark.interop

STAKHANOVISE_TABLES = (
    "sk_tasks_queue_t",
    "sk_task_results_t",
    "sk_metrics_t",
    "sk_task_execution_time_stats_t",
)


def dequeue_function(dsn: str) -> tuple[Any, ...]:
    """(oid, source) of every function named sk_try_dequeue_task."""
    with psycopg.connect(dsn) as c:
        return tuple(
            c.execute(
                "SELECT oid, prosrc FROM pg_proc WHERE proname = 'sk_try_dequeue_task' ORDER BY oid"
            ).fetchall()
        )


def duplicate_indexes(dsn: str) -> list[tuple[str, list[str]]]:
    """Indexes of the Stakhanovise tables that cover the same columns (same keys,
    expressions and predicate) as another index of the same table."""
    with psycopg.connect(dsn) as c:
        rows = c.execute(
            "SELECT t.relname::text, array_agg(i.relname::text ORDER BY i.relname)"
            " FROM pg_index x"
            " JOIN pg_class i ON i.oid = x.indexrelid"
            " JOIN pg_class t ON t.oid = x.indrelid"
            " JOIN pg_namespace n ON n.oid = t.relnamespace"
            " WHERE n.nspname = 'public' AND t.relname = ANY(%s)"
            " GROUP BY t.relname, x.indkey::text,"
            " coalesce(pg_get_expr(x.indexprs, x.indrelid), ''),"
            " coalesce(pg_get_expr(x.indpred, x.indrelid), '')"
            " HAVING count(*) > 1 ORDER BY 1",
            (list(STAKHANOVISE_TABLES),),
        ).fetchall()
    return [(r[0], r[1]) for r in rows]


def charge(task: DequeuedTask) -> None:
    if task.payload.fields.get("Declined"):
        raise NetException("System.InvalidOperationException", "card declined", recoverable=False)


def post_and_consume(dsn: str) -> DotNetApp:
    """.NET posts three jobs and runs two of them (one fails Fatal)."""
    app = DotNetApp(dsn, executors={CHARGE_CARD: charge})
    app.post(CHARGE_CARD, ASSEMBLY, {"CardId": 1})
    app.post(CHARGE_CARD, ASSEMBLY, {"CardId": 2, "Declined": True})
    app.post(CHARGE_CARD, ASSEMBLY, {"CardId": 3})
    assert app.run_one() is not None and app.run_one() is not None
    return app


def test_dotnet_first_then_both_setups_run_again_and_the_queue_works(fresh_database: str) -> None:
    """.NET sets up, skconsole sets up, then each again: all succeed; .NET still posts
    and consumes, and skconsole reads what it did."""
    app = DotNetApp(fresh_database)
    app.setup()
    skconsole_setup(fresh_database)
    app.setup()
    skconsole_setup(fresh_database)

    post_and_consume(fresh_database)

    doc = cli_json(fresh_database, "status", "--json")
    assert doc["statuses"]["Processed"] == 1
    assert doc["statuses"]["Fatal"] == 1
    depth = {t["task_type"]: t for t in doc["depth"]["types"]}
    assert depth[CHARGE_CARD]["ready"] == 1


def test_skconsole_first_then_dotnet_setup_succeeds_and_both_run_again(
    fresh_database: str,
) -> None:
    """skconsole sets up first, then .NET (today: "multiple primary keys for table
    sk_tasks_queue_t"), then each again; skconsole's re-run leaves .NET's dequeue
    function as .NET's setup made it; the queue works."""
    skconsole_setup(fresh_database)
    app = DotNetApp(fresh_database)
    app.setup()
    dotnet_function = dequeue_function(fresh_database)

    skconsole_setup(fresh_database)
    assert dequeue_function(fresh_database) == dotnet_function
    app.setup()
    skconsole_setup(fresh_database)
    assert dequeue_function(fresh_database) == dotnet_function

    post_and_consume(fresh_database)
    doc = cli_json(fresh_database, "status", "--json")
    assert doc["statuses"]["Processed"] == 1 and doc["statuses"]["Fatal"] == 1


def test_skconsole_setup_never_replaces_the_dotnet_dequeue_function(fresh_database: str) -> None:
    """On a database .NET set up, skconsole's setup (first run and re-runs) leaves
    sk_try_dequeue_task as it is: same oid, same source."""
    DotNetApp(fresh_database).setup()
    dotnet_function = dequeue_function(fresh_database)
    assert len(dotnet_function) == 1

    skconsole_setup(fresh_database)
    assert dequeue_function(fresh_database) == dotnet_function, (
        "skconsole's setup replaced .NET's sk_try_dequeue_task"
    )
    skconsole_setup(fresh_database)
    assert dequeue_function(fresh_database) == dotnet_function


@pytest.mark.parametrize("first", ["dotnet", "skconsole"])
def test_no_index_duplicates_another_on_the_stakhanovise_tables(
    fresh_database: str, first: str
) -> None:
    """Whoever sets up first, once both have (twice), no two indexes of a Stakhanovise
    table cover the same columns under different names."""
    app = DotNetApp(fresh_database)
    steps = [app.setup, lambda: skconsole_setup(fresh_database)]
    if first == "skconsole":
        steps.reverse()
    for step in steps * 2:
        step()

    assert duplicate_indexes(fresh_database) == []


def test_a_select_only_role_reads_a_dotnet_database(net_only_db: str) -> None:
    """A database only .NET set up, read by a role that may only SELECT: `skconsole
    status --json` works (degraded) and shows the .NET jobs."""
    post_and_consume(net_only_db)
    with select_only_role(net_only_db, "sk_interop_ro") as reader:
        doc = cli_json(reader, "status", "--json")

    depth = {t["task_type"]: t for t in doc["depth"]["types"]}
    assert depth[CHARGE_CARD]["ready"] == 1
    assert doc["statuses"]["Processed"] == 1
    assert doc["statuses"]["Fatal"] == 1
    assert doc["workers"] == []
