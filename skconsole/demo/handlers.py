"""Demo handlers: what ``skconsole demo``, the tests and the benchmark run.

Each one behaves like a small piece of a real system, so the console has
realistic failures to group: timeouts, refused connections, bad data.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from skconsole.core.errors import FatalTaskError
from skconsole.core.json_types import JsonObject
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry

tasks = TaskRegistry(TaskOptions(max_attempts=5, backoff=1.0, max_backoff=60.0, timeout=60.0))


class UpstreamTimeout(Exception):
    pass


class PaymentDeclined(Exception):
    pass


def _get(payload: Any, key: str, default: Any) -> Any:
    return payload.get(key, default) if isinstance(payload, dict) else default


@tasks.task("demo.noop")
async def noop(payload: Any) -> None:
    """Returns at once: measures the engine, not the handler."""


@tasks.task("demo.sleep")
async def sleep(payload: Any) -> None:
    await asyncio.sleep(float(_get(payload, "seconds", 0.1)))


@tasks.task("demo.sleep_sync")
def sleep_sync(payload: Any) -> None:
    time.sleep(float(_get(payload, "seconds", 0.1)))


@tasks.task("demo.flaky", backoff=0.5)
async def flaky(payload: Any) -> None:
    """Fails recoverably with probability p (default 0.3)."""
    await asyncio.sleep(float(_get(payload, "seconds", 0.0)))
    if random.random() < float(_get(payload, "p", 0.3)):
        host = random.randint(1, 9)
        raise ConnectionRefusedError(f"connection refused by cache-{host}.internal:6379")


def _failure(kind: str, payload: Any) -> Exception:
    n = _get(payload, "n", random.randint(1, 99999))
    if kind == "timeout":
        return UpstreamTimeout(
            f"timeout after {random.randint(28, 33)}s calling https://api.partner.example/v2/orders/{n}"
        )
    if kind == "declined":
        return PaymentDeclined(f"card declined for customer cus_{n:08d}: insufficient funds")
    if kind == "keyerror":
        return KeyError(f"'shipping_address' missing in order {n}")
    return ValueError(f"cannot parse amount '{n},00' for invoice INV-{n}")


@tasks.task("demo.fail", max_attempts=3, backoff=0.5)
async def fail(payload: Any) -> None:
    """Always fails, with the error named by payload['kind']: timeout, declined, keyerror, value."""
    raise _failure(str(_get(payload, "kind", "timeout")), payload)


@tasks.task("demo.partner", max_attempts=1_000, backoff=0.5, max_backoff=5.0)
async def partner(payload: Any) -> None:
    """A call to a partner's API (payload ``{"partner": NAME, "down": bool}``): 20 ms, or,
    while that partner is down, 200 ms and then a timeout (the "partner times out"
    incident a circuit breaker holds back: ``python -m skconsole.bench.breaker_incident``)."""
    name = str(_get(payload, "partner", "acme"))
    if _get(payload, "down", False):
        await asyncio.sleep(0.2)
        raise UpstreamTimeout(f"timeout after 30s calling https://api.{name}.example/v2/orders")
    await asyncio.sleep(0.02)


@tasks.task("demo.fatal")
async def fatal(payload: Any) -> None:
    n = _get(payload, "n", 0)
    raise FatalTaskError(f"invalid recipient address 'user{n}@' in message {n}: will never succeed")


@tasks.task("demo.hang", timeout=2.0, max_attempts=2, backoff=0.5)
async def hang(payload: Any) -> None:
    """Sleeps far past its timeout (2 s)."""
    await asyncio.sleep(float(_get(payload, "seconds", 3600.0)))


# -- periodic jobs and a pipeline: the schedules panel and job lineage --------------
@tasks.task("demo.report", every="30s", payload={"report": "queue summary"})
async def report(payload: Any) -> None:
    """Posted by the workers every 30 s, once per tick whatever their number."""
    await asyncio.sleep(0.2)


@tasks.task("demo.nightly", cron="0 3 * * *", timezone="Europe/Paris", missed="skip")
async def nightly(payload: Any) -> None:
    await asyncio.sleep(1.0)


@tasks.task("demo.order.validate", then="demo.order.charge")
async def validate_order(payload: Any) -> JsonObject:
    await asyncio.sleep(0.1)
    return {"order": _get(payload, "order", 0), "amount": _get(payload, "amount", 10)}


@tasks.task("demo.order.charge", then="demo.order.ship", max_attempts=3, backoff=0.5)
async def charge_order(payload: Any) -> JsonObject:
    await asyncio.sleep(0.2)
    if random.random() < 0.1:
        raise PaymentDeclined(f"card declined for order {_get(payload, 'order', 0)}")
    return {**payload, "charged": True}


@tasks.task("demo.order.ship")
async def ship_order(payload: Any, ctx: JobContext) -> None:
    """The last stage; its confirmation e-mail is posted only if shipping succeeds."""
    await asyncio.sleep(0.1)
    ctx.post("demo.sleep", {"seconds": 0.2, "to": f"order-{_get(payload, 'order', 0)}@example.com"})
