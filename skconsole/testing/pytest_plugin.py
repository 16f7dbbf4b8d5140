"""The pytest plugin (entry point ``pytest11``): ``skconsole_queue``, an empty queue per test.

pytest loads this module in every session of an environment where skconsole
is installed, so it imports nothing but pytest at import time: the server,
the engine and the database driver's work start only when a test asks for a
fixture. Fixture names all start with ``skconsole_`` so they cannot clash
with a project's own (``db``, ``dsn``...).

- ``skconsole_server`` (session): the :class:`~skconsole.testing.queue.ScratchServer`,
  the server of ``SKCONSOLE_TEST_DSN`` or an embedded one started by the first
  test that needs it and deleted when the session ends;
- ``skconsole_queue``: a :class:`~skconsole.testing.queue.ScratchQueue`, a new
  database with the schema set up, dropped after the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from skconsole.testing.queue import ScratchQueue, ScratchServer


@pytest.fixture(scope="session")
def skconsole_server() -> Iterator[ScratchServer]:
    """The PostgreSQL server of this session's scratch queues."""
    from skconsole.testing.queue import ScratchServer

    server = ScratchServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def skconsole_queue(skconsole_server: ScratchServer) -> Iterator[ScratchQueue]:
    """A fresh, empty queue (a database of its own), dropped after the test."""
    queue = skconsole_server.new_queue()
    try:
        yield queue
    finally:
        queue.close()
