"""The queue at a past minute (read.past), rebuilt from the per-minute record and the
gauges: it outlives the job rows. On a real PostgreSQL, the jobs run by a real engine and
then purged by the operator's purge."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import psycopg

from skconsole import ops
from skconsole.core.status import FINAL
from skconsole.db.connect import Database
from skconsole.producer import Producer
from skconsole.read.past import past
from tests.support.statuses import status_of
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]


def run_and_purge(db: Database, conn: Conn) -> list[UUID]:
    """3 jobs that succeed and 2 that fail for good, run by a real engine (its upkeep
    writes the gauges), then every one of them purged."""
    with Producer(db) as p:
        ids = [p.post("retry.ok", {"n": i}) for i in range(3)]
        ids += [p.post("retry.fatal", {"n": i}) for i in range(2)]
    with EngineThread(db.dsn):
        wait_until(lambda: all(status_of(conn, i) in FINAL for i in ids), timeout=30)
        wait_until(
            lambda: conn.execute("SELECT count(*) FROM sk_record_gauges_t").fetchone() != (0,),
            timeout=30,
        )
    ops.PURGE.execute(conn, ops.Selection(ids=tuple(ids)), actor=ops.Actor("t", "h"))
    assert conn.execute("SELECT count(*) FROM sk_task_results_t").fetchone() == (0,)
    return ids


def test_the_past_minute_still_shows_jobs_purged_since(db: Database, conn: Conn) -> None:
    run_and_purge(db, conn)
    now = datetime.now(UTC)

    at = past(conn, now, now=now)

    types = {t.task_type: t for t in at.types}
    assert (types["retry.ok"].recent.posted, types["retry.ok"].recent.succeeded) == (3, 3)
    assert types["retry.fatal"].recent.failed_for_good == 2
    assert types["retry.ok"].recent.run.count == 3  # their run times, from the histogram
    assert at.workers_alive == 1  # the engine, alive when its upkeep wrote the gauges


def test_a_past_minute_groups_the_hour_s_failures_by_signature_with_first_seen(
    db: Database, conn: Conn
) -> None:
    run_and_purge(db, conn)
    now = datetime.now(UTC)

    (group,) = past(conn, now, now=now).groups

    assert "recipient address is invalid" in group.signature
    assert (group.failed_fatal, group.task_types) == (2, ("retry.fatal",))
    assert group.first_seen is not None and group.first_seen <= now


def test_a_minute_before_anything_happened_shows_nothing_and_no_gauges(
    db: Database, conn: Conn
) -> None:
    run_and_purge(db, conn)
    now = datetime.now(UTC)
    before = now.replace(year=now.year - 1)

    at = past(conn, before, now=now)

    assert (at.types, at.groups, at.gauges_at, at.workers_alive) == ((), (), None, None)
