"""A connection that fails says whether waiting may help: no server answered
(ServerUnreachable, a starting worker tries again) or one answered and refused
(ConnectError, fixed only by the operator)."""

from __future__ import annotations

import socket

import pytest
from psycopg import conninfo

from skconsole.core.errors import ConnectError, ServerUnreachable
from skconsole.db.connect import Database


def _with(dsn: str, **params: str) -> str:
    return conninfo.make_conninfo(dsn, **params)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once it is closed


def test_a_port_nobody_listens_on_is_unreachable() -> None:
    db = Database(f"postgresql://postgres@127.0.0.1:{_closed_port()}/postgres")
    with pytest.raises(ServerUnreachable, match="Connection refused"):
        db.connect()


def test_a_database_that_does_not_exist_is_refused_not_unreachable(dsn: str) -> None:
    with pytest.raises(ConnectError, match="does not exist") as caught:
        Database(_with(dsn, dbname="sk_no_such_database")).connect()
    assert not isinstance(caught.value, ServerUnreachable)


def test_a_role_that_does_not_exist_is_refused_not_unreachable(dsn: str) -> None:
    with pytest.raises(ConnectError, match="sk_no_such_role") as caught:
        Database(_with(dsn, user="sk_no_such_role")).connect()
    assert not isinstance(caught.value, ServerUnreachable)
