"""Queue-table health: dead rows, vacuum, the xmin horizon and the locks around the queue.

A delete-heavy queue lives or dies by vacuum. Every claim and finish leaves a
dead row; vacuum can only remove the dead rows no open snapshot may still
see, so one forgotten transaction (an ``idle in transaction`` psql, a
stuck prepared transaction, a replication slot) pins them all, the queue's
indexes fill with dead entries and claims slow down until it ends. This read
model shows what a person needs to find that culprit: per hot table its
dead rows and vacuum history (:mod:`.tables`), who holds the xmin horizon and
who waits for a lock on the queue and who blocks them (:mod:`.horizon`), and a
few sentences of advice (:mod:`.advice`); :mod:`.snapshot` reads them all.

It works without superuser. Without ``pg_read_all_stats`` PostgreSQL hides
other roles' sessions (query, state, times, client); :attr:`Health.hidden`
says so, and the horizon still shows their pids and transaction ages.

Like :mod:`skconsole.read`, it imports no UI library: the CLI and the console
both draw these dataclasses.
"""

from skconsole.read.health.advice import (
    DEAD_ROWS_WARN,
    DEAD_SHARE_WARN,
    HORIZON_WARN_S,
    LOCK_WAIT_WARN_S,
    Advice,
    Thresholds,
    advise,
)
from skconsole.read.health.horizon import Horizon, LockWait, PreparedXact, Session, SlotHold
from skconsole.read.health.snapshot import (
    HOT_TABLES,
    LOCK_WAIT_LIMIT,
    QUERY_CAP,
    SESSION_LIMIT,
    Health,
    health,
    regnames,
)
from skconsole.read.health.tables import (
    SERVER_SETTINGS,
    AutovacuumSettings,
    TableHealth,
    autovacuum_settings,
)

__all__ = [
    "DEAD_ROWS_WARN",
    "DEAD_SHARE_WARN",
    "HORIZON_WARN_S",
    "HOT_TABLES",
    "LOCK_WAIT_LIMIT",
    "LOCK_WAIT_WARN_S",
    "QUERY_CAP",
    "SERVER_SETTINGS",
    "SESSION_LIMIT",
    "Advice",
    "AutovacuumSettings",
    "Health",
    "Horizon",
    "LockWait",
    "PreparedXact",
    "Session",
    "SlotHold",
    "TableHealth",
    "Thresholds",
    "advise",
    "autovacuum_settings",
    "health",
    "regnames",
]
