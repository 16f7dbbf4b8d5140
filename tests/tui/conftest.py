"""Console fixtures: a console app on the test database, seeded through the real engine.

Reuses the root fixtures (``dsn``, ``db``, ``conn``, ``server_dsn``); the data
source is the real :class:`~skconsole.tui.database_source.DatabaseSource`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import psycopg
import pytest
from textual.pilot import Pilot
from textual.screen import Screen

from skconsole.db.connect import Database
from skconsole.producer import Job, Producer
from skconsole.tui.action_runner import REPEAT_GUARD_S
from skconsole.tui.app import ConsoleApp, EngineControl
from skconsole.tui.database_source import DatabaseSource
from skconsole.tui.screens.search import SearchScreen
from skconsole.worker.engine import Engine, WorkerConfig
from tests.support.tasks_console import failed_and_ok, tasks
from tests.support.waiting import until_async

SIZE = (120, 40)
ScreenT = TypeVar("ScreenT", bound=Screen[Any])
#: the ``make_app`` fixture: a console on the test database
MakeApp = Callable[..., ConsoleApp]
Conn = psycopg.Connection[Any]
TIMEOUT_SIGNATURE_PREFIX = "tests.support.tasks_console.UpstreamTimeout: timeout after <n>s"


def run_burst(db: Database) -> None:
    """Run the test handlers until the queue is empty (a real engine, in burst mode)."""
    config = WorkerConfig(concurrency=8, burst=True, poll_interval=0.1, reap=False)
    asyncio.run(Engine(db, tasks, config).run())


@pytest.fixture(autouse=True)
def private_state_home(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Copies the console saves (key c) go under the test's own directory."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


@pytest.fixture
def seeded(db: Database) -> Database:
    """6 jobs failed with a timeout, 3 declined (fatal), 4 processed."""
    with Producer(db) as p:
        p.post_many(failed_and_ok(6, 3, 4))
    run_burst(db)
    return db


@pytest.fixture
def make_app(dsn: str) -> Callable[..., ConsoleApp]:
    """A console on the test database; ``read_only`` makes its sessions read-only too."""

    def make(
        *,
        read_only: bool = False,
        engine: EngineControl | None = None,
        interval: float = 0.5,
        db: Database | None = None,
        **kw: Any,
    ) -> ConsoleApp:
        source = DatabaseSource(db or Database(dsn, read_only=read_only))
        return ConsoleApp(source, refresh_interval=interval, engine=engine, actor="tester", **kw)

    return make


async def until(pilot: Pilot[Any], predicate: Callable[[], bool], timeout: float = 15.0) -> None:
    """Let the app run until ``predicate`` holds (it may need a refresh or two): the
    tests' one wait (tests/support/waiting.py), a pilot's pause between two checks."""

    def step() -> Awaitable[None]:
        return pilot.pause(0.05)

    await step()
    await until_async(predicate, step, timeout)
    await pilot.pause()


async def shown_screen(
    pilot: Pilot[Any], screen_type: type[ScreenT], ready: Callable[[ScreenT], bool] | None = None
) -> ScreenT:
    """The screen on top, once it is a ``screen_type`` (and ``ready``, if given): waited for."""
    app = pilot.app
    await until(
        pilot,
        lambda: isinstance(app.screen, screen_type) and (ready is None or ready(app.screen)),
    )
    screen = app.screen
    assert isinstance(screen, screen_type)
    return screen


async def reread(pilot: Pilot[Any], predicate: Callable[[], bool], timeout: float = 15.0) -> None:
    """Like :func:`until`, pressing "r" (read everything now) while waiting: for data
    read on a slower cadence than the refresh (the failure groups)."""

    async def step() -> None:
        await pilot.press("r")
        await pilot.pause(0.1)

    await step()
    await until_async(predicate, step, timeout)
    await pilot.pause()


def write_idle(app: ConsoleApp) -> bool:
    """No write action is under way (none busy, no preview or run in a worker), and a
    write key pressed now is not taken for a quick repeat of the last one (those are
    ignored within ``REPEAT_GUARD_S``)."""
    operator = app.operator
    now = time.monotonic()
    return (
        not operator.busy
        and not any(w.group == "action" and not w.is_finished for w in app.workers)
        and all(now - at >= REPEAT_GUARD_S for at in operator._last_press.values())
    )


def toast_shown(app: ConsoleApp) -> bool:
    """A notification's toast is on the screen."""
    return bool(app.screen.query("Toast"))


async def loaded(pilot: Pilot[Any]) -> ConsoleApp:
    """The console once every panel has its data (the failure groups come after the rest)."""
    app = pilot.app
    assert isinstance(app, ConsoleApp)
    await until(pilot, lambda: app.snapshot is not None and app.snapshot.failures_at is not None)
    return app


@contextlib.asynccontextmanager
async def loaded_console(
    app: ConsoleApp, size: tuple[int, int] = SIZE, *, notifications: bool = False
) -> AsyncIterator[tuple[ConsoleApp, Pilot[Any]]]:
    """``app`` running in a test terminal of ``size`` (its toasts shown with
    ``notifications``), once every panel has its data (:func:`loaded`): the app and its
    pilot."""
    async with app.run_test(size=size, notifications=notifications) as pilot:
        await loaded(pilot)
        yield app, pilot


async def search_for(pilot: Pilot[Any], app: ConsoleApp, line: str) -> None:
    """The search opened (key s) and ``line`` typed into it and entered."""
    await pilot.press("s")
    await until(pilot, lambda: isinstance(app.screen, SearchScreen))
    await pilot.press(*line, "enter")


def post_waiting(db: Database, n: int, priority: int = 7) -> None:
    """``n`` jobs of type tui.ok waiting, at ``priority``."""
    with Producer(db) as p:
        p.post_many([Job("tui.ok", {"i": i}, priority=priority) for i in range(n)])


async def select_type(pilot: Pilot[Any], app: ConsoleApp, task_type: str) -> None:
    """The depth panel shown (key 1), its row of ``task_type`` selected once it is listed."""
    await pilot.press("1")
    await until(
        pilot,
        lambda: (
            app.snapshot is not None and any(d.task_type == task_type for d in app.snapshot.depth)
        ),
    )
    assert app.main_screen.panel("depth").table.select_key(task_type)


@contextlib.asynccontextmanager
async def console_on_type(
    app: ConsoleApp, task_type: str = "tui.ok"
) -> AsyncIterator[tuple[ConsoleApp, Pilot[Any]]]:
    """:func:`loaded_console`, with ``task_type`` selected in the depth panel: where a
    type's keys (bump, cancel, pause, limit, retention) act."""
    async with loaded_console(app) as (_, pilot):
        await select_type(pilot, app, task_type)
        yield app, pilot


def due_now(conn: Conn, task_id: object) -> bool:
    """The job's queue row is due (what ``bump --now`` leaves)."""
    row = conn.execute(
        "SELECT task_locked_until_ts <= now() FROM sk_tasks_queue_t WHERE task_id = %s",
        (task_id,),
    ).fetchone()
    return row == (True,)


def notices(app: ConsoleApp) -> list[str]:
    """The notifications on screen now (each leaves after its timeout)."""
    return [n.message for n in app._notifications]


def record_notices(app: ConsoleApp) -> list[str]:
    """Every notification the app gives from now on, kept: a slow run must not lose one
    that timed out before the test counted it."""
    said: list[str] = []
    notify = app.notify

    def recording(message: str, *args: Any, **kwargs: Any) -> None:
        said.append(message)
        notify(message, *args, **kwargs)

    app.notify = recording  # type: ignore[method-assign]
    return said
