"""Timestamps Python cannot hold, read as the edges of ``datetime``.

A Stakhanovise.NET application sharing the database may write times no Python
``datetime`` can hold: Npgsql writes ``DateTime.MaxValue`` as ``infinity``, and a
year past 9999 or a BC date are valid timestamptz values. One such row must not
fail every read model that returns its time: on skconsole's connections they read
as :data:`LATEST_TIME` or :data:`EARLIEST_TIME`, and the read models tell no age
from them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg import abc, postgres
from psycopg.adapt import Loader
from psycopg.pq import Format

from skconsole.core.figures import EARLIEST_TIME, LATEST_TIME

_TIMESTAMPTZ_OID = postgres.types["timestamptz"].oid


class _EdgeTimestamptzLoader(Loader):
    """psycopg's own timestamptz loader (its C one when installed), except that a value it
    cannot load (out of datetime's range, or out of it once in the session's zone) is
    LATEST_TIME or EARLIEST_TIME rather than a DataError that fails the whole read.

    It wraps the loader instead of subclassing it: psycopg's C row loader calls a C
    loader's own conversion directly, so an overridden ``load`` would never run.
    """

    format = Format.TEXT

    def __init__(self, oid: int, context: abc.AdaptContext | None = None) -> None:
        super().__init__(oid, context)
        base = psycopg.adapters.get_loader(_TIMESTAMPTZ_OID, self.format)
        assert base is not None  # psycopg registers one for each format
        self._load = base(oid, context).load

    def load(self, data: abc.Buffer) -> datetime:
        try:
            value: datetime = self._load(data)
        except psycopg.DataError:
            return EARLIEST_TIME if self._early(bytes(data)) else LATEST_TIME
        return value

    @staticmethod
    def _early(data: bytes) -> bool:
        """``-infinity`` and BC dates, in any DateStyle."""
        return data.startswith(b"-") or data.rstrip().endswith(b"BC")


class _EdgeTimestamptzBinaryLoader(_EdgeTimestamptzLoader):
    format = Format.BINARY

    @staticmethod
    def _early(data: bytes) -> bool:
        """Microseconds since 2000 as a signed 64-bit integer: ``-infinity`` is its minimum."""
        return int.from_bytes(data, "big", signed=True) < 0


def tolerate_odd_timestamps(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
    """Make ``conn`` read timestamps Python cannot hold as LATEST_TIME / EARLIEST_TIME.

    Every skconsole connection gets this: a Stakhanovise.NET application sharing the
    database may write them (Npgsql writes DateTime.MaxValue as ``infinity``), and
    one such row must not fail every read model that returns its time. Values in
    range load exactly as psycopg loads them.
    """
    conn.adapters.register_loader(_TIMESTAMPTZ_OID, _EdgeTimestamptzLoader)
    conn.adapters.register_loader(_TIMESTAMPTZ_OID, _EdgeTimestamptzBinaryLoader)
