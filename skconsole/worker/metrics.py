"""App metrics and execution-time stats, kept in memory and written in batches.

Ids and categories are Stakhanovise.NET's, so a console reading its tables
sees both kinds of worker the same way. Values are added as deltas per owner
process id, so restarts and several processes sharing one id just add up.
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
    "queue-consumer@total-dequeue-duration": "task-queue-consumer",
    "listener@task-notification-count": "task-queue-notification-listener",
    "listener@reconnect-count": "task-queue-notification-listener",
    "result-queue@result-writes-count": "task-result-queue",
    "reaper@reaped-count": "task-reaper",
    "retention@purged-count": "task-retention",
    "worker@handed-back-count": "task-worker",
    "worker@self-fence-count": "task-worker",
    "worker@stopped-by-fence-count": "task-worker",
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
    counters: dict[str, int] = field(default_factory=dict)
    times: dict[str, _TypeTimes] = field(default_factory=dict)

    def add(self, metric_id: str, delta: int = 1) -> None:
        if metric_id not in CATEGORIES:
            raise KeyError(metric_id)
        self.counters[metric_id] = self.counters.get(metric_id, 0) + delta

    def execution_time(self, task_type: str, ms: int) -> None:
        self.times.setdefault(task_type, _TypeTimes()).add(ms)

    def take(self) -> MetricsBuffer:
        """Hand over what was gathered and start afresh (put it back if the write fails)."""
        out = MetricsBuffer(self.counters, self.times)
        self.counters, self.times = {}, {}
        return out

    def merge(self, other: MetricsBuffer) -> None:
        for k, v in other.counters.items():
            self.counters[k] = self.counters.get(k, 0) + v
        for t, tt in other.times.items():
            mine = self.times.setdefault(t, _TypeTimes())
            mine.n += tt.n
            mine.total += tt.total
            mine.fastest = min(mine.fastest, tt.fastest)
            mine.longest = max(mine.longest, tt.longest)
            mine.last = tt.last

    def metric_params(self, owner: str) -> dict[str, object] | None:
        # in one order for every writer: workers of a host share an owner id and
        # write the same rows; in dict order two final flushes could deadlock
        items = sorted((k, v) for k, v in self.counters.items() if v)
        if not items:
            return None
        return {
            "owner": owner,
            "ids": [k for k, _ in items],
            "categories": [CATEGORIES[k] for k, _ in items],
            "deltas": [v for _, v in items],
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
