"""An on-call laptop's terminal is often 80x24: every dialog must fit in it whole,
wrapping its text, rather than lose its right edge (and the buttons' hints there)."""

from __future__ import annotations

import pytest

from skconsole.tui.showcase.scenes import SCENES, Scene

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
