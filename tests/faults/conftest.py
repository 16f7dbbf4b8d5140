"""Fixtures of the fault tier shared by its files."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.netproxy import FreezableProxy


@pytest.fixture
def proxy(dsn: str) -> Iterator[FreezableProxy]:
    """A TCP proxy to the test server that a test can freeze (a silent partition), take
    down or bring up; thawed and closed afterwards."""
    p = FreezableProxy(dsn).start()
    yield p
    p.thaw()
    p.close()
