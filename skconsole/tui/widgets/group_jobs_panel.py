"""The jobs of one failure group (the drill-down list): the group's signature is
said once, in the screen's header, so a row's error column shows only what its
job's own error says beyond it (from the word where the two part)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import ClassVar

from skconsole.read import FailedJob
from skconsole.tui.formatting import beyond_signature
from skconsole.tui.widgets.jobs_panel import JobsPanel
from skconsole.tui.widgets.keyed_table import Row
from skconsole.views.table import Cell, Column

SAME: Cell = ("same as the group", "muted")


def _beyond(job: FailedJob) -> Cell:
    """The job's error beyond the group's signature (set by :meth:`GroupJobsPanel.rows_of`)."""
    return job.error_line or SAME


ERROR: Column[FailedJob] = Column(
    "error",
    "error, where it differs from the group",
    44,
    flex=True,
    cell=lambda j, _: _beyond(j),
    min_width=30,
)


class GroupJobsPanel(JobsPanel):
    COLUMNS: ClassVar[tuple[Column[FailedJob], ...]] = tuple(
        ERROR if c.key == "error" else c for c in JobsPanel.COLUMNS
    )

    def __init__(self, signature: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.signature = signature

    def rows_of(self, items: Iterable[FailedJob], now: float) -> list[Row]:
        """The jobs, each error line cut to what it says beyond the group's signature."""
        return super().rows_of(
            (replace(j, error_line=beyond_signature(j.error_line, self.signature)) for j in items),
            now,
        )
