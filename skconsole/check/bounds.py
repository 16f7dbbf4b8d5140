"""The bound of a monitoring read: it answers on time, or says it cannot see.

A probe that hangs is read by its agent as "still running", and stale figures keep
every alert quiet. :func:`within` bounds a read end to end (``skconsole check`` and each
exporter cycle run in it) and :func:`bounded_session` gives its sessions the server-side
and TCP timeouts; past the bound the read's connections are shut down and it raises
:class:`TimedOut`, which ``check`` reports as UNKNOWN and the exporter as
``skconsole_exporter_up 0``.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import threading
from collections.abc import Callable
from typing import Any, TypedDict, TypeVar

import psycopg

from skconsole.core.durations import format_limit
from skconsole.core.errors import SkconsoleError

Conn = psycopg.Connection[Any]


class SessionBounds(TypedDict):
    """libpq connection parameters (``Database.connect(**bounds)``)."""

    connect_timeout: int
    keepalives: int
    keepalives_idle: int
    keepalives_interval: int
    keepalives_count: int
    tcp_user_timeout: int
    options: str


#: How long ``skconsole check`` and one exporter cycle may take, end to end, unless told.
#: A monitoring read that waits longer than a scrape interval tells nobody anything.
READ_TIMEOUT_S = 10.0
#: The bounds ``--timeout`` takes.
READ_TIMEOUT_BOUNDS_S = (1.0, 3600.0)


class TimedOut(SkconsoleError):
    """A monitoring read that did not end within its bound: a hung server, or a network
    path that went silent (a partition that drops packets sends no reset, so only the
    client's own deadline notices)."""


def bounded_session(timeout_s: float) -> SessionBounds:
    """Connection parameters (``Database.connect(**...)``) that bound a monitoring session.

    Each covers a way to hang that the others miss:

    - ``connect_timeout``: a server or path that accepts no connection;
    - ``statement_timeout``: a statement the server is still running (a lock wait,
      a slow plan) ends on the server, which frees it too;
    - ``idle_in_transaction_session_timeout``: a session whose client was cut off
      mid-read ends by itself instead of holding a snapshot, and so the very xmin
      horizon it watches, for as long as the partition lasts;
    - TCP keepalives and ``tcp_user_timeout``: on a real network, a peer that stopped
      acknowledging drops the connection (libpq ignores them on a Unix socket).

    None of them notices a path that acknowledges and then says nothing (a frozen
    proxy, a middlebox holding the connection): :func:`within` does.
    """
    ms = max(1, int(timeout_s * 1000))
    return {
        # under the bound when it can be (libpq takes whole seconds, 2 at least), so a
        # path that takes no connection fails as that, not as a bound that passed
        "connect_timeout": max(2, math.ceil(timeout_s) - 1),
        "keepalives": 1,
        "keepalives_idle": max(1, int(timeout_s / 2)),
        "keepalives_interval": 1,
        "keepalives_count": 3,
        "tcp_user_timeout": ms,
        "options": f"-c statement_timeout={ms} -c idle_in_transaction_session_timeout={ms}",
    }


def _shut_down(conn: Conn) -> None:
    """Shut the connection's socket down under the thread waiting on it: its wait ends at
    once with an error, nothing more goes out, and the server side ends when the path
    heals. ``shutdown`` on a duplicate descriptor, never ``close``: the descriptor stays
    the connection's, so the number is not reused under the waiting thread."""
    with contextlib.suppress(Exception):
        fd = conn.pgconn.socket
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)


class Watch:
    """What a bounded read is doing now (:meth:`at`: named in the timeout's message) and
    the connections it talks on (:meth:`track`), which :meth:`cut` shuts down once the
    bound has passed. After the cut, the read stops at its next step (:meth:`at` and
    :meth:`track` raise :class:`TimedOut`): an abandoned read never goes on loading the
    server beside the next one."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.stage = "connecting"
        self._conns: list[Conn] = []
        self._cut = False
        self._lock = threading.Lock()

    def message(self) -> str:
        return (
            f"timed out after {format_limit(self.timeout_s)} {self.stage}"
            " (no answer from the server: it hangs or the network path went silent)"
        )

    def at(self, stage: str) -> None:
        with self._lock:
            if self._cut:
                raise TimedOut(self.message())
            self.stage = stage

    def track(self, conn: Conn) -> Conn:
        with self._lock:
            if not self._cut:
                self._conns.append(conn)
                return conn
        conn.close()  # opened after the bound passed: nobody will use it
        raise TimedOut(self.message())

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            conns = list(self._conns)
        for conn in conns:
            _shut_down(conn)

    @property
    def was_cut(self) -> bool:
        return self._cut


T = TypeVar("T")


def within(timeout_s: float, work: Callable[[Watch], T], name: str = "skconsole-read") -> T:
    """``work(watch)``'s result, or :class:`TimedOut` once ``timeout_s`` has passed.

    The work runs on a daemon thread of its own, so the caller's wait ends on time
    whatever the work waits on (a socket that never answers included); past the bound
    its connections are shut down (:meth:`Watch.cut`), which ends its wait too. What
    the work raises is raised here.
    """
    watch = Watch(timeout_s)
    done = threading.Event()
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(work(watch))
        except BaseException as exc:  # handed to the caller, whatever it is
            errors.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, name=name, daemon=True).start()
    if not done.wait(timeout_s):
        watch.cut()
        raise TimedOut(watch.message())
    if errors:
        raise errors[0]
    return results[0]
