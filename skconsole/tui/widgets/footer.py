"""The key hints at the bottom of every screen: Textual's Footer, recomposed only when the
hints it shows change.

Textual's Footer mounts all its keys again (a recompose, then a layout of the whole
screen) every time a screen's bindings are refreshed: on every focus move, every screen
pushed or popped, and whenever the console refreshes them (a connection change, a
mark), several times for one key press. Under ``skconsole serve`` that was most of a
key's work on the console's event loop (issue 40, item 9: measured with
``python -m skconsole.bench.browser_keys`` and a profile of the console). This one
compares what it would show (key, label, enabled, tooltip of each hint) with what it
shows, once per refresh however many times it is told, and recomposes only on a change.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

Hint = tuple[str, str, str, bool, str | None]


class ConsoleFooter(Footer):
    """A Footer that recomposes when its hints change, at most once per refresh."""

    def __init__(self) -> None:
        super().__init__()
        self._hints: tuple[Hint, ...] | None = None
        self._pending = False

    def compose(self) -> ComposeResult:
        """Textual's keys, but those the App hides from the footer (``hidden_in_footer``:
        a write key at a past minute, bound only to say why it does nothing)."""
        hidden = getattr(self.app, "hidden_in_footer", None)
        for widget in super().compose():
            if isinstance(widget, FooterKey) and hidden is not None and hidden(widget.action):
                continue
            yield widget

    def hints(self) -> tuple[Hint, ...]:
        """What the footer shows for the screen's bindings now."""
        hidden = getattr(self.app, "hidden_in_footer", None)
        return tuple(
            (binding.key, binding.action, binding.description, enabled, tooltip)
            for (_node, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show and not (hidden is not None and hidden(binding.action))
        )

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._pending:
            self._pending = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._pending = False
        if not self.is_attached:
            return
        hints = self.hints()
        if hints != self._hints:
            self._hints = hints
            await self.recompose()
