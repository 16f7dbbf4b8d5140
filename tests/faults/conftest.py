"""Fixtures of the fault tier shared by its files."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from skconsole.db.schema import setup_schema
from tests.support.netproxy import FreezableProxy
from tests.support.replication import ReplicatedPair


@pytest.fixture
def proxy(dsn: str) -> Iterator[FreezableProxy]:
    """A TCP proxy to the test server that a test can freeze (a silent partition), take
    down or bring up; thawed and closed afterwards."""
    p = FreezableProxy(dsn).start()
    yield p
    p.thaw()
    p.close()


@pytest.fixture
def pair() -> Iterator[ReplicatedPair]:
    """A primary with a streaming standby, the schema set up on the primary."""
    with ReplicatedPair() as p:
        with psycopg.connect(p.primary.dsn, autocommit=True) as c:
            setup_schema(c)
        yield p
