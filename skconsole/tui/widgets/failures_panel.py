"""Panel 3: failed jobs grouped by normalized error signature; Enter drills in."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.tui.formatting import fmt_ago, fmt_int
from skconsole.tui.model import FailureGroup, Snapshot
from skconsole.tui.widgets.keyed_table import Column, Row
from skconsole.tui.widgets.panel import Panel


def statuses_text(group: FailureGroup) -> str:
    return ", ".join(f"{name} {n:,}" for name, n in group.statuses)


class FailuresPanel(Panel):
    scope = "failures"
    title = "Failure groups"
    number = 3
    COLUMNS = (
        Column("signature", "error signature", 41, flex=True),
        Column("count", "jobs", 7, right=True),
        Column("types", "types", 16),
        Column("statuses", "statuses", 20),
        Column("first", "first seen", 10, right=True),
        Column("last", "last seen", 10, right=True),
    )

    def rows(self, snapshot: Snapshot) -> Sequence[Row]:
        now = snapshot.taken_at
        return [
            (
                g.key,
                (
                    (g.signature, "bad"),
                    fmt_int(g.count),
                    ", ".join(g.task_types),
                    statuses_text(g),
                    fmt_ago(g.first_seen, now, suffix=False),
                    fmt_ago(g.last_seen, now, suffix=False),
                ),
            )
            for g in snapshot.failures
        ]

    def summarize(self, snapshot: Snapshot) -> str:
        return f"{len(snapshot.failures):,} groups · {snapshot.failed_jobs:,} jobs"

    def group(self, key: str | None, snapshot: Snapshot | None) -> FailureGroup | None:
        if key is None or snapshot is None:
            return None
        return next((g for g in snapshot.failures if g.key == key), None)
