"""Values several test files describe the same way (no database)."""

from __future__ import annotations

from skconsole.read.replication import Replication

#: a primary with one asynchronous standby, no failover yet
PRIMARY_WITH_AN_ASYNC_STANDBY = Replication(
    standby=False,
    timeline=1,
    senders=1,
    sync_senders=0,
    hidden_senders=0,
    sync_names="",
    synchronous_commit="on",
    last_failover=None,
)
