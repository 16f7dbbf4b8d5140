"""A checkbox whose mark is in its text: Textual's draws the same "X" ticked or not and
tells them apart by colour alone, so a text capture (tmux, a copied screen), a screen
reader or a terminal without colour reads an unticked box as ticked."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Checkbox


class MarkedCheckbox(Checkbox):
    """Ticked: ``▐X▌``; not ticked: ``▐ ▌`` (the same cells, the same styles)."""

    @property
    def _button(self) -> Content:
        button = super()._button
        if self.value:
            return button
        blank = button.plain.replace(self.BUTTON_INNER, " " * len(self.BUTTON_INNER), 1)
        return Content(blank, list(button.spans))
