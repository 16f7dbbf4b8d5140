"""Purging finished results past their retention, as the workers' housekeeping.

Every worker looks every ROUND_EVERY_S; each batch deletes at most
BATCH_ROWS results in a transaction of its own, under a maintenance advisory
lock (so one worker at a time purges; a worker that finds it taken skips the
round), and counts them in the round's audit row (the system's action) in
the same transaction. A round stops after ROUND_BUDGET_S, so a backlog of
millions is purged over several rounds without holding the upkeep
connection from reaping and ticks for long.
"""

from __future__ import annotations

import functools
import logging
import time
from typing import Any

import psycopg
from psycopg.rows import kwargs_row

from skconsole.core.actor import Origin
from skconsole.core.durations import format_limit
from skconsole.core.retention import Policy
from skconsole.db.audit import SYSTEM, AuditRow
from skconsole.db.sqlfiles import query
from skconsole.worker.links import Link
from skconsole.worker.metrics import MetricsBuffer

log = logging.getLogger("skconsole.worker")

ROUND_EVERY_S = 60.0
#: the first round this long after the worker starts (not all at a fleet's restart)
FIRST_ROUND_AFTER_S = 10.0
BATCH_ROWS = 1000
ROUND_BUDGET_S = 5.0


class Retention:
    """One worker's share of retention: a round now and then, on the upkeep link."""

    def __init__(self, link: Link, metrics: MetricsBuffer, host: str) -> None:
        self.link = link
        self.metrics = metrics
        self.host = host[:250]
        self.purged = 0
        self.due_at = time.monotonic() + FIRST_ROUND_AFTER_S

    async def run_once(self) -> int:
        """One round over every policy; returns how many results it purged."""
        self.due_at = time.monotonic() + ROUND_EVERY_S
        policies = await self.link.run(_read_policies, retry=False)
        deadline = time.monotonic() + ROUND_BUDGET_S
        purged = 0
        for policy in policies:
            audit_id: int | None = None
            while time.monotonic() < deadline:
                params = purge_params(policy, policies, self.host, audit_id)
                locked, deleted, audit_id = await self.link.run(
                    functools.partial(_purge_batch, params=params), retry=False
                )
                purged += deleted
                if not locked:
                    return self._counted(purged)  # another worker purges now
                if deleted < BATCH_ROWS:
                    break
        return self._counted(purged)

    def _counted(self, purged: int) -> int:
        if purged:
            self.purged += purged
            self.metrics.add("retention@purged-count", purged)
            log.info(
                "retention: purged %d finished result(s) (next round in %s)",
                purged,
                format_limit(ROUND_EVERY_S),
            )
        return purged


def purge_params(
    policy: Policy,
    policies: list[Policy],
    host: str,
    audit_id: int | None,
    batch: int | None = None,
) -> dict[str, object]:
    """The parameters of one ``retention_purge`` batch: the policy's scope, and the
    round's audit row (the system's, as :class:`AuditRow` builds every audit row)."""
    row = AuditRow(
        SYSTEM,
        host,
        "retention",
        policy.scope_json(),
        0,  # the statement counts what it purged
        {
            "by": "retention",
            "policy": policy.describe(),
            "older_than_s": policy.older_than_s,
            "include_faulted": policy.include_faulted,
        },
        Origin.WORKER,
    )
    return {
        **policy.scope(policies),
        "batch": BATCH_ROWS if batch is None else batch,
        "audit_id": audit_id,
        **row.params(),
    }


async def _read_policies(conn: psycopg.AsyncConnection[Any]) -> list[Policy]:
    async with conn.cursor(row_factory=kwargs_row(Policy.from_row)) as cur:
        await cur.execute(query("retention_policies"))
        return await cur.fetchall()


async def _purge_batch(
    conn: psycopg.AsyncConnection[Any], *, params: dict[str, object]
) -> tuple[bool, int, int | None]:
    async with conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        await cur.execute(query("retention_purge"), params)
        row = await cur.fetchone()
    assert row is not None
    return bool(row["locked"]), int(row["purged"]), row["audit_id"]
