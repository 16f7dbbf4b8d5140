"""Panel 3: failed jobs grouped by normalized error signature; Enter drills in.

The groups are read on a slower cadence than the rest (see ``FAILURES_EVERY_S``
in :mod:`skconsole.tui.app`), so the title says how old they are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import ClassVar

from skconsole.core.status import JobStatus
from skconsole.read import FailureGroup
from skconsole.tui.formatting import fmt_age_s, fmt_ago, fmt_int, shorten_signature
from skconsole.tui.model import Snapshot
from skconsole.tui.opening import Opening, OpenKind
from skconsole.tui.widgets.panel import Panel
from skconsole.views.table import Column, figure_column


def statuses_text(group: FailureGroup) -> str:
    """The group's jobs per status, most first: "Error 1,190, Faulted 94"."""
    counts = sorted(((s, n) for s, n in group.statuses.items() if n), key=lambda x: -x[1])
    return ", ".join(f"{JobStatus.label_of(s)} {n:,}" for s, n in counts)


def _seen(
    key: str, label: str, priority: int, at: Callable[[FailureGroup], datetime | None]
) -> Column[FailureGroup]:
    """When the group's jobs were first or last seen: how long ago, without "ago" (the
    header says "seen")."""
    return figure_column(
        key, 10, lambda g, now: fmt_ago(at(g), now, suffix=False), label=label, priority=priority
    )


class FailuresPanel(Panel):
    scope = "failures"
    title = "Failure groups"
    short_title = "Failures"
    #: The signature takes the spare width: on a narrow terminal first seen, the
    #: statuses, the types and last seen go (in that order) before it is narrower
    #: than ``min_width``; a signature still too wide shortens its module path first,
    #: then its message (shorten_signature), so two groups of one type read apart.
    COLUMNS: ClassVar[tuple[Column[FailureGroup], ...]] = (
        Column(
            "signature",
            "error signature",
            30,
            flex=True,
            min_width=64,
            fit=shorten_signature,
            cell=lambda g, _: (g.signature, "bad"),
        ),
        figure_column("count", 7, lambda g, _: fmt_int(g.count), label="jobs"),
        Column("types", "types", 16, priority=2, cell=lambda g, _: ", ".join(g.task_types)),
        Column("statuses", "statuses", 20, priority=3, cell=lambda g, _: statuses_text(g)),
        _seen("first", "first seen", 4, lambda g: g.first_seen),
        _seen("last", "last seen", 1, lambda g: g.last_seen),
    )
    opens = "the group's jobs"

    def items(self, snapshot: Snapshot) -> Sequence[FailureGroup]:
        return snapshot.failures

    def row_key(self, item: FailureGroup) -> str:
        return item.signature

    def opening(self, key: str, snapshot: Snapshot) -> Opening | None:
        return Opening(OpenKind.GROUP, key)

    def tab_note(self, snapshot: Snapshot) -> str | None:
        return f"{len(snapshot.failures):,}" if self.has_data(snapshot) else None

    def alarm(self, snapshot: Snapshot) -> bool:
        return bool(snapshot.failures)

    def has_data(self, snapshot: Snapshot) -> bool:
        return snapshot.failures_at is not None

    def summarize(self, snapshot: Snapshot) -> str:
        age = snapshot.failures_age_s
        if age is None:
            return "reading…"
        return (
            f"{len(snapshot.failures):,} groups · {snapshot.failed_jobs:,} jobs"
            f" · as of {fmt_age_s(age)} ago"
        )

    def group(self, key: str | None, snapshot: Snapshot | None) -> FailureGroup | None:
        """The group of the row ``key`` (its signature) in ``snapshot``."""
        if key is None or snapshot is None:
            return None
        return next((g for g in snapshot.failures if g.signature == key), None)
