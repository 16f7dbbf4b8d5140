"""The overview of several queues in the fixed scene: the busy queue of
:func:`~.fixed_data.fixed_snapshot`, a quiet one, and (in the scene) one that is down."""

from __future__ import annotations

from dataclasses import replace

from skconsole.check.verdict import Models
from skconsole.core.status import JobStatus
from skconsole.read import Inflight, StatusCounts, health
from skconsole.read.flow import WINDOW_S, TypeFlow
from skconsole.tui.model import QueueOverview, Snapshot
from skconsole.tui.showcase.fixed_data import fixed_snapshot, fixed_worker
from skconsole.tui.showcase.fixed_health import REPLICATION, fixed_health
from skconsole.tui.showcase.frozen import FROZEN_AT

#: the queues of the overview scene: the busy queue above, a quiet one, one that is down
FIXED_QUEUES = ("payments", "emails", "search")


def fixed_flows(snapshot: Snapshot) -> tuple[TypeFlow, ...]:
    """The depth rows as the flow read model has them (what check judges)."""
    return tuple(
        TypeFlow(
            task_type=d.task_type,
            window_s=WINDOW_S,
            arrivals=d.finished,
            completions=d.finished - d.failed,
            ready=d.ready,
            ready_estimated=d.estimated,
            oldest_ready_s=d.oldest_ready_s,
            slo_max_wait_s=d.slo_s,
            paused=d.paused,
            failures=d.failed,
            slo_max_failure_rate=d.max_failure_rate,
        )
        for d in snapshot.depth
    )


def fixed_overview() -> QueueOverview:
    """The busy queue of :func:`fixed_snapshot` as the overview reads it and check judges it."""
    snap = fixed_snapshot()
    models = Models(
        fixed_flows(snap),
        Inflight(list(snap.inflight), len(snap.inflight), snap.hung_count),
        snap.workers,
        fixed_health(),
        snap.schedules,
        REPLICATION,
    )
    return QueueOverview(models, models.evaluate(), snap.statuses, snap.taken_at, read_ms=64.0)


def fixed_quiet_overview() -> QueueOverview:
    """A queue where all is well: two types kept well within their SLO by two workers."""
    flows = (
        TypeFlow("emails.digest", WINDOW_S, 40, 41, 3, False, 0.8, 60.0, False),
        TypeFlow("emails.send", WINDOW_S, 1_310, 1_302, 12, False, 1.6, 30.0, False, failures=2),
    )
    served = ("emails.digest", "emails.send")
    workers = (
        fixed_worker(911, "mail-1", 1200, "alive", 0.6, 20, 4, served),
        fixed_worker(912, "mail-2", 1204, "alive", 1.1, 20, 3, served),
    )
    # the busy queue's tables, with nothing holding the horizon, waiting or hidden
    calm = replace(
        fixed_health(),
        horizon=health.Horizon(None, None, None, [], [], []),
        lock_waits=[],
        blockers=[],
        advice=[],
        hidden=[],
    )
    models = Models(flows, Inflight([], 7, 0), workers, calm, (), REPLICATION)
    statuses = StatusCounts(
        {
            int(JobStatus.UNPROCESSED): 15,
            int(JobStatus.PROCESSING): 7,
            int(JobStatus.PROCESSED): 2_481_930,
            int(JobStatus.ERROR): 1,
            int(JobStatus.FAULTED): 2,
            int(JobStatus.FATAL): 0,
            int(JobStatus.CANCELLED): 14,
        },
        (int(JobStatus.PROCESSED),),
    )
    return QueueOverview(
        models, models.evaluate(), statuses, FROZEN_AT.timestamp() - 1.0, read_ms=22.0
    )
