"""A checkbox's mark is in its text, not its colour alone: a text capture of an
unticked box does not read as ticked."""

from __future__ import annotations

from textual.app import App, ComposeResult

from skconsole.tui.widgets.checkbox import MarkedCheckbox
from tests.tui.test_hostile_text import drawn_lines


class _Boxes(App[None]):
    def compose(self) -> ComposeResult:
        yield MarkedCheckbox("ticked", True, id="on")
        yield MarkedCheckbox("not ticked", False, id="off")


async def test_an_unticked_box_draws_no_mark_and_a_ticked_one_its_x() -> None:
    app = _Boxes()
    async with app.run_test(size=(40, 8)) as pilot:
        await pilot.pause()
        text = "\n".join(drawn_lines(app))  # type: ignore[arg-type]
        await pilot.press("tab", "space")  # the first box focused, then the second
        await pilot.press("tab", "space")
        ticked_again = app.query_one("#off", MarkedCheckbox).value
        after = "\n".join(drawn_lines(app))  # type: ignore[arg-type]
    assert "▐X▌ ticked" in text and "▐ ▌ not ticked" in text
    assert ticked_again and "▐X▌ not ticked" in after
