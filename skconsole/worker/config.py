"""The knobs of one worker process (:class:`WorkerConfig`), checked when it is made:
a lease the heartbeat cannot keep, or a margin that leaves no room between a
fenced worker's last execution and the next one elsewhere, is refused before
any job is claimed.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field

from skconsole.core.errors import ConfigError

#: the lease margin as a share of the lease, when only the lease is given (--lease)
LEASE_MARGIN_SHARE = 0.2
#: how long the per-minute record keeps a minute by default: 14 days
RECORD_KEEP_S = 14 * 86_400.0


@dataclass
class WorkerConfig:
    """Knobs of one worker process; defaults suit most queues."""

    #: jobs run at once: 50 lets 10 ms handlers run 2.5-3.6k jobs/s a process
    #: and a no-op drain reach its plateau (python -m skconsole.bench.defaults;
    #: docs/howto/sizing-workers.md)
    concurrency: int = 50
    #: most jobs a claim takes (it takes no more than the free slots): below
    #: 25 it caps the drain, above the concurrency it changes nothing
    batch_size: int = 100
    poll_interval: float = 1.0
    heartbeat_interval: float = 1.0
    #: the liveness lease: a worker that cannot renew it for ``lease - lease_margin``
    #: seconds stops its own jobs; others reap them after ``lease + lease_margin``
    lease: float = 10.0
    lease_margin: float = 2.0
    reap_interval: float = 2.0
    #: reap jobs with no owner recorded (a Stakhanovise.NET consumer's) processing for
    #: longer than this; None: never (a claim we did not make is not ours to judge)
    unowned_after: float | None = None
    grace_period: float = 10.0
    metrics_interval: float = 2.0
    burst: bool = False
    burst_horizon: float = 1.0
    reap: bool = True
    #: the engine has its process to itself (``skconsole worker``), so it may end
    #: the process to end a handler that will not stop: when a fenced worker's
    #: lease is about to lapse and a handler still runs (a sync handler that
    #: ignores JobContext.stop, an async one that swallows its cancellation),
    #: and at shutdown, once the jobs of sync handlers still running after the
    #: grace period are handed back (claimable after lease + margin). An engine
    #: sharing its process (the console's) waits for such threads instead.
    own_process: bool = False
    process_id: str = field(default_factory=lambda: f"skconsole-{socket.gethostname()}")
    #: the version of the application code this worker runs (worker/app_version.py:
    #: ``--app-version``, the environment, the tasks' distribution); None: unknown
    app_version: str | None = None
    #: how long the per-minute record keeps a minute (146_skconsole_record.sql):
    #: upkeep trims older ones. Workers with different values trim to the shortest.
    record_keep: float = RECORD_KEEP_S

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError("concurrency must be at least 1")
        if self.record_keep < 3600:
            raise ConfigError("the record must keep at least an hour (--record-keep)")
        if self.batch_size < 1:
            raise ConfigError("batch size must be at least 1")
        if not 0 < self.lease_margin < self.lease / 2:
            raise ConfigError("the lease margin must be positive and less than half the lease")
        if not 0 < self.heartbeat_interval <= (self.lease - self.lease_margin) / 4:
            raise ConfigError(
                "the heartbeat interval must be positive and at most a quarter of lease - margin"
            )
