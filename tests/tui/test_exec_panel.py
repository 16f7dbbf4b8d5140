"""Panel 4, execution time: its title names the runs its rows are of, and every figure
of a row is of those runs (no percentile above the row's longest), on fixed data."""

from __future__ import annotations

from skconsole.tui.app import ConsoleApp
from skconsole.tui.formatting import fmt_ms
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import FrozenClock
from skconsole.tui.showcase.scenes import settle
from skconsole.tui.widgets.exec_panel import ExecPanel
from tests.tui.conftest import SIZE


async def test_exec_panel_title_names_the_window_its_rows_are_of() -> None:
    app = ConsoleApp(FixedSource(), clock=FrozenClock(), auto_refresh=False, actor="t")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("4")
        await settle(pilot)
        panel = app.main_screen.query_one(ExecPanel)
        assert str(panel.border_title) == (
            "4 Execution time · 10,000 runs in the last 1h, the latest 10,000 jobs at most"
        )


async def test_exec_panel_rows_show_the_recent_runs_alone() -> None:
    source = FixedSource()
    app = ConsoleApp(source, clock=FrozenClock(), auto_refresh=False, actor="t")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("4")
        await settle(pilot)
        table = app.main_screen.query_one(ExecPanel).table
        labels = [c.label for c in ExecPanel.COLUMNS]
        for times in source.snapshot().exec_stats:
            cells = dict(
                zip(labels, (c.plain for c in table.get_row(times.task_type)), strict=True)
            )
            assert cells["runs"] == f"{times.sample:,}"
            assert times.p99_ms is not None and times.recent_longest_ms is not None
            assert times.p99_ms <= times.recent_longest_ms
            assert (cells["fastest"], cells["longest"], cells["last"]) == (
                fmt_ms(times.recent_fastest_ms),
                fmt_ms(times.recent_longest_ms),
                fmt_ms(times.recent_last_ms),
            )
            assert cells["avg"] == fmt_ms(times.recent_avg_ms)
