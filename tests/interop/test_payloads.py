"""Interop tier (``tests/interop``): payloads skconsole posts for a .NET consumer.

Stakhanovise.NET deserialises payloads with Newtonsoft's ``TypeNameHandling.Auto``:
the .NET type comes from a ``"$type": "Namespace.Type, Assembly"`` property,
which must be the first one. skconsole can write it (``--dotnet-type``,
``skconsole.dotnet_payload``); without it the .NET side gets an untyped object.

The emulated consumer picks its executor by the job's task type, so a test can
see what the deserialiser produced either way (a real .NET worker resolves its
executor from the payload's type, and has none for an untyped object).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import psycopg
import pytest

from skconsole.producer import Producer
from tests.interop.conftest import result_row, run_skconsole
from tests.interop.dotnet_app import PROCESSED, DequeuedTask, DotNetApp, NetPayload
from tests.interop.tasks_interop import ASSEMBLY, CHARGE_CARD

pytestmark = pytest.mark.interop

DOTNET_TYPE = f"{CHARGE_CARD}, {ASSEMBLY}"


def stored_payload(dsn: str) -> str:
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute("SELECT task_payload FROM sk_tasks_queue_t").fetchone()
    assert row is not None, "nothing in the queue"
    return str(row[0])


def run_in_dotnet(dsn: str, net_apps: Callable[..., DotNetApp]) -> NetPayload:
    """A .NET consumer runs the one queued job; returns the payload its executor got."""
    got: list[NetPayload] = []

    def charge(task: DequeuedTask) -> None:
        got.append(task.payload)

    app = net_apps(dsn, executors={CHARGE_CARD: charge})
    run = app.run_one()
    assert run is not None and run.outcome == "processed", run
    assert result_row(dsn, run.task_id)["task_status"] == PROCESSED
    return got[0]


def test_enqueue_with_dotnet_type_posts_a_payload_dotnet_deserialises_as_that_type(
    net_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    """`skconsole enqueue ... --dotnet-type "Billing.Tasks.ChargeCard, Billing"` stores
    "$type" as the payload's first property; the .NET consumer deserialises a
    ChargeCard and runs it (today: no such option)."""
    posted = run_skconsole(
        net_db,
        "enqueue",
        CHARGE_CARD,
        "--payload",
        '{"CardId": 7}',
        "--dotnet-type",
        DOTNET_TYPE,
    )
    assert posted.returncode == 0, posted.stderr
    assert next(iter(json.loads(stored_payload(net_db)))) == "$type"

    payload = run_in_dotnet(net_db, net_apps)

    assert payload == NetPayload(CHARGE_CARD, ASSEMBLY, {"CardId": 7})


def test_enqueue_without_dotnet_type_reaches_dotnet_untyped(
    net_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    """Without --dotnet-type the payload carries no type: the .NET deserialiser gives an
    untyped object with the same fields (what this documents: such a job is not a
    ChargeCard to .NET)."""
    posted = run_skconsole(net_db, "enqueue", CHARGE_CARD, "--payload", '{"CardId": 7}')
    assert posted.returncode == 0, posted.stderr

    payload = run_in_dotnet(net_db, net_apps)

    assert payload == NetPayload(None, None, {"CardId": 7})


def test_dotnet_payload_from_python_puts_the_type_first(
    net_db: str, net_apps: Callable[..., DotNetApp]
) -> None:
    """`skconsole.dotnet_payload(fields, "Billing.Tasks.ChargeCard, Billing")` is a dict
    with "$type" first; posted with a Producer, the .NET consumer runs it as a
    ChargeCard (today: skconsole has no dotnet_payload)."""
    import skconsole

    dotnet_payload = getattr(skconsole, "dotnet_payload", None)
    assert dotnet_payload is not None, "skconsole.dotnet_payload does not exist"

    payload = dotnet_payload({"CardId": 7}, DOTNET_TYPE)
    assert list(payload) == ["$type", "CardId"] and payload["$type"] == DOTNET_TYPE
    with Producer(net_db) as producer:
        producer.post(CHARGE_CARD, payload)

    assert run_in_dotnet(net_db, net_apps) == NetPayload(CHARGE_CARD, ASSEMBLY, {"CardId": 7})
