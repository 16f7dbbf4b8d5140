"""Counts the console estimates (a sampled queue, the planner's status counts) are
shown as estimates: "≈", on fixed data (no database)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from textual.widgets import Label

from skconsole.core.status import JobStatus
from skconsole.read import StatusCounts
from skconsole.tui.app import ConsoleApp
from skconsole.tui.model import Snapshot
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import FrozenClock
from skconsole.tui.showcase.scenes import settle
from skconsole.tui.widgets.depth_panel import DepthPanel
from tests.tui.conftest import SIZE


@dataclass
class EstimatingSource(FixedSource):
    """The fixed data as a big queue gives it: depth sampled, two statuses estimated."""

    def snapshot(self) -> Snapshot:
        snap = super().snapshot()
        counts = dict(snap.statuses.counts)
        counts[JobStatus.PROCESSED] = 3_873_934
        return replace(
            snap,
            depth=tuple(replace(d, estimated=True) for d in snap.depth),
            statuses=StatusCounts(counts, (JobStatus.UNPROCESSED, JobStatus.PROCESSED)),
        )


async def test_estimated_counts_are_marked_as_estimates() -> None:
    app = ConsoleApp(EstimatingSource(), clock=FrozenClock(), auto_refresh=False, actor="t")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        statuses = str(app.main_screen.query_one("#tp-statuses", Label).render())
        assert "Processed ≈3.87M" in statuses and "Error 1,285" in statuses
        depth = app.main_screen.query_one(DepthPanel)
        assert "· ≈6.78k ready · ≈1.34k scheduled" in str(depth.border_title)
        assert str(depth.border_title).endswith("· sampled")
        assert depth.table.get_row("emails.send")[1].plain == "≈1.2k"
        waiting = str(app.main_screen.query_one("#tp-waiting-label", Label).render())
        assert waiting.startswith("waiting ≈")


async def test_exact_counts_are_shown_in_full() -> None:
    app = ConsoleApp(FixedSource(), clock=FrozenClock(), auto_refresh=False, actor="t")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        statuses = str(app.main_screen.query_one("#tp-statuses", Label).render())
        assert "Processed 339,191" in statuses and "≈" not in statuses
        depth = app.main_screen.query_one(DepthPanel)
        assert "≈" not in str(depth.border_title)
