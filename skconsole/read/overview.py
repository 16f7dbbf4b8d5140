"""The overview of ``skconsole status``: depth, jobs per status and workers in one read.

Its JSON is a documented, stable shape (docs/reference/json.md), so it is built here, once, for
the CLI and any script.
"""

from __future__ import annotations

from dataclasses import dataclass

from skconsole.core.json_types import JsonObject
from skconsole.core.status import JobStatus
from skconsole.read.depth import Depth, depth
from skconsole.read.query import Conn, fetch
from skconsole.read.statuses import StatusCounts, status_summary
from skconsole.read.workers import WorkerInfo, workers


@dataclass(frozen=True)
class Overview:
    server_version: str | None
    depth: Depth
    statuses: StatusCounts
    workers: list[WorkerInfo]

    def as_dict(self) -> JsonObject:
        counts = self.statuses.counts
        return {
            "server_version": self.server_version,
            "depth": self.depth.as_dict(),
            "statuses": {
                JobStatus.label_of(s): counts.get(s, 0)
                for s in sorted({int(s) for s in JobStatus} | set(counts))
            },
            "workers": [w.as_dict() for w in self.workers],
            "oldest_ready_s": self.depth.oldest_ready_s,
            "estimated": {
                "depth": self.depth.estimated,
                "statuses": [JobStatus.label_of(s) for s in self.statuses.estimated],
            },
        }


def server_version(conn: Conn) -> str | None:
    """The server's version, as the status bar and ``status --json`` show it."""
    rows = fetch(conn, "server_version", lambda server_version: server_version)
    return str(rows[0]) if rows else None


def overview(conn: Conn) -> Overview:
    """Queue depth, jobs per status and the workers, read one after the other."""
    d = depth(conn)
    summary = status_summary(conn)
    return Overview(server_version(conn), d, summary, workers(conn))
