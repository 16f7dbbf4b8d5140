"""When each failure group first failed, from the per-minute record as well as its rows.

A failure group's own rows (:func:`skconsole.read.failures.failure_groups`) say when
its oldest failed job still there failed; a purge, a retention pass or a requeue that
succeeded takes those rows, and a group that came back looks new when it is not. The
record (:mod:`skconsole.read.record`) keeps every signature's failures per minute
through purges, so the first seen of a group is the older of the two; on a database
without skconsole's record (Stakhanovise.NET's tables alone) it is the rows' alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from skconsole.read.failures import FailureGroup
from skconsole.read.query import Conn, fetch


@dataclass(frozen=True)
class SignatureSeen:
    signature: str
    first_seen: datetime


def first_seen(conn: Conn, signatures: Sequence[str]) -> dict[str, datetime]:
    """The first minute each of ``signatures`` (group keys) failed in the record; a
    signature the record never saw is left out."""
    if not signatures:
        return {}
    rows = fetch(conn, "record_first_seen", SignatureSeen, {"signatures": list(signatures)})
    return {r.signature: r.first_seen for r in rows}


def older(a: datetime | None, b: datetime | None) -> datetime | None:
    """The older of two instants (None: unknown)."""
    known = [t for t in (a, b) if t is not None]
    return min(known) if known else None


def with_first_seen(
    groups: Sequence[FailureGroup], seen: Mapping[str, datetime | None]
) -> list[FailureGroup]:
    """``groups``, each first seen at the older of its rows' first failure and the
    record's (``seen``, by signature: :func:`first_seen`)."""
    return [replace(g, first_seen=older(g.first_seen, seen.get(g.signature))) for g in groups]
