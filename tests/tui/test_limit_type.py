"""Key L on the depth panel: set or clear a type's limits through a real database."""

from __future__ import annotations

from typing import Any

import pytest

from skconsole import read
from skconsole.db.connect import Database
from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.screens.limit_type import LimitTypeScreen
from tests.tui.conftest import (
    Conn,
    MakeApp,
    console_on_type,
    loaded_console,
    notices,
    post_waiting,
    until,
)


def _limits(conn: Conn) -> list[tuple[int | None, str | None]]:
    return [(t.concurrency, t.rate) for t in read.limits(conn)]


async def _confirm_limit(pilot: Any, app: ConsoleApp, *keys: str) -> ConfirmScreen:
    """L on the type selected, ``keys`` typed into the dialog: its confirmation."""
    await pilot.press("L")
    await until(pilot, lambda: isinstance(app.screen, LimitTypeScreen))
    await pilot.press(*keys)
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
    dialog = app.screen
    assert isinstance(dialog, ConfirmScreen)
    return dialog


async def test_l_sets_a_types_concurrency_limit_with_its_audit_row(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    post_waiting(db, 2)
    async with console_on_type(make_app()) as (app, pilot):
        dialog = await _confirm_limit(pilot, app, "2", "enter")
        assert dialog.question.startswith("Limit the type `tui.ok`")
        assert "after: concurrency 2" in dialog.sample
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Limited the type") for m in notices(app)))
    assert _limits(conn) == [(2, None)]
    assert conn.execute("SELECT audit_action FROM sk_audit_t").fetchall() == [("limit",)]


async def test_l_is_refused_in_read_only_mode(db: Database, make_app: MakeApp, conn: Conn) -> None:
    post_waiting(db, 1)
    async with console_on_type(make_app(read_only=True)) as (app, pilot):
        await app.run_action("operate('limit_type')")
        await pilot.pause()
        assert not isinstance(app.screen, LimitTypeScreen)
    assert _limits(conn) == []


async def test_l_sets_a_per_key_limit_from_the_payload_path_field(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    post_waiting(db, 2)
    async with console_on_type(make_app()) as (app, pilot):
        dialog = await _confirm_limit(pilot, app, "1", "tab", "tab", *"payload.i", "enter")
        assert "after: concurrency 1 per payload.i" in dialog.sample
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Limited the type") for m in notices(app)))
    [limit] = read.limits(conn)
    assert (limit.concurrency, limit.key_concurrency, limit.per) == (None, 1, "payload.i")
    # the key index the limit built: dropped (the schema outlives the test)
    for (name,) in conn.execute(
        "SELECT relname FROM pg_class WHERE relkind = 'i' AND relname LIKE 'sk\\_key\\_%%'"
    ).fetchall():
        conn.execute(f'DROP INDEX IF EXISTS "{name}"')


@pytest.mark.parametrize(
    ("waiting", "settings", "shown"),
    [
        pytest.param(
            1,
            [
                "INSERT INTO sk_task_types_t"
                " (task_type, tt_max_running, tt_rate_count, tt_rate_seconds)"
                " VALUES ('tui.ok', 3, 10, 60)"
            ],
            "0/3 10/min",
            id="running-and-limit",
        ),
        pytest.param(
            3,
            [
                "INSERT INTO sk_task_types_t (task_type, tt_key_path, tt_key_max_running)"
                " VALUES ('tui.ok', '{i}', 1)",
                "UPDATE sk_task_results_t SET task_status = 2 WHERE task_id IN"
                " (SELECT task_id FROM sk_task_results_t WHERE task_type = 'tui.ok' LIMIT 1)",
            ],
            "1 per payload.i (1 key at limit)",
            id="per-key-limit-and-its-keys-at-limit",
        ),
    ],
)
async def test_the_depth_panel_shows_a_limited_types_limits(
    db: Database, make_app: MakeApp, conn: Conn, waiting: int, settings: list[str], shown: str
) -> None:
    post_waiting(db, waiting)
    for statement in settings:
        conn.execute(statement)  # type: ignore[arg-type]
    async with loaded_console(make_app()) as (app, pilot):
        await until(pilot, lambda: app.snapshot is not None and bool(app.snapshot.depth))
        assert app.snapshot is not None
        limit = app.snapshot.depth[0].limit
    assert limit is not None and limit.summary(" ") == shown
