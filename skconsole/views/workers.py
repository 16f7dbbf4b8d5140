"""The workers view: registered worker processes and their liveness.

The console's workers panel, ``skconsole status workers`` and the overview's
workers table draw these columns; a state's tone is decided here once, from
:class:`~skconsole.core.states.WorkerState`.
"""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.core.durations import format_age
from skconsole.core.json_types import JsonObject
from skconsole.core.states import WorkerState
from skconsole.read import WorkerInfo, workers
from skconsole.read.query import Conn
from skconsole.views.registry import Table, View, ViewArgs
from skconsole.views.table import Column, Face, Tone, figure_column

TONES: dict[WorkerState, Tone] = {
    WorkerState.ALIVE: "good",
    WorkerState.CONNECTION_LOST: "warn",
    WorkerState.LEASE_EXPIRING: "warn",
    WorkerState.UNRESPONSIVE: "bad",
    WorkerState.GONE: "bad",
    WorkerState.STOPPED: "muted",
}

COLUMNS: tuple[Column[WorkerInfo], ...] = (
    Column("worker", "worker", 8, cell=lambda w, _: str(w.worker_id), ident=True),
    Column("host", "host", 18, cell=lambda w, _: w.host, priority=4),
    figure_column("pid", 8, lambda w, _: str(w.pid), priority=5),
    Column("app_version", "version", 10, cell=lambda w, _: w.app_version or "-", priority=6),
    Column("state", "state", 15, cell=lambda w, _: (w.state.value, TONES[w.state]), priority=1),
    Column(
        "started",
        "started",
        cell=lambda w, _: w.started_at.strftime("%Y-%m-%d %H:%M:%S"),
        priority=7,
        faces=Face.CLI,
    ),
    figure_column("heartbeat", 10, lambda w, _: format_age(w.heartbeat_age_s), priority=2),
    figure_column("concurrency", 6, lambda w, _: str(w.concurrency), label="slots", priority=6),
    figure_column("in_flight", 9, lambda w, _: str(w.in_flight), label="in flight", priority=3),
    Column(
        "types",
        "types",
        20,
        flex=True,
        cell=lambda w, _: ", ".join(w.task_types),
        min_width=12,
    ),
)


def summary(ws: Sequence[WorkerInfo]) -> str:
    """ "3 alive · 1 not answering"."""
    alive = sum(1 for w in ws if w.alive)
    trouble = sum(1 for w in ws if w.state.trouble)
    text = f"{alive} alive"
    return f"{text} · {trouble} not answering" if trouble else text


def _json(ws: list[WorkerInfo]) -> JsonObject:
    return {"workers": [w.as_dict() for w in ws]}


def _read(conn: Conn, args: ViewArgs) -> list[WorkerInfo]:
    return workers(conn)


WORKERS: View[list[WorkerInfo]] = View(
    "workers", _read, _json, Table(COLUMNS, lambda ws: ws, lambda ws: "Workers")
)
