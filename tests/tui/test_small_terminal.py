"""An on-call laptop's terminal is often 80x24: every dialog must fit in it whole,
wrapping its text, rather than lose its right edge (and the buttons' hints there)."""

from __future__ import annotations

import re

import pytest
from textual._compositor import LayoutUpdate
from textual.widgets import Tab, Tabs

from skconsole.tui.app import ConsoleApp
from skconsole.tui.showcase.scenes import BY_NAME, SCENES, Scene, settle
from skconsole.tui.widgets.depth_panel import DepthPanel
from skconsole.tui.widgets.failures_panel import FailuresPanel

SMALL = (80, 24)
DIALOG_SCENES = [
    s for s in SCENES if s.name.endswith(("confirm", "-age", "-type", "help", "edit-job", "-setup"))
]


@pytest.mark.parametrize("scene", DIALOG_SCENES, ids=[s.name for s in DIALOG_SCENES])
async def test_a_dialog_fits_an_80_column_terminal(scene: Scene) -> None:
    app = scene.build()
    async with app.run_test(size=SMALL) as pilot:
        await scene.prepare(pilot)
        dialogs = list(app.screen.query(".dialog"))

        assert dialogs, f"{scene.name} shows no dialog"
        for dialog in dialogs:
            region = dialog.region
            assert region.x >= 0 and region.right <= SMALL[0], (scene.name, region)


@pytest.mark.parametrize(("width", "trend_shown"), [(80, False), (120, True)])
async def test_below_100_columns_the_depth_table_takes_the_trends_width(
    width: int, trend_shown: bool
) -> None:
    """At 80 columns the depth table's in-flight, state and SLO columns would be cut off."""
    main = next(s for s in SCENES if s.name == "main")
    app = main.build()
    async with app.run_test(size=(width, 40)) as pilot:
        await main.prepare(pilot)

        assert app.screen.query_one("#throughput").display is trend_shown
        assert app.screen.query_one("DepthPanel").region.width == (
            width if not trend_shown else width - 32
        )


# -- 80x24: what an on-call laptop shows (issue 24) ------------------------------------------
def drawn_lines(app: ConsoleApp) -> list[str]:
    """The text the console draws now, line by line (the screens below a dialog included)."""
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    assert isinstance(update, LayoutUpdate)
    return [
        "".join(segment.text for strip in line for segment in strip if not segment.control)
        for line in update.strips
    ]


async def drawn(scene_name: str, size: tuple[int, int] = SMALL, *keys: str) -> list[str]:
    scene = BY_NAME[scene_name]
    app = scene.build()
    async with app.run_test(size=size) as pilot:
        await scene.prepare(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        return drawn_lines(app)


async def test_at_80_columns_the_status_line_keeps_the_server_and_cuts_no_counter() -> None:
    status = (await drawn("main"))[0]

    assert "db.prod.example:5432/queue" in status
    assert re.search(r"engine running 6/10( · 12,840 done)? *$", status), status


async def test_paused_the_status_line_says_paused_and_not_live() -> None:
    status = (await drawn("main", (120, 40), "p"))[0]

    assert "PAUSED" in status
    assert "live" not in status


async def test_at_80_columns_every_tab_is_on_the_tab_bar_from_panel_9() -> None:
    scene = BY_NAME["health"]
    app = scene.build()
    async with app.run_test(size=SMALL) as pilot:
        await scene.prepare(pilot)
        bar = app.screen.query_one(Tabs)
        line = drawn_lines(app)[bar.region.y]
        labels = [tab.label.plain for tab in bar.query(Tab)]

    assert len(labels) == 8
    for label in labels:
        assert label in line, (label, line)
    assert "2 HUNG" in line


@pytest.mark.parametrize("scene", ["main", "failure-drilldown", "job-detail"])
async def test_at_80_columns_the_footer_still_shows_quit(scene: str) -> None:
    """(At 120 it already did: the snapshots hold it.)"""
    footer = (await drawn(scene))[-1]

    assert "q Quit" in footer, footer


async def test_at_80_columns_in_flight_shows_the_hung_state_in_words() -> None:
    text = "\n".join(await drawn("in-flight"))

    assert "HUNG: silent for 95.4 s" in text
    assert "HUNG: silent for 381 s" in text


async def test_at_80x24_the_job_detail_shows_its_error_above_the_fold() -> None:
    lines = await drawn("job-detail")

    assert any("Traceback (most recent call last):" in line for line in lines)
    assert any("UpstreamTimeout: timeout after 31s" in line for line in lines)


async def test_the_trend_totals_show_every_final_status_cancelled_included() -> None:
    scene = BY_NAME["main"]
    app = scene.build()
    async with app.run_test(size=(120, 40)) as pilot:
        await scene.prepare(pilot)
        box = app.screen.query_one("#throughput").region
        text = " ".join(line[box.x : box.right] for line in drawn_lines(app)[box.y : box.bottom])

    for status in ("Processed", "Error", "Faulted", "Fatal", "Cancelled"):
        assert status in text, (status, text)


async def test_at_80x24_the_tabs_get_the_rows_panel_1_can_spare() -> None:
    """Panel 1 keeps its 7 types; the failures below show 5 of their 6 groups, not 4."""
    scene = BY_NAME["main"]
    app = scene.build()
    async with app.run_test(size=SMALL) as pilot:
        await scene.prepare(pilot)
        depth = app.screen.query_one(DepthPanel).table
        failures = app.screen.query_one(FailuresPanel).table
        depth_rows = depth.scrollable_content_region.height - 1  # less its header
        failure_rows = failures.scrollable_content_region.height - 1

    assert depth_rows >= 7
    assert failure_rows >= 5
