"""Command palette entries (ctrl+p) for every action in the registry.

An entry runs the action where it applies: a panel action chosen elsewhere
first focuses its home panel. Write actions are left out in read-only mode,
exactly as their keys are hidden.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from skconsole.tui.actions import ACTIONS, ActionSpec

if TYPE_CHECKING:
    from skconsole.tui.app import ConsoleApp


class ActionCommands(Provider):
    """The console's actions, by name."""

    @property
    def console(self) -> ConsoleApp:
        return cast("ConsoleApp", self.app)

    def _entries(self) -> list[tuple[str, str, ActionSpec]]:
        out = []
        for spec in ACTIONS:
            if spec.id == "leave":
                continue
            if not self.console.palette_allows(spec):
                continue
            name = (
                f"Panel: {spec.description}" if spec.id.startswith("panel(") else spec.description
            )
            out.append((name, f"{spec.help}  (key {spec.shown_key})", spec))
        return out

    async def discover(self) -> Hits:
        for name, help_text, spec in self._entries():
            yield DiscoveryHit(name, partial(self.console.run_from_palette, spec), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, spec in self._entries():
            score = matcher.match(f"{name} {spec.help}")
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(name),
                    partial(self.console.run_from_palette, spec),
                    help=help_text,
                )
