"""The listen connection: LISTEN/NOTIFY wake-ups, and operators' cancel requests.

New jobs (the queue's channel) wake the claim loop at once instead of at its
next poll. The worker's own channel (``sk_worker_channel()``) says an
operator cancelled a job it runs: the requests are read on this connection
(it is otherwise idle), at once, after every (re)connection, and every
CANCEL_POLL seconds regardless, since a notification is lost with the
connection that would have received it.

Through a pooler in transaction mode nothing can be listened to (a LISTEN
stays on a server session other clients use next): the claim loop polls
(``WorkerConfig.poll_interval``) and the cancel requests are read every
POOLED_CANCEL_POLL seconds instead.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

from skconsole.db.connect import Database
from skconsole.db.context import mapping_of
from skconsole.db.pooled import through_transaction_pooler
from skconsole.db.rows import arows, avalue
from skconsole.db.sqlfiles import query
from skconsole.worker.jobs import Attempt
from skconsole.worker.links import Backoff, Link, Throttle
from skconsole.worker.metrics import MetricsBuffer

log = logging.getLogger("skconsole.worker")

#: how often a worker reads its cancel requests when no notification came (one
#: may have been lost with the listen connection); the in-flight view calls a
#: request "still running" only after sk_cancel_deadline_seconds(), longer than this
CANCEL_POLL = 5.0
#: the same through a transaction pooler, where no notification comes: a cancelled
#: handler is told within this long
POOLED_CANCEL_POLL = 1.0


class Listener:
    """Listens on its own connection; ``on_work`` when jobs may be waiting (a
    notification, or a reconnection that may have missed some), ``on_cancel`` for
    every attempt of this worker an operator asked to cancel."""

    def __init__(
        self,
        db: Database,
        *,
        worker_id: uuid.UUID,
        metrics: MetricsBuffer,
        on_work: Callable[[], None],
        on_cancel: Callable[[Attempt], None],
    ) -> None:
        self.worker_id = worker_id
        self.metrics = metrics
        self.on_work = on_work
        self.on_cancel = on_cancel
        self.link = Link(db, "listen", settings={}, timeout=10.0, on_connect=self._on_connect)
        #: this worker's own channel (cancel requests), named by the database
        self._own_channel: str | None = None
        self._cancels_due = True
        self._throttle = Throttle()

    async def _on_connect(self, conn: psycopg.AsyncConnection[Any]) -> None:
        if not through_transaction_pooler(conn):
            channel = await avalue(conn, query("worker_channel"), {"worker_id": self.worker_id})
            assert channel is not None
            self._own_channel = str(channel)
            for name in (mapping_of(conn).channel_name, self._own_channel):
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(name)))
        self.metrics.add("listener@reconnect-count")
        self._cancels_due = True
        self.on_work()  # notifications may have been missed meanwhile

    async def run(self) -> None:
        link = self.link
        backoff = Backoff()
        next_poll = 0.0
        while True:
            conn = await link.connection()
            pooled = through_transaction_pooler(conn)
            try:
                if self._cancels_due or time.monotonic() >= next_poll:
                    self._cancels_due = False
                    next_poll = time.monotonic() + (POOLED_CANCEL_POLL if pooled else CANCEL_POLL)
                    await self._read_cancels(conn)
                if pooled:
                    await asyncio.sleep(max(0.0, next_poll - time.monotonic()))
                else:
                    await self._wait_for_notifications(conn)
                backoff.reset()
            except (psycopg.Error, OSError, TimeoutError) as exc:
                link.drop(conn)
                self._throttle.warning("listen", "listener connection lost: %s", exc)
                await asyncio.sleep(backoff.next())

    async def _wait_for_notifications(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Up to a second of notifications: new jobs wake the claim loop, one on this
        worker's own channel ends the wait (its cancel requests are read next)."""
        notifies = conn.notifies(timeout=1.0)
        try:
            async for n in notifies:
                if n.channel == self._own_channel:
                    self._cancels_due = True
                    break
                self.metrics.add("listener@task-notification-count")
                self.on_work()
        finally:
            await notifies.aclose()

    async def _read_cancels(self, conn: psycopg.AsyncConnection[Any]) -> None:
        requests = await asyncio.wait_for(
            arows(conn, query("cancel_requests"), Attempt, {"worker_id": self.worker_id}),
            self.link.timeout,
        )
        for attempt in requests:
            self.on_cancel(attempt)
