"""Key T on the depth panel: set or clear a type's retention through a real database,
in the one action flow (preview, confirmation, audit row)."""

from __future__ import annotations

from typing import Any

from skconsole.db.connect import Database
from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.retention_type import RetentionTypeScreen
from skconsole.tui.screens.yes_no import YesNoScreen
from tests.tui.conftest import Conn, MakeApp, console_on_type, notices, post_waiting, until


def _policies(conn: Conn) -> list[tuple[str, float, bool]]:
    return conn.execute(
        "SELECT ret_task_type, ret_older_than_seconds, ret_include_faulted FROM sk_retention_t"
    ).fetchall()


async def _answer(pilot: Any, app: ConsoleApp, keep: str) -> None:
    await pilot.press("T")
    await until(pilot, lambda: isinstance(app.screen, RetentionTypeScreen))
    await pilot.press(*keep, "enter")
    await until(pilot, lambda: isinstance(app.screen, YesNoScreen))
    await pilot.press("y")


async def test_t_sets_a_types_retention_with_its_audit_row(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    post_waiting(db, 1)
    async with console_on_type(make_app()) as (app, pilot):
        await _answer(pilot, app, "30d")
        await until(pilot, lambda: any("retention" in m for m in notices(app)))
    assert _policies(conn) == [("tui.ok", 30 * 86400.0, False)]
    assert conn.execute("SELECT audit_action FROM sk_audit_t").fetchall() == [("retention",)]


async def test_t_with_an_empty_field_clears_the_types_retention(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    post_waiting(db, 1)
    conn.execute(
        "INSERT INTO sk_retention_t (ret_task_type, ret_older_than_seconds, ret_set_by)"
        " VALUES ('tui.ok', 3600, 'someone')"
    )
    async with console_on_type(make_app()) as (app, pilot):
        await _answer(pilot, app, "")
        await until(pilot, lambda: any("retention" in m for m in notices(app)))
    assert _policies(conn) == []


async def test_t_is_refused_in_read_only_mode(db: Database, make_app: MakeApp, conn: Conn) -> None:
    post_waiting(db, 1)
    async with console_on_type(make_app(read_only=True)) as (app, pilot):
        await app.run_action("operate('retention_type')")
        await pilot.pause()
        assert not isinstance(app.screen, RetentionTypeScreen)
    assert _policies(conn) == []
