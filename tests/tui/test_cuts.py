"""On-call at 3 AM (issue 24): what a column cuts still tells groups apart and says it was cut.

Fixed data, at 120x40 and 200x50: two failure groups of one deeply named exception type
differ only in the partner URL of their messages; a task type is longer than any
column. The drill-down's rows say the group's signature once (its header), not per job.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest

from skconsole.core.status import JobStatus
from skconsole.tui.app import ConsoleApp
from skconsole.tui.model import DepthRow, FailureGroups, Snapshot
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import FROZEN_AT, GROUPS, FrozenClock
from skconsole.tui.showcase.scenes import settle
from skconsole.tui.widgets.depth_panel import DepthPanel
from skconsole.tui.widgets.failures_panel import FailuresPanel
from skconsole.tui.widgets.inflight_panel import InflightPanel
from skconsole.tui.widgets.jobs_panel import JobsPanel
from skconsole.tui.widgets.panel import Panel
from tests.tui.test_hostile_text import drawn_lines

SIZES = [(120, 40), (200, 50)]
EXC = "Company.Platform.Payments.Gateway.PartnerIntegrations.Partners.Exceptions.PartnerDeclinedException"
BY_A = f"{EXC}: declined by https://acq-a.example<path>"
BY_B = f"{EXC}: declined by https://acq-b.example<path>"
LONG_TYPE = (
    "com.example.fulfilment.warehouse.eu_central.orders"
    ".validate_and_reserve_stock_with_partner_carriers"
)


class CutSource(FixedSource):
    """The fixed scene, with two groups of one type and a task type longer than a column."""

    def snapshot(self) -> Snapshot:
        snap = super().snapshot()
        return replace(
            snap, depth=(*snap.depth, DepthRow(LONG_TYPE, 3, 0, 0, 1.0, False, (0,) * 30))
        )

    def failure_groups(self) -> FailureGroups:
        groups = tuple(
            replace(GROUPS[1], signature=sig, statuses={JobStatus.FATAL: n}, count=n)
            for sig, n in ((BY_A, 342), (BY_B, 97))
        )
        return FailureGroups(groups, taken_at=FROZEN_AT.timestamp(), read_ms=1.0)


def console(source: FixedSource) -> ConsoleApp:
    app = ConsoleApp(source, clock=FrozenClock(), auto_refresh=False, actor="t")
    app.animation_level = "none"
    return app


def panel_text(app: ConsoleApp, panel: type[Panel]) -> list[str]:
    region = app.screen.query_one(panel).region
    return [line[region.x : region.right] for line in drawn_lines(app)[region.y : region.bottom]]


async def failure_rows(size: tuple[int, int]) -> list[str]:
    app = console(CutSource())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        return [line for line in panel_text(app, FailuresPanel) if "PartnerDeclined" in line]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_two_groups_of_one_exception_type_read_apart(size: tuple[int, int]) -> None:
    first, second = await failure_rows(size)

    assert "acq-a" in first and "acq-b" in second


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_partner_url_of_a_signature_is_visible(size: tuple[int, int]) -> None:
    first, _ = await failure_rows(size)

    assert "declined by https://acq-a.example" in first


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_type_name_too_long_for_its_column_ends_with_an_ellipsis(
    size: tuple[int, int],
) -> None:
    app = console(CutSource())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        text = "\n".join(panel_text(app, DepthPanel))

    assert LONG_TYPE not in text
    assert re.search(re.escape(LONG_TYPE[:8]) + r"[\w.]*…", text), text


async def test_at_200_columns_the_in_flight_types_and_workers_are_whole() -> None:
    """The type and worker columns take spare width the state column does not need."""
    app = console(FixedSource())
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        text = "\n".join(panel_text(app, InflightPanel))

    assert "webhooks.deliver " in text and "batch-2 pid 3310 " in text


async def test_the_group_job_list_says_the_signature_once_and_each_job_what_differs() -> None:
    app = console(FixedSource())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("3", "enter")
        await settle(pilot)
        screen: Any = app.screen
        assert isinstance(screen, GroupJobsScreen)
        header = str(screen.header.render())
        rows = panel_text(app, JobsPanel)[2:-1]  # below the border and the column labels

    assert header.count("UpstreamTimeout: timeout after") == 1
    assert not any("UpstreamTimeout" in row for row in rows)
    assert "…48213s calling https://api.partner.example" in rows[0]
    assert "…48220s calling https://api.partner.example" in rows[1]
