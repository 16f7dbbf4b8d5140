"""A failure group from its drill-down, on fixed data (no database): what its jobs share
(F, a screen of factors), lists that stop at a limit (they say so, m loads more), and
what the requeue keys act on there (R the whole group, O one job, A the jobs shown)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from textual.pilot import Pilot

from skconsole.read.factors import CommonFactors, Factor
from skconsole.tui.app import ConsoleApp
from skconsole.tui.model import TargetKind
from skconsole.tui.refresh import FAILURE_GROUPS_SHOWN
from skconsole.tui.screens import group_jobs
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.factors import FactorsScreen
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.requeue_jobs import RequeueJobsScreen
from skconsole.tui.screens.search import SearchScreen
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import GROUPS, FrozenClock, fixed_snapshot
from skconsole.tui.showcase.scenes import settle
from skconsole.tui.widgets.failures_panel import FailuresPanel
from skconsole.views.factors import NO_SEARCH
from tests.tui.conftest import SIZE, notices, shown_screen, until
from tests.tui.test_hostile_text import assert_nothing_raw

GROUP = GROUPS[0]  # the drill-down Enter opens on panel 3's first row


def fixed_app() -> ConsoleApp:
    return ConsoleApp(
        FixedSource(), clock=FrozenClock(), refresh_interval=0.5, auto_refresh=False, actor="t"
    )


async def _group_jobs(pilot: Pilot[Any]) -> GroupJobsScreen:
    await settle(pilot)
    await pilot.press("3", "enter")
    return await shown_screen(pilot, GroupJobsScreen, lambda s: s.jobs is not None)


async def _factors(pilot: Pilot[Any]) -> FactorsScreen:
    await _group_jobs(pilot)
    await pilot.press("F")
    return await shown_screen(pilot, FactorsScreen, lambda s: s.found is not None)


def _cells(screen: FactorsScreen, row: int) -> list[str]:
    return [str(c) for c in screen.body.table.get_row_at(row)]


async def _confirmation(pilot: Pilot[Any], key: str) -> ConfirmScreen:
    """Press a requeue key; its dialog answered as it opens (counts kept, all due at once)."""
    await pilot.press(key)
    await shown_screen(pilot, RequeueJobsScreen)
    await pilot.press("enter")
    return await shown_screen(pilot, ConfirmScreen)


# -- F: what the group's jobs share, on a screen of its own ---------------------------------
async def test_the_factor_key_opens_a_screen_listing_every_factor_with_counts_and_shares() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _factors(pilot)
        assert screen.body.table.row_count == 3
        first = _cells(screen, 0)
        assert first[:4] == ["payload.region", "eu", "36 · 90%", "200 · 10%"]
        assert first[4] == f"payload.region=eu type={GROUP.task_types[0]}"
        assert "40 failed job(s) of the group compared with 2,000" in str(screen.header.content)
        assert not notices(app)  # said on the screen, not in a toast that fades


async def test_enter_on_a_factor_opens_the_search_for_that_factor() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await _factors(pilot)
        await pilot.press("down", "enter")
        search = await shown_screen(pilot, SearchScreen, lambda s: bool(s.found))
        assert search.line == f"payload.customer.tier=enterprise type={GROUP.task_types[0]}"


async def test_a_factor_no_search_selects_by_says_so_on_enter() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _factors(pilot)
        assert _cells(screen, 2)[0] == "host" and _cells(screen, 2)[4] == NO_SEARCH
        await pilot.press("down", "down", "enter")
        await until(pilot, lambda: any("no search selects by it" in m for m in notices(app)))
        assert app.screen is screen


async def _searched(pilot: Pilot[Any], line: str) -> SearchScreen:
    """The search (key s) run with ``line`` on the settled console, once it found jobs."""
    await settle(pilot)
    await pilot.press("s", *line, "enter")
    return await shown_screen(pilot, SearchScreen, lambda s: bool(s.found))


# -- lists that stop at a limit say so and load more -----------------------------------------
async def test_a_search_that_stops_at_its_limit_says_so_and_m_loads_the_next_page() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _searched(pilot, "limit=10")
        assert len(screen.found) == 10
        assert str(screen.header.content) == (
            "first 10 jobs found; more match, not shown (m loads 10 more)"
        )
        assert "first 10" in str(screen.body.border_title)
        await pilot.press("m")
        await until(pilot, lambda: len(screen.found) == 20)


async def test_a_search_that_found_everything_says_only_how_many() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _searched(pilot, "limit=1000")
        assert str(screen.header.content) == f"{len(screen.found):,} job(s) found"
        assert not screen.more_match


async def test_a_group_list_that_stops_at_its_limit_says_so_and_m_loads_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(group_jobs, "JOB_LIMIT", 25)
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _group_jobs(pilot)
        assert f"first 25 of {GROUP.count:,}" in str(screen.body.border_title)
        assert f"the latest 25 of {GROUP.count:,} ({GROUP.count - 25:,} not shown" in str(
            screen.header.content
        )
        await pilot.press("m")
        await until(pilot, lambda: screen.jobs is not None and len(screen.jobs.jobs) == 50)
        assert f"first 50 of {GROUP.count:,}" in str(screen.body.border_title)


async def test_requeue_shown_asks_the_requeue_dialog_and_names_the_jobs_it_leaves_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(group_jobs, "JOB_LIMIT", 25)
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await _group_jobs(pilot)
        dialog = await _confirmation(pilot, "A")
        assert f"the 25 jobs shown in group `{GROUP.signature}`" in dialog.question
        assert f"not the {GROUP.count - 25:,} others of its {GROUP.count:,}" in dialog.question


async def test_requeue_shown_on_a_search_that_stopped_says_more_match() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await _searched(pilot, "limit=10")
        dialog = await _confirmation(pilot, "A")
        assert "the 10 jobs shown (search “limit=10”), not the others the search matches" in (
            dialog.question
        )


# -- R requeues the whole group wherever it is shown; O one job ------------------------------
async def test_r_in_a_group_drilldown_requeues_the_whole_group_through_the_dialog() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await _group_jobs(pilot)
        dialog = await _confirmation(pilot, "R")
        assert dialog.question.startswith(f"Requeue {GROUP.count:,}")
        await pilot.press("y")
        await until(pilot, lambda: bool(app.source.executed))  # type: ignore[attr-defined]
    (preview,) = app.source.executed  # type: ignore[attr-defined]
    target = preview.request.target
    assert target.kind is TargetKind.GROUP and target.group == GROUP.signature


async def test_o_in_a_group_drilldown_requeues_the_selected_job_only() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _group_jobs(pilot)
        chosen = screen.selected_job()
        assert chosen is not None
        dialog = await _confirmation(pilot, "O")
        assert dialog.question.startswith(f"Requeue job {chosen[:8]} (")
        await pilot.press("y")
        await until(pilot, lambda: bool(app.source.executed))  # type: ignore[attr-defined]
    (preview,) = app.source.executed  # type: ignore[attr-defined]
    assert preview.request.target.kind is TargetKind.JOB
    assert preview.request.target.ids == (chosen,)


async def test_the_drilldown_footer_names_the_one_job_key_apart_from_requeue() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _group_jobs(pilot)
        shown = {b.binding.key: b.binding.description for b in screen.active_bindings.values()}
        assert shown["R"] == "Requeue" and shown["O"] == "Requeue job"


async def test_r_on_a_search_says_which_keys_act_on_its_jobs() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _searched(pilot, "limit=10")
        await pilot.press("R")
        await until(pilot, lambda: any("O requeues the selected job" in m for m in notices(app)))
        assert app.screen is screen


class _HostileFactors(FixedSource):
    """Factors whose fields and values carry markup and terminal escapes."""

    def common_factors(self, signature: str) -> CommonFactors:
        return CommonFactors(
            signature,
            40,
            2000,
            (
                Factor("payload.[bold]x\x1b[31m", "[/]eu\x1b]0;t\x07", 36, 200, 0.9, 0.1),
                Factor("host", "[red]w\x1b[2J", 30, 700, 0.75, 0.35),
            ),
        )


async def test_the_factors_screen_draws_hostile_fields_and_values_as_visible_escapes() -> None:
    app = ConsoleApp(
        _HostileFactors(), clock=FrozenClock(), refresh_interval=0.5, auto_refresh=False
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await _factors(pilot)
        await pilot.press("down", "enter")  # the host: no search, said in a toast
        await until(pilot, lambda: any("no search selects by it" in m for m in notices(app)))
        await settle(pilot)
        text = assert_nothing_raw(app, "factors screen")
    assert "payload.[bold]x\\x1b[31m" in text and "[red]w\\x1" in text


class _CountedFactors(FixedSource):
    """The fixed factors, counting how often they are read."""

    factor_reads = 0

    def common_factors(self, signature: str) -> CommonFactors:
        self.factor_reads += 1
        return super().common_factors(signature)


async def test_the_factors_screen_reads_once_not_again_on_every_refresh() -> None:
    source = _CountedFactors()
    app = ConsoleApp(source, clock=FrozenClock(), refresh_interval=0.5, auto_refresh=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _factors(pilot)
        refreshed = app.snapshot
        await pilot.press("r")  # every cadence reads now
        await until(pilot, lambda: app.snapshot is not refreshed)
        await settle(pilot)
        assert app.screen is screen and source.factor_reads == 1


def test_the_failures_panel_says_when_it_shows_only_the_largest_groups() -> None:
    many = [
        replace(GROUP, signature=f"{GROUP.signature} #{i}") for i in range(FAILURE_GROUPS_SHOWN)
    ]
    fixed = fixed_snapshot()
    snapshot = replace(fixed, failures=many, failures_at=fixed.taken_at)
    summary = FailuresPanel().summarize(snapshot)
    assert summary.startswith(f"the largest {FAILURE_GROUPS_SHOWN} groups (more not shown) · ")
    assert FailuresPanel().summarize(replace(snapshot, failures=many[:3])).startswith("3 groups · ")
