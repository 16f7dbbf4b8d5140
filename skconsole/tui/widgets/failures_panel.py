"""Panel 3: failed jobs grouped by normalized error signature; Enter drills in."""

from __future__ import annotations

from collections.abc import Sequence

from skconsole.stats import FailureGroup
from skconsole.status import JobStatus
from skconsole.tui.formatting import fmt_ago, fmt_int
from skconsole.tui.model import Snapshot
from skconsole.tui.widgets.keyed_table import Column, Row
from skconsole.tui.widgets.panel import Panel


def statuses_text(group: FailureGroup) -> str:
    """The group's jobs per status, most first: "Error 1,190, Faulted 94"."""
    counts = sorted(((s, n) for s, n in group.statuses.items() if n), key=lambda x: -x[1])
    return ", ".join(f"{JobStatus.label_of(s)} {n:,}" for s, n in counts)


class FailuresPanel(Panel):
    scope = "failures"
    title = "Failure groups"
    short_title = "Failures"
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
                g.signature,
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

    def tab_note(self, snapshot: Snapshot) -> str | None:
        return f"{len(snapshot.failures):,}"

    def alarm(self, snapshot: Snapshot) -> bool:
        return bool(snapshot.failures)

    def summarize(self, snapshot: Snapshot) -> str:
        return f"{len(snapshot.failures):,} groups · {snapshot.failed_jobs:,} jobs"

    def group(self, key: str | None, snapshot: Snapshot | None) -> FailureGroup | None:
        """The group of the row ``key`` (its signature) in ``snapshot``."""
        if key is None or snapshot is None:
            return None
        return next((g for g in snapshot.failures if g.signature == key), None)
