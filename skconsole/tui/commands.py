"""Command palette entries (ctrl+p) for every action in the registry.

An entry runs the action where it applies: a panel action chosen elsewhere
first focuses its home panel. Write actions are left out in read-only mode,
exactly as their keys are hidden.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from skconsole.tui.action_spec import ActionSpec
from skconsole.tui.actions import ACTIONS


@runtime_checkable
class PaletteHost(Protocol):
    """What the palette needs of the App: which actions to offer, and how to run one."""

    def palette_allows(self, spec: ActionSpec) -> bool: ...

    async def run_from_palette(self, spec: ActionSpec) -> None: ...


class ActionCommands(Provider):
    """The console's actions, by name (none on an App that is no :class:`PaletteHost`)."""

    def _entries(self) -> list[tuple[str, str, ActionSpec]]:
        host = self.app
        if not isinstance(host, PaletteHost):
            return []
        out = []
        for spec in ACTIONS:
            if spec.id == "leave":
                continue
            if not host.palette_allows(spec):
                continue
            name = (
                f"Panel: {spec.description}" if spec.id.startswith("panel(") else spec.description
            )
            out.append((name, f"{spec.help}  (key {spec.shown_key})", spec))
        return out

    def _run(self, spec: ActionSpec) -> Callable[[], Awaitable[None]]:
        host = self.app
        assert isinstance(host, PaletteHost)  # _entries offers nothing otherwise
        return partial(host.run_from_palette, spec)

    async def discover(self) -> Hits:
        for name, help_text, spec in self._entries():
            yield DiscoveryHit(name, self._run(spec), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, spec in self._entries():
            score = matcher.match(f"{name} {spec.help}")
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(name),
                    self._run(spec),
                    help=help_text,
                )
