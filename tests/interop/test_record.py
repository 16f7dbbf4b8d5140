"""Interop tier (``tests/interop``): the per-minute record counts what a Stakhanovise.NET
application does beside skconsole (its writes pass the same triggers), and a database
with .NET's objects alone reads its history from the job rows, saying so."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest

from skconsole import read
from skconsole.db.connect import Database
from skconsole.read.record import FROM_ROWS_NOTE, RecordSource
from tests.interop.conftest import cli_json, skconsole_setup
from tests.interop.dotnet_app import DequeuedTask, DotNetApp, NetException
from tests.interop.tasks_interop import ASSEMBLY, CHARGE_CARD

pytestmark = pytest.mark.interop


def charge(task: DequeuedTask) -> None:
    """Fails (not recoverable: 6 Fatal) when the payload asks, else succeeds."""
    if task.payload.fields["Fail"]:
        raise NetException("System.ArgumentException", "card refused", recoverable=False)


def run_all(app: DotNetApp) -> None:
    while app.run_one() is not None:
        pass


def last_hour(conn: psycopg.Connection[Any]) -> read.Record:
    now: datetime = conn.execute("SELECT now()").fetchone()[0]  # type: ignore[index]
    return read.record(conn, since=now - timedelta(hours=1), until=now + timedelta(minutes=1))


@pytest.fixture(params=["dotnet first", "skconsole first"])
def shared_db(request: pytest.FixtureRequest, fresh_database: str) -> str:
    """A database both set up, in either order."""
    if request.param == "dotnet first":
        DotNetApp(fresh_database).setup()
        skconsole_setup(fresh_database)
    else:
        skconsole_setup(fresh_database)
        DotNetApp(fresh_database).setup()
    return fresh_database


def test_a_dotnet_applications_posts_and_endings_are_in_the_record(
    shared_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    net_db = shared_db
    app = net_apps(net_db, executors={CHARGE_CARD: charge})
    for n in range(6):
        app.post(CHARGE_CARD, ASSEMBLY, {"Fail": n < 2})
    run_all(app)

    with Database(net_db).connect() as conn:
        rec = last_hour(conn)
    (task_type,) = rec.types
    got = rec.total(task_type)

    assert (got.posted, got.started, got.succeeded, got.failed_fatal) == (6, 6, 4, 2)
    ((_, signature, failures),) = rec.signatures()
    assert failures == 2 and "System.ArgumentException" in signature


def test_a_dotnet_only_database_reads_its_history_from_the_rows_and_says_so(
    net_only_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    app = net_apps(net_only_db, executors={CHARGE_CARD: charge})
    for _ in range(3):
        app.post(CHARGE_CARD, ASSEMBLY, {"Fail": False})
    run_all(app)

    with Database(net_only_db).connect() as conn:
        rec = last_hour(conn)

    assert rec.source is RecordSource.ROWS
    assert (rec.total().posted, rec.total().succeeded) == (3, 3)
    assert rec.as_dict()["note"] == FROM_ROWS_NOTE
    assert (
        sum(s["succeeded"] for s in cli_json(net_only_db, "status", "history", "--json")["steps"])
        == 3
    )
