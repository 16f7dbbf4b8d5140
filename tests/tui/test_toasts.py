"""Toasts carry task types, group signatures and servers' errors: text the console
does not choose. Square brackets in it are shown as they are, never read as markup
(``[/]`` read as markup raises, ``[bold]`` would restyle the rest)."""

from __future__ import annotations

from dataclasses import dataclass

from skconsole.tui.app import ConsoleApp
from skconsole.tui.model import Snapshot
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import FrozenClock
from tests.tui.conftest import loaded, toast_shown, until

SERVER_ERROR = 'relation "jobs[/]" does not exist [bold]'


@dataclass
class _BreakingSource(FixedSource):
    """Serves one snapshot, then fails the way a server's error does."""

    broken: bool = False

    def snapshot(self) -> Snapshot:
        if self.broken:
            raise RuntimeError(SERVER_ERROR)
        return super().snapshot()


async def test_a_refresh_error_with_brackets_is_shown_as_it_is() -> None:
    source = _BreakingSource()
    app = ConsoleApp(source, clock=FrozenClock(), auto_refresh=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await loaded(pilot)
        source.broken = True
        app.request_refresh()
        await until(pilot, lambda: bool(app._notifications))
        await until(pilot, lambda: toast_shown(app))

        toast = next(iter(app._notifications))
        assert toast.message == f"Refresh failed: {SERVER_ERROR}"
        assert not toast.markup
