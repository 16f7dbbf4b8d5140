"""What the harness and every library's adapter share, importing no peer library.

The worker processes import an adapter module (for its handler), and the
handler records a pickup here, so this module stays small and cheap to import.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any, LiteralString, Protocol, TypeVar

import psycopg
from psycopg import sql

#: the one task name every library registers its no-op handler under
TASK = "peers.noop"
#: the library's own database, for worker processes that read their DSN at import
DSN_ENV = "SKCONSOLE_PEERS_DSN"
#: the file a pickup probe's handler appends its latency to (ms, one per line)
PICKUP_ENV = "SKCONSOLE_PEERS_PICKUP"


def record_pickup(posted_at: object) -> None:
    """Append now - ``posted_at`` (wall clock, ms) to the pickup file.

    Computed in the handler, before any write, so what a library does after the
    handler (finalizing the job) is not counted; drain jobs carry no time and
    cost nothing here.
    """
    if isinstance(posted_at, bool) or not isinstance(posted_at, int | float):
        return
    received = time.time()
    path = os.environ.get(PICKUP_ENV)
    if path:
        with open(path, "a", encoding="ascii") as f:
            f.write(f"{(received - posted_at) * 1000.0:.3f}\n")


C = TypeVar("C")


def opened(client: C | None) -> C:
    """The client a peer's ``open()`` made; a post before it is the harness's bug."""
    if client is None:
        raise RuntimeError("open() first")
    return client


class Peer(Protocol):
    """One library as the harness drives it: the same calls for every library.

    ``post`` carries a pickup probe's post time (``None`` for a plain no-op
    job); ``post_many`` posts ``count`` no-op jobs in one call of the
    library's bulk API.
    """

    name: str

    async def install(self, dsn: str) -> None: ...

    async def open(self, dsn: str) -> None: ...

    async def close(self) -> None: ...

    async def post(self, posted_at: float | None) -> None: ...

    async def post_many(self, count: int) -> None: ...

    def worker(self, dsn: str) -> tuple[list[str], dict[str, str]]:
        """The command of one worker process and the environment it adds
        (the DSN goes there, not on a command line where ``ps`` shows it)."""
        ...

    async def remaining(self, conn: psycopg.AsyncConnection[Any]) -> int:
        """Jobs posted and not finished yet (waiting or running)."""
        ...


async def fetch_count(
    conn: psycopg.AsyncConnection[Any],
    query: LiteralString | sql.Composed,
    params: Sequence[Any] = (),
) -> int:
    """The single integer a ``count(*)`` query returns."""
    cur = await conn.execute(query, params)
    row = await cur.fetchone()
    return int(row[0]) if row else 0
