"""The failure groups have a cadence of their own: read once the first snapshot is on
screen, not on every refresh, again at once on entering their panel, after an
action and on "refresh now", and shown with their age; a group's jobs follow them.
On fixed data (no database): the sources count their reads."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace

import pytest

from skconsole.read import GroupJobs
from skconsole.tui import cadences
from skconsole.tui.app import ConsoleApp
from skconsole.tui.model import FailureGroups, Snapshot
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.requeue_jobs import RequeueJobsScreen
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import FrozenClock, fixed_snapshot
from skconsole.tui.showcase.scenes import settle
from skconsole.tui.widgets.depth_panel import DepthPanel
from skconsole.tui.widgets.failures_panel import FailuresPanel
from tests.tui.conftest import SIZE, until


@dataclass
class CountingSource(FixedSource):
    """Fixed data read at the console's clock, counting the reads of each cadence."""

    clock: FrozenClock = field(default_factory=FrozenClock)
    snapshots: int = 0
    groups_read: int = 0
    jobs_read: int = 0
    #: when set, failure_groups() waits for it (a slow read)
    release: threading.Event | None = None

    def snapshot(self) -> Snapshot:
        self.snapshots += 1
        return replace(super().snapshot(), taken_at=self.clock())

    def failure_groups(self) -> FailureGroups:
        if self.release is not None:
            self.release.wait(30)
        self.groups_read += 1
        return replace(super().failure_groups(), taken_at=self.clock())

    def group_jobs(self, signature: str, limit: int) -> GroupJobs:
        self.jobs_read += 1
        return super().group_jobs(signature, limit)


def _title(app: ConsoleApp) -> str:
    return str(app.main_screen.query_one(FailuresPanel).border_title)


@pytest.fixture
def slow_cadence(monkeypatch: pytest.MonkeyPatch) -> None:
    """No failure-groups read comes from their timer during a test."""
    monkeypatch.setattr(cadences, "FAILURES_EVERY_S", 3600.0)


async def test_failure_groups_are_not_read_on_every_refresh(slow_cadence: None) -> None:
    source = CountingSource()
    app = ConsoleApp(source, clock=source.clock, refresh_interval=0.5, actor="tester")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refresh_count >= 4)
        assert source.snapshots >= 4
        assert source.groups_read == 1  # once, after the first snapshot was shown
        assert app.snapshot is not None and len(app.snapshot.failures) == 6
        assert app.main_screen.query_one(FailuresPanel).table.total_rows == 6


async def test_failure_groups_are_read_again_on_demand(slow_cadence: None) -> None:
    source = CountingSource()
    app = ConsoleApp(source, clock=source.clock, auto_refresh=False, actor="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert source.groups_read == 1
        app.request_refresh()  # a refresh alone leaves them alone
        await settle(pilot)
        assert (source.snapshots, source.groups_read) == (2, 1)
        await pilot.press("2", "3")  # entering their panel: only fresh ones are kept
        await settle(pilot)
        assert source.groups_read == 1
        source.clock.advance(cadences.FAILURES_FRESH_S)
        await pilot.press("2", "3")
        await settle(pilot)
        assert source.groups_read == 2
        await pilot.press("r")  # refresh now: every cadence
        await settle(pilot)
        assert source.groups_read == 3
        await pilot.press("R")  # after an operator action: its dialog, then yes
        await until(pilot, lambda: isinstance(app.screen, RequeueJobsScreen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot)
        await until(pilot, lambda: len(source.executed) == 1)
        await settle(pilot)
        assert source.groups_read == 4


async def test_the_failures_title_says_how_old_the_groups_are(slow_cadence: None) -> None:
    source = CountingSource()
    app = ConsoleApp(source, clock=source.clock, auto_refresh=False, actor="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert _title(app).endswith("6 groups · 1,783 jobs · as of 0s ago")
        source.clock.advance(8)
        app.request_refresh()
        await settle(pilot)
        assert source.groups_read == 1
        assert _title(app).endswith("as of 8s ago")
        await pilot.press("r")
        await settle(pilot)
        assert _title(app).endswith("as of 0s ago")


async def test_the_first_paint_does_not_wait_for_the_failure_groups(
    slow_cadence: None,
) -> None:
    source = CountingSource(release=threading.Event())
    app = ConsoleApp(source, clock=source.clock, auto_refresh=False, actor="tester")
    async with app.run_test(size=SIZE) as pilot:
        failures = app.main_screen.query_one(FailuresPanel)
        depth = app.main_screen.query_one(DepthPanel)
        await until(pilot, lambda: depth.table.total_rows == len(fixed_snapshot().depth))
        assert source.groups_read == 0
        assert failures.loading and failures.table.total_rows == 0
        assert "reading…" in _title(app)
        assert source.release is not None
        source.release.set()
        await until(pilot, lambda: failures.table.total_rows == 6)
        assert not failures.loading
        assert "as of 0s ago" in _title(app)


async def test_a_groups_jobs_are_read_again_with_the_groups_not_every_refresh(
    slow_cadence: None,
) -> None:
    source = CountingSource()
    app = ConsoleApp(source, clock=source.clock, auto_refresh=False, actor="tester")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, GroupJobsScreen) and source.jobs_read == 1
        app.request_refresh()
        await settle(pilot)
        assert source.snapshots == 2 and source.jobs_read == 1
        await pilot.press("r")  # the failure groups too
        await settle(pilot)
        assert source.groups_read == 2 and source.jobs_read == 2
