"""Panel 6: registered worker processes and whether they are alive.

A process that restarts its engine (the console's embedded engine, toggled with
``e``) registers a new worker each time: an engine never takes over another's
identity, since its metric totals are absolute per owner and a crashed one's jobs
must stay with the registration that holds them. The panel shows such a process
once: a registration that stopped cleanly is left out when a newer one of the same
process (host and pid) is listed. A stopped one is kept while it is that process's
newest, and any that did not stop cleanly (gone, unresponsive) always shows.
The title says how many earlier registrations it leaves out.
"""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.core.states import WorkerState
from skconsole.read import WorkerInfo
from skconsole.tui.model import Snapshot
from skconsole.tui.opening import Opening, OpenKind
from skconsole.tui.widgets.panel import Panel, console_columns
from skconsole.views.workers import COLUMNS, summary


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


class WorkersPanel(Panel):
    scope = "workers"
    title = "Workers"
    skconsole_tables_only = True
    COLUMNS = console_columns(COLUMNS)
    opens = "the jobs the worker runs (the in-flight panel, filtered)"

    def items(self, snapshot: Snapshot) -> Sequence[WorkerInfo]:
        return current_workers(snapshot.workers)

    def row_key(self, item: WorkerInfo) -> str:
        return str(item.worker_id)

    def opening(self, key: str, snapshot: Snapshot) -> Opening | None:
        worker = next((w for w in snapshot.workers if str(w.worker_id) == key), None)
        if worker is None:
            return None
        return Opening(OpenKind.FILTER, f"{worker.host} pid {worker.pid}", panel="inflight")

    def tab_note(self, snapshot: Snapshot) -> str | None:
        return f"{len(current_workers(snapshot.workers)):,}"

    def summarize(self, snapshot: Snapshot) -> str:
        shown = current_workers(snapshot.workers)
        restarted = len(snapshot.workers) - len(shown)
        text = summary(shown)
        return f"{text} · {restarted} replaced by a restart (hidden)" if restarted else text
