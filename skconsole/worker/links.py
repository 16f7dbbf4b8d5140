"""The named connections of one worker process, each serving one loop.

A worker keeps separate connections for its lease (control), LISTEN, claims,
result writes and upkeep, so that no statement can hold up another: a result
write waiting on a row lock must never delay the lease renewal that keeps the
worker's jobs its own. A :class:`Link` reopens its connection with back-off,
opens it once even when two coroutines ask at the same moment, and bounds
every statement in time on the client side too: a server that stops
answering (a frozen network path sends no RST, so the socket never fails)
costs one timeout, after which the connection is abandoned and a new one
opened. Whether a statement that got no answer ran on the server is unknown;
callers that care (claims) are told so with :class:`LinkLost`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import psycopg

from skconsole.core.errors import ConnectError
from skconsole.db.connect import Database, settings_options
from skconsole.db.pooled import through_transaction_pooler
from skconsole.db.rows import aone
from skconsole.db.sqlfiles import query

log = logging.getLogger("skconsole.worker")
T = TypeVar("T")

# Client-side settings of every worker connection: a dead peer is noticed in
# seconds (keepalives, and unacknowledged data gives up after 10 s) instead of
# after the kernel's 15-minute retransmission timeout. Unix sockets ignore them.
NETWORK = {
    "connect_timeout": 5,
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "tcp_user_timeout": 10_000,
}

# Statement errors that say "not now" rather than "never": the statement was
# cancelled (statement_timeout), could not get a lock in time (lock_timeout),
# lost a deadlock or serialization race, or the server is short of resources.
# The statement rolled back; trying again later is right.
TRANSIENT_SQLSTATES = frozenset({"57014", "55P03", "40P01", "40001", "53000", "53100", "53200"})


def is_transient(exc: BaseException) -> bool:
    return isinstance(exc, psycopg.Error) and exc.sqlstate in TRANSIENT_SQLSTATES


@dataclass(frozen=True)
class Backend:
    """A server session, as end_backend.sql matches it: its process id and when it
    started (so a recycled pid is never taken for it)."""

    pid: int
    backend_start: datetime


class LinkLost(Exception):
    """The connection died, or gave no answer in time, while a statement ran:
    whether the server executed it is unknown. ``identity`` is the server
    session it ran in, if known."""

    def __init__(self, name: str, identity: Backend | None, cause: str) -> None:
        super().__init__(f"connection {name} lost: {cause}")
        self.identity = identity


class Backoff:
    """Exponential back-off between attempts: 0.1 s doubling up to ``ceiling``."""

    def __init__(self, first: float = 0.1, ceiling: float = 5.0) -> None:
        self.first = first
        self.ceiling = ceiling
        self.delay = first

    def next(self) -> float:
        delay = self.delay
        self.delay = min(self.delay * 2, self.ceiling)
        return delay

    def reset(self) -> None:
        self.delay = self.first


class Throttle:
    """Logs a repeating warning at most once per ``interval`` per key, with a count
    of what was held back, so a 40-second lock wait is a few lines, not hundreds."""

    def __init__(self, interval: float = 10.0) -> None:
        self.interval = interval
        self._last: dict[str, tuple[float, int]] = {}

    def warning(self, key: str, message: str, *args: object) -> None:
        now = time.monotonic()
        last, held = self._last.get(key, (-1e9, 0))
        if now - last < self.interval:
            self._last[key] = (last, held + 1)
            return
        self._last[key] = (now, 0)
        suffix = f" ({held} more like it since the last report)" if held else ""
        log.warning(message + suffix, *args)


async def guarded(throttle: Throttle, what: str, step: Callable[[], Awaitable[object]]) -> bool:
    """One step of a periodic loop; a database that is away or refuses it only skips this
    round (a warning, throttled): False."""
    try:
        await step()
    except (psycopg.Error, LinkLost) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        throttle.warning(what, "%s skipped this round: %s", what, first)
        return False
    return True


@dataclass(eq=False)
class Link:
    """One named connection, reopened with back-off, one statement at a time."""

    db: Database
    name: str
    _: KW_ONLY
    settings: dict[str, str]
    timeout: float
    on_connect: Callable[[psycopg.AsyncConnection[Any]], Awaitable[None]] | None = None
    track_identity: bool = False
    #: the server session of the current connection
    identity: Backend | None = field(default=None, init=False)
    closing: bool = field(default=False, init=False)
    throttle: Throttle = field(default_factory=Throttle, init=False)
    _conn: psycopg.AsyncConnection[Any] | None = field(default=None, init=False)
    _open_lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False)
    _use_lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False)
    _backoff: Backoff = field(default_factory=Backoff, init=False)
    _abandoned: set[asyncio.Task[Any]] = field(default_factory=set, init=False)

    @property
    def is_open(self) -> bool:
        conn = self._conn
        return conn is not None and not conn.closed and not conn.broken

    async def connection(self) -> psycopg.AsyncConnection[Any]:
        """The open connection, (re)opened with back-off if needed."""
        async with self._open_lock:
            while True:
                if self.is_open:
                    assert self._conn is not None
                    return self._conn
                self._conn = None
                try:
                    self._conn = await self._open()
                    self._backoff.reset()
                    return self._conn
                except (ConnectError, psycopg.Error, OSError, TimeoutError) as exc:
                    if self.closing:
                        raise LinkLost(self.name, None, str(exc)) from None
                    delay = self._backoff.next()
                    self.throttle.warning(
                        "open",
                        "connection %s unavailable (%s); retrying in %.1fs",
                        self.name,
                        exc,
                        delay,
                    )
                    await asyncio.sleep(delay)

    async def _open(self) -> psycopg.AsyncConnection[Any]:
        # the link's settings go where the connection's own do: the startup packet, or
        # (through a transaction pooler) the start of every transaction
        conn = await asyncio.wait_for(
            self.db.aconnect(
                application_name=f"skconsole-worker-{self.name}",
                prepare_threshold=0,
                options=settings_options(self.settings),
                **NETWORK,
            ),
            NETWORK["connect_timeout"] * 2,
        )
        try:
            # through a transaction pooler the next statement may run in another server
            # session: there is none to know (a lost claim waits for statement_timeout)
            if self.track_identity and not through_transaction_pooler(conn):
                self.identity = await asyncio.wait_for(
                    aone(conn, query("backend_identity"), Backend), self.timeout
                )
            if self.on_connect is not None:
                await asyncio.wait_for(self.on_connect(conn), self.timeout)
        except BaseException:
            with contextlib.suppress(Exception):
                await conn.close()
            raise
        return conn

    async def run(
        self,
        op: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]],
        *,
        timeout: float | None = None,
        retry: bool = True,
    ) -> T:
        """Run ``op`` on the connection and return what it returns.

        Connection lost or no answer within ``timeout``: the connection is
        dropped, then (``retry``) reopened and ``op`` run again, or
        :class:`LinkLost` raised. A statement the server refused on a healthy
        connection (psycopg.Error) is raised as it is: the caller knows whether
        trying again makes sense (:func:`is_transient`).
        """
        while True:
            conn = await self.connection()
            identity = self.identity
            try:
                async with self._use_lock:
                    return await self._bounded(conn, op, timeout or self.timeout)
            except psycopg.Error as exc:
                if not (conn.closed or conn.broken or isinstance(exc, psycopg.InterfaceError)):
                    raise
                cause = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            except (OSError, _NoAnswer) as exc:
                cause = str(exc) or type(exc).__name__
            self.drop(conn)
            if not retry or self.closing:
                raise LinkLost(self.name, identity, cause)
            delay = self._backoff.next()
            self.throttle.warning(
                "lost", "lost connection %s (%s); retrying in %.1fs", self.name, cause, delay
            )
            await asyncio.sleep(delay)

    async def _bounded(
        self,
        conn: psycopg.AsyncConnection[Any],
        op: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]],
        timeout: float,
    ) -> T:
        task: asyncio.Task[T] = asyncio.ensure_future(op(conn))
        try:
            done, _ = await asyncio.wait({task}, timeout=timeout)
        except asyncio.CancelledError:
            self._abandon(conn, task)
            raise
        if not done:
            self._abandon(conn, task)
            raise _NoAnswer(f"no answer within {timeout:g}s")
        return task.result()

    def _abandon(self, conn: psycopg.AsyncConnection[Any], task: asyncio.Task[Any]) -> None:
        """Give up on a statement and its connection without waiting: psycopg
        cancels the statement and closes the connection in the background."""
        if self._conn is conn:
            self._conn = None
        task.cancel()
        self._abandoned.add(task)

        def closed(t: asyncio.Task[Any]) -> None:
            self._abandoned.discard(t)
            if not t.cancelled():
                t.exception()  # retrieved: an abandoned statement's error is not news
            closer = asyncio.ensure_future(conn.close())
            self._abandoned.add(closer)
            closer.add_done_callback(self._abandoned.discard)

        task.add_done_callback(closed)

    def drop(self, conn: psycopg.AsyncConnection[Any] | None = None) -> None:
        """Forget the current connection (it is broken or no longer trusted)."""
        conn = conn or self._conn
        if conn is None:
            return
        if self._conn is conn:
            self._conn = None
        closer = asyncio.ensure_future(conn.close())
        self._abandoned.add(closer)
        closer.add_done_callback(self._abandoned.discard)

    async def close(self, bound: float = 5.0) -> None:
        """Close the connection and give up on the statements abandoned on it, within
        ``bound`` seconds. psycopg answers a cancelled statement by asking the server
        to cancel it (up to 5 s) and waiting for it (5 s more): over a silent path,
        10 s. Cancelled a second time, it closes the connection at once, which is
        what an abandoned statement on a closing link needs."""
        self.closing = True
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), bound)
        pending = [t for t in self._abandoned if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=bound)


class _NoAnswer(Exception):
    """A statement got no answer in time (the link abandoned its connection)."""
