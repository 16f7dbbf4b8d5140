"""Self-fencing: a worker whose lease could not be renewed for ``lease - margin``
stops every job it runs, before any other worker may reap and run them
(``lease + margin``), and claims nothing until the lease is renewed again.

A handler that will not stop (a sync one that ignores ``JobContext.stop``, an
async one that swallows its cancellation) could then overlap with its next
attempt elsewhere: an engine that owns its process ends the process just
before the lease lapses, taking the handler along (exit code EXIT_FENCED).

After a failover the database may have lost some of the worker's claims while
it kept others: the runs of the lost ones are stopped the same way
(:meth:`Fence.stop_lost`), before the renewal that found the new timeline
counts, and the process ends by the old lease's deadline if one will not stop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

from skconsole.worker.jobs import JobRun
from skconsole.worker.lease import Lease
from skconsole.worker.metrics import MetricsBuffer

log = logging.getLogger("skconsole.worker")

#: exit code of a worker process that ended itself because a handler would not
#: stop before its lease lapsed (see WorkerConfig.own_process)
EXIT_FENCED = 75


@dataclass(eq=False)
class Fence:
    """Raised by :meth:`engage` when the lease lapses (LeaseKeeper.on_expired), lifted
    by :meth:`lift` once it is renewed (on_renewed); ``runs`` is the engine's."""

    lease: Lease
    runs: dict[int, JobRun]
    metrics: MetricsBuffer
    _: KW_ONLY
    own_process: bool
    on_lifted: Callable[[], None]
    fenced: bool = field(default=False, init=False)
    _exit: asyncio.TimerHandle | None = field(default=None, init=False)
    _lost_exit: asyncio.TimerHandle | None = field(default=None, init=False)

    def engage(self) -> None:
        """The lease could not be renewed for lease - margin: stop every running job
        now, before any other worker may reap and run it (lease + margin)."""
        self.fenced = True
        self.metrics.add("worker@self-fence-count")
        runs = list(self.runs.values())
        log.error(
            "lease not renewed for %.1fs: stopping this worker's %d running job(s) before "
            "others may take them over, and claiming nothing until it is renewed",
            self.lease.age(),
            len(runs),
        )
        for run in runs:
            run.stop("fence")
        self._exit = self._exit_unless_stopped(runs, lambda: self.fenced)

    def stop_lost(self, runs: list[JobRun], timeline: int) -> None:
        """A failover lost these runs' claims: the new primary may hand their jobs out
        again once its hold ends. Stop them now; if one will not stop, the process
        ends when the lease the worker last renewed before the failover lapses
        (the hold lasts longer). Call it before that renewal counts."""
        if not runs:
            return
        self.metrics.add("worker@failover-stopped-count", len(runs))
        log.error(
            "the database is on timeline %d and has lost the claims of %d job(s) this worker "
            "runs (a failover lost the old primary's last writes): stopping them before the "
            "new primary may hand them out again; their results will be ignored",
            timeline,
            len(runs),
        )
        for run in runs:
            run.stop("fence")
        self._lost_exit = self._exit_unless_stopped(runs, lambda: True)

    def _exit_unless_stopped(
        self, runs: list[JobRun], still_needed: Callable[[], bool]
    ) -> asyncio.TimerHandle | None:
        """Just before the lease lapses, end the process if one of ``runs`` still runs
        and ``still_needed()`` (the fence was not lifted meanwhile)."""
        if not (self.own_process and runs):
            return None
        delay = max(0.0, self.lease.deadline - time.monotonic())
        return asyncio.get_running_loop().call_later(delay, self._exit_if_stuck, runs, still_needed)

    def _exit_if_stuck(self, runs: list[JobRun], still_needed: Callable[[], bool]) -> None:
        """The lease is about to lapse: a handler still running now could overlap
        with its next attempt elsewhere, so the process ends and takes it along."""
        stuck = [
            r
            for r in runs
            if r.thread_alive or (r.is_async and r.task is not None and not r.task.done())
        ]
        if not still_needed() or not stuck:
            return
        log.critical(
            "lease lapsing while %d handler(s) still run (a sync handler that ignores "
            "JobContext.stop, or an async one that ignores cancellation): ending the process "
            "so that they end with it (exit code %d)",
            len(stuck),
            EXIT_FENCED,
        )
        logging.shutdown()
        os._exit(EXIT_FENCED)

    def lift(self) -> None:
        self.fenced = False
        self.cancel_exit()
        log.warning("lease renewed again; claiming again")
        self.on_lifted()

    def cancel_exit(self, *, lost_too: bool = False) -> None:
        """No exit pending any more: the lease was renewed (an exit for runs a failover
        lost stays: their claims are gone whatever the lease does), or the engine
        stopped (``lost_too``)."""
        for handle in (self._exit, self._lost_exit if lost_too else None):
            if handle is not None:
                handle.cancel()
        self._exit = None
        if lost_too:
            self._lost_exit = None
