"""Whether a connection's session is really its own, or shared by a pooler in transaction mode.

A pooler in transaction mode hands each transaction of a client to whichever
server session is free, so nothing a session holds (a ``SET``, a ``LISTEN``, a
session advisory lock: a worker's liveness) lasts. skconsole must know before it
relies on any of it, and a wrong "these are real sessions" breaks its promises.

Two ways to know, in order:

1. **Proof of a direct TCP session**: the address and port the server sees its
   client at (``inet_client_addr()``, ``inet_client_port()``) are this socket's
   own. A pooler or proxy between us opens its own connections to the server, so
   they cannot match. Deterministic, and one round trip.
2. **Otherwise, probing** (a proxy, NAT, a Unix socket): a session setting is set
   and read back across transactions while a second client asks who it is. A
   pooler shows it sooner or later: two clients on one server process, a client
   moved between server processes, a setting lost. One round can miss it when the
   pooler's other sessions are busy (seen: 19 misses in 200 single rounds with 8
   clients loading the pooler), so :data:`PROBE_ROUNDS` rounds are run, each with
   a fresh setting, and any evidence settles it.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg

from skconsole.db.rows import one

#: rounds of the probe when no direct session could be proven (see the module docstring)
PROBE_ROUNDS = 6

_PROBE_START = (
    "SELECT pg_backend_pid() AS pid, set_config('skconsole.probe', %s, false) AS probe, "
    "(SELECT source FROM pg_settings WHERE name = 'statement_timeout') AS source"
)
_PROBE_READ = "SELECT pg_backend_pid() AS pid, current_setting('skconsole.probe', true) AS probe"
_CLIENT_ADDRESS = "SELECT host(inet_client_addr()) AS host, inet_client_port() AS port"


@dataclass(frozen=True)
class Probe:
    """One answer of the session probe: the server process, the probe's setting as
    that session sees it, and (first answer only) where statement_timeout came from."""

    pid: int
    probe: str | None
    source: str | None = None


@dataclass(frozen=True)
class ClientAddress:
    """Where the server sees this session's client (NULL for a Unix socket)."""

    host: str | None
    port: int | None


@dataclass(frozen=True)
class Verdict:
    """What the probe found: ``pooled`` says why the sessions are a pooler's (None: real
    sessions); ``source`` is where statement_timeout came from on the first answer (None
    when a direct session was proven, and the startup options are known to arrive)."""

    pooled: str | None
    source: str | None


def _local_tcp_address(conn: psycopg.Connection[Any]) -> tuple[str, int] | None:
    """This end of the connection's TCP socket, or None (a Unix socket, or unknown)."""
    try:
        sock = socket.socket(fileno=os.dup(conn.pgconn.socket))
    except OSError:
        return None
    with sock:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return None
        host, port = sock.getsockname()[:2]
        return str(host), int(port)


def _same_host(a: str, b: str) -> bool:
    try:
        x, y = ipaddress.ip_address(a), ipaddress.ip_address(b)
    except ValueError:
        return False
    if isinstance(x, ipaddress.IPv6Address) and x.ipv4_mapped is not None:
        x = x.ipv4_mapped
    if isinstance(y, ipaddress.IPv6Address) and y.ipv4_mapped is not None:
        y = y.ipv4_mapped
    return x == y


def direct_tcp_session(conn: psycopg.Connection[Any]) -> bool:
    """Whether the server sees this very socket as its client: nothing sits between."""
    local = _local_tcp_address(conn)
    if local is None:
        return False
    seen = one(conn, _CLIENT_ADDRESS, ClientAddress)
    if seen is None or seen.host is None or seen.port is None:
        return False
    return seen.port == local[1] and _same_host(seen.host, local[0])


def pooling_evidence(token: str, first: Probe, other: Probe, again: Probe) -> str | None:
    """Why one round's answers mean a transaction pooler, or None when they look like
    real sessions."""
    if other.pid == first.pid or other.probe == token:
        return f"two sessions share server process {other.pid}"
    if again.pid != first.pid:
        return f"a session moved from server process {first.pid} to {again.pid} between two transactions"
    if again.probe != token:
        return "a session setting was lost between two transactions"
    return None


def probe_sessions(
    conn: psycopg.Connection[Any], open_other: Callable[[], psycopg.Connection[Any]]
) -> Verdict:
    """Whether ``conn`` (autocommit) has a session of its own; ``open_other`` opens a
    second connection the same way. See the module docstring."""
    if direct_tcp_session(conn):
        return Verdict(None, None)
    source: str | None = None
    pids: set[int] = set()
    with open_other() as other_conn:
        for _ in range(PROBE_ROUNDS):
            token = secrets.token_hex(8)
            first = one(conn, _PROBE_START, Probe, (token,))
            other = one(other_conn, _PROBE_READ, Probe)
            again = one(conn, _PROBE_READ, Probe)
            assert first is not None and other is not None and again is not None
            source = source or first.source
            evidence = pooling_evidence(token, first, other, again)
            pids |= {first.pid, again.pid}
            if evidence is None and len(pids) > 1:
                evidence = f"a session moved between server processes {sorted(pids)}"
            if evidence is not None:
                return Verdict(evidence, source)
    return Verdict(None, source)
