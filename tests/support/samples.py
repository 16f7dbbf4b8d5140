"""Values several test files describe the same way (no database)."""

from __future__ import annotations

from skconsole.tui.showcase.fixed_health import REPLICATION

#: a primary with one asynchronous standby, no failover yet (the showcase's own)
PRIMARY_WITH_AN_ASYNC_STANDBY = REPLICATION
