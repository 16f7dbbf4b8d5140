"""Panel 6: registered worker processes and whether they are alive.

A process that restarts its engine (the console's embedded engine, toggled with
``e``) registers a new worker each time: an engine never takes over another's
identity, since its metric totals are absolute per owner and a crashed one's jobs
must stay with the registration that holds them. The panel shows such a process
once: a registration that stopped cleanly is left out when a newer one of the same
process (host and pid) is listed. A stopped one is kept while it is that process's
newest, and any that did not stop cleanly (gone, unresponsive) always shows.
The title says how many earlier registrations it leaves out.

A worker past its lease (gone, unresponsive, stopped) is listed after the live ones
and leaves the list once it has been silent for :data:`GONE_LISTED_S` (2 minutes),
unless it still holds jobs (then they are hung, and it stays); the title counts the
ones it leaves out. The tab counts the alive workers only, so a dead one leaves the
count at once; it turns red, as the in-flight tab does for a hung job, when a type has
ready jobs and no live worker runs it (:attr:`Snapshot.unserved`: what ``skconsole
check`` warns of), and the title names those types.
"""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.core.durations import format_limit
from skconsole.core.states import WorkerState
from skconsole.read import WorkerInfo
from skconsole.tui.model import Snapshot
from skconsole.tui.opening import Opening, OpenKind
from skconsole.tui.widgets.panel import Panel, console_columns
from skconsole.views.workers import COLUMNS, summary

#: a worker past its lease and silent this long leaves the list (unless it holds jobs)
GONE_LISTED_S = 120.0


def current_workers(workers: Sequence[WorkerInfo]) -> list[WorkerInfo]:
    """``workers`` less the cleanly stopped registrations of a process (host, pid)
    that registered again since: its engine was restarted."""
    newest: dict[tuple[str, int], WorkerInfo] = {}
    for w in workers:
        seen = newest.get((w.host, w.pid))
        if seen is None or w.started_at > seen.started_at:
            newest[(w.host, w.pid)] = w
    return [
        w for w in workers if w.state is not WorkerState.STOPPED or newest[(w.host, w.pid)] is w
    ]


def long_gone(w: WorkerInfo) -> bool:
    """Past its lease, silent for :data:`GONE_LISTED_S` and holding no job: no longer listed."""
    return w.state.lease_lapsed and w.heartbeat_age_s > GONE_LISTED_S and w.in_flight == 0


def listed_workers(workers: Sequence[WorkerInfo]) -> list[WorkerInfo]:
    """The workers the panel lists: :func:`current_workers` less the long gone, those past
    their lease after the others."""
    shown = [w for w in current_workers(workers) if not long_gone(w)]
    return sorted(shown, key=lambda w: w.state.lease_lapsed)


def _types(task_types: Sequence[str]) -> str:
    return f"{len(task_types)} {'type' if len(task_types) == 1 else 'types'} no worker"


class WorkersPanel(Panel):
    scope = "workers"
    title = "Workers"
    skconsole_tables_only = True
    COLUMNS = console_columns(COLUMNS)
    opens = "the jobs the worker runs (the in-flight panel, filtered)"

    def items(self, snapshot: Snapshot) -> Sequence[WorkerInfo]:
        return listed_workers(snapshot.workers)

    def row_key(self, item: WorkerInfo) -> str:
        return str(item.worker_id)

    def opening(self, key: str, snapshot: Snapshot) -> Opening | None:
        worker = next((w for w in snapshot.workers if str(w.worker_id) == key), None)
        if worker is None:
            return None
        return Opening(OpenKind.FILTER, f"{worker.host} pid {worker.pid}", panel="inflight")

    def tab_note(self, snapshot: Snapshot) -> str | None:
        """The alive workers ("3"); with types no live worker runs, how many ("0 · 2 types
        no worker")."""
        alive = f"{sum(1 for w in snapshot.workers if w.alive):,}"
        unserved = snapshot.unserved
        return f"{alive} · {_types(unserved)}" if unserved else alive

    def brief_note(self, snapshot: Snapshot) -> str | None:
        return f"{sum(1 for w in snapshot.workers if w.alive):,}"

    def alarm(self, snapshot: Snapshot) -> bool:
        return bool(snapshot.unserved)

    def summarize(self, snapshot: Snapshot) -> str:
        current = current_workers(snapshot.workers)
        shown = listed_workers(snapshot.workers)
        restarted = len(snapshot.workers) - len(current)
        gone = len(current) - len(shown)
        parts = [summary(shown)]
        if gone:
            parts.append(f"{gone} silent over {format_limit(GONE_LISTED_S)} not listed")
        if restarted:
            parts.append(f"{restarted} replaced by a restart (hidden)")
        unserved = snapshot.unserved
        if unserved:
            parts.append(f"no live worker runs {', '.join(unserved)}")
        return " · ".join(parts)
