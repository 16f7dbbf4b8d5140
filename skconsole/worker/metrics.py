"""App metrics and execution-time stats, kept in memory and written in batches.

Ids and categories are Stakhanovise.NET's, and so is the way they are
written: each process upserts its own totals since it started under an owner
id of its own, so a console reading the tables sees both kinds of worker the
same way (the sum over owners).
"""

from __future__ import annotations

from dataclasses import dataclass, field

CATEGORIES = {
    "worker@processed-payload-count": "task-worker",
    "worker@successful-processed-payload-count": "task-worker",
    "worker@failed-processed-payload-count": "task-worker",
    "worker@total-processing-time": "task-worker",
    "worker@fenced-result-count": "task-worker",
    "poller@dequeue-count": "task-poller",
    "poller@dequeue-round-trips": "task-poller",
    "poller@refused-claim-count": "task-poller",
    "queue-consumer@total-dequeue-duration": "task-queue-consumer",
    "listener@task-notification-count": "task-queue-notification-listener",
    "listener@reconnect-count": "task-queue-notification-listener",
    "result-queue@result-writes-count": "task-result-queue",
    "reaper@reaped-count": "task-reaper",
    "reaper@refused-count": "task-reaper",
    "retention@purged-count": "task-retention",
    "worker@handed-back-count": "task-worker",
    "worker@self-fence-count": "task-worker",
    "worker@stopped-by-fence-count": "task-worker",
    "worker@failover-count": "task-worker",
    "worker@failover-stopped-count": "task-worker",
    "worker@cancel-request-count": "task-worker",
    "worker@cancelled-count": "task-worker",
    "result-queue@deferred-result-count": "task-result-queue",
    "result-queue@result-write-error-count": "task-result-queue",
}


@dataclass
class _TypeTimes:
    n: int = 0
    total: int = 0
    fastest: int = 2**62
    longest: int = 0
    last: int = 0

    def add(self, ms: int) -> None:
        self.n += 1
        self.total += ms
        self.fastest = min(self.fastest, ms)
        self.longest = max(self.longest, ms)
        self.last = ms


@dataclass
class MetricsBuffer:
    """This process's totals since it started, written as they are (absolute), the way
    Stakhanovise.NET writes its own: one row per metric and owner process, so a
    reader sums the rows of every process, ours and .NET ones alike. Rewriting a
    total is idempotent, so a write whose answer was lost is simply written again."""

    counters: dict[str, int] = field(default_factory=dict)
    times: dict[str, _TypeTimes] = field(default_factory=dict)
    #: changed since the last write that succeeded
    dirty: bool = False

    def add(self, metric_id: str, delta: int = 1) -> None:
        if metric_id not in CATEGORIES:
            raise KeyError(metric_id)
        self.counters[metric_id] = self.counters.get(metric_id, 0) + delta
        self.dirty = True

    def execution_time(self, task_type: str, ms: int) -> None:
        self.times.setdefault(task_type, _TypeTimes()).add(ms)
        self.dirty = True

    def metric_params(self, owner: str) -> dict[str, object] | None:
        items = sorted((k, v) for k, v in self.counters.items() if v)
        if not items:
            return None
        return {
            "owner": owner,
            "ids": [k for k, _ in items],
            "categories": [CATEGORIES[k] for k, _ in items],
            "values": [v for _, v in items],
        }

    def time_params(self, owner: str) -> dict[str, object] | None:
        if not self.times:
            return None
        types = sorted(self.times)
        t = [self.times[x] for x in types]
        return {
            "owner": owner,
            "types": types,
            "n": [x.n for x in t],
            "last_ms": [x.last for x in t],
            "fastest_ms": [x.fastest for x in t],
            "longest_ms": [x.longest for x in t],
            "total_ms": [x.total for x in t],
        }
