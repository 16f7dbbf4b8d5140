"""The unit tier needs no server: a unit test that asks for a database fixture fails at
collection (it belongs in tests/db)."""

from __future__ import annotations

import pytest

#: the fixtures that start or reach the test server (tests/conftest.py)
DATABASE_FIXTURES = frozenset(
    {
        "server_dsn",
        "_schema",
        "dsn",
        "db",
        "conn",
        "fresh_database",
        "second",
        "run_cli",
        "start_worker",
        "spawn",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        wanted = DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))
        if wanted and "tests/unit/" in str(item.fspath):
            raise pytest.UsageError(
                f"{item.nodeid} is a unit test but asks for {', '.join(sorted(wanted))}:"
                " the unit tier needs no server (move it to tests/db)"
            )
