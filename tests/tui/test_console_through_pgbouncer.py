"""The console through PgBouncer in transaction mode: it reads every panel and acts.

A real PgBouncer (tests.support.pgbouncer) with two server connections, shared by the
console's reads, its actions and other clients: nothing the console does may need a
session of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg

from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from tests.support.statuses import status_counts
from tests.tui.conftest import (
    SIZE,
    TIMEOUT_SIGNATURE_PREFIX,
    MakeApp,
    loaded,
    record_notices,
    until,
)
from tests.tui.test_actions import _confirming, _select_group


async def test_the_console_through_transaction_pooling_reads_every_panel_and_requeues_a_group(
    seeded: Database,
    make_app: MakeApp,
    pgbouncer: Callable[..., str],
    conn: psycopg.Connection[Any],
) -> None:
    pooled = Database(pgbouncer("transaction", default_pool_size=2))
    app = make_app(db=pooled)
    async with app.run_test(size=SIZE) as pilot:
        said = record_notices(app)
        await loaded(pilot)
        assert app.snapshot is not None
        assert {g.signature.split(":")[0] for g in app.snapshot.failures} >= {
            TIMEOUT_SIGNATURE_PREFIX.split(":")[0]
        }
        assert app.snapshot.exec_stats and app.snapshot.health is not None
        assert pooled.pooled
        _select_group(app, TIMEOUT_SIGNATURE_PREFIX)
        await _confirming(pilot, app, "R")
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Requeued 6") for m in said))
        await until(
            pilot,
            lambda: (
                app.snapshot is not None
                and any(d.task_type == "tui.timeout" and d.ready == 6 for d in app.snapshot.depth)
            ),
        )

    assert status_counts(conn, "tui.timeout") == {JobStatus.UNPROCESSED: 6}
