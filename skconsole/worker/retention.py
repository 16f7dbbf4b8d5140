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
from psycopg.types.json import Jsonb

from skconsole.core.durations import format_limit
from skconsole.db.sqlfiles import query
from skconsole.ops.retention_policy import Policy
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
        rows = await self.link.run(_read_policies, retry=False)
        policies = [Policy(r[0] or None, float(r[1]), bool(r[2])) for r in rows]
        deadline = time.monotonic() + ROUND_BUDGET_S
        purged = 0
        for policy in policies:
            audit_id: int | None = None
            while time.monotonic() < deadline:
                params = {
                    **policy.scope(policies),
                    "batch": BATCH_ROWS,
                    "audit_id": audit_id,
                    "host": self.host,
                    "selection": Jsonb(
                        {"task_type": policy.task_type, "default": policy.task_type is None}
                    ),
                    "details": Jsonb(
                        {
                            "by": "retention",
                            "policy": policy.describe(),
                            "older_than_s": policy.older_than_s,
                            "include_faulted": policy.include_faulted,
                        }
                    ),
                }
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


async def _read_policies(conn: psycopg.AsyncConnection[Any]) -> list[tuple[Any, ...]]:
    cur = await conn.execute(query("retention_policies"))
    return await cur.fetchall()


async def _purge_batch(
    conn: psycopg.AsyncConnection[Any], *, params: dict[str, Any]
) -> tuple[bool, int, int | None]:
    cur = await conn.execute(query("retention_purge"), params)
    row = await cur.fetchone()
    assert row is not None
    return bool(row[0]), int(row[1]), row[2]
