"""Dead or missing workers on the main screen (issue 40, points 1 and 8), on a real
database: a type with ready jobs and no live worker says "no worker" in red in panel 1
and turns the workers tab red with the alive count; the hung read as a part of the
running; a reap says when no live worker runs the reaped jobs' types, and the jobs a
reap put back are told of under the in-flight list; a gone worker leaves the tab's count
at once and the list after 2 minutes.

"No live worker runs this type" is ``skconsole check``'s definition
(:func:`skconsole.read.unserved_types`): the console asks it there, as check and the
overview of several queues do."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from textual.widgets import Tab, TabbedContent, Tabs

from skconsole import ops
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.demo.scenario import CrashedWorker
from skconsole.producer import Job, Producer
from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.confirm import ConfirmScreen
from skconsole.tui.showcase.scenes import BY_NAME
from skconsole.tui.widgets.depth_panel import DepthPanel
from skconsole.tui.widgets.inflight_panel import InflightPanel
from skconsole.tui.widgets.workers_panel import WorkersPanel
from tests.support.rows import one_row
from tests.support.tasks_retry import EngineThread
from tests.tui.conftest import Conn, MakeApp, loaded_console, notices, until
from tests.tui.test_small_terminal import drawn_lines

WIDE = (200, 50)


def register(
    conn: Conn,
    task_types: tuple[str, ...],
    *,
    heartbeat_age_s: float = 0.2,
    host: str = "web-1",
    pid: int = 42,
) -> uuid.UUID:
    """A worker registered as the engine registers one, its lease 10 s: alive with a fresh
    heartbeat (its control connection is not checked where it holds no lock: a fresh
    registration without one reads as connection lost, so alive ones say they need none),
    gone once silent past its lease."""
    worker = uuid.uuid4()
    one_row(
        conn,
        "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,"
        " worker_concurrency, worker_task_types, worker_heartbeat_at_ts, worker_lease_seconds,"
        " worker_lease_margin_seconds, worker_session_lock)"
        " VALUES (%s, %s, %s, %s, 4, %s, now() - %s * interval '1 second', 10, 2, false)"
        " RETURNING worker_id",
        (worker, f"{host}:{pid}", host, pid, list(task_types), heartbeat_age_s),
    )
    return worker


def holding(conn: Conn, worker: uuid.UUID, task_type: str = "t.held") -> uuid.UUID:
    """A job in 2 Processing claimed by ``worker``."""
    task_id = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_posted_at_ts, task_last_processing_attempted_at_ts,"
        " sk_owner_worker_id, sk_attempt, sk_claim_id)"
        " VALUES (%s, %s, 't', 'null', 2, 0, now(), now(), %s, 1, nextval('sk_claim_id_seq'))",
        (task_id, task_type, worker),
    )
    return task_id


def post(db: Database, task_type: str, n: int) -> None:
    with Producer(db) as p:
        p.post_many([Job(task_type, {"i": i}) for i in range(n)])


def depth_cells(app: ConsoleApp) -> dict[str, dict[str, Any]]:
    table = app.main_screen.query_one(DepthPanel).table
    keys = [c.key for c in DepthPanel.COLUMNS]
    return {k: dict(zip(keys, table._shown[k], strict=True)) for k in table.visible_keys}


def tab(app: ConsoleApp, scope: str) -> tuple[str, bool]:
    """The tab's label and whether it is in the alarm colour."""
    found = app.main_screen.query_one(TabbedContent).get_tab(f"tab-{scope}")
    return found.label.plain, found.has_class("-alarm")


def reaped_notice(app: ConsoleApp) -> str:
    return str(app.main_screen.query_one("#inflight-reaped").render())


async def test_after_a_kill_9_the_main_screen_is_loud_and_the_reap_warns_and_is_told(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    """A real worker killed with SIGKILL while it held 2 jobs, and 3 more of its type
    ready: panel 1 and the workers tab say no worker runs it, the in-flight panel that its
    2 jobs are hung, the reap that nothing will take them, and once reaped, where they went."""
    crash = CrashedWorker(db, jobs=2)
    assert crash.run(), crash.error
    post(db, "demo.hang", 3)
    async with loaded_console(make_app(), WIDE, notifications=True) as (app, pilot):
        await until(pilot, lambda: app.snapshot is not None and app.snapshot.hung_count == 2, 45)
        await until(pilot, lambda: tab(app, "workers")[1])

        # 1. panel 1 and the tab bar
        assert depth_cells(app)["demo.hang"]["state"] == ("no worker", "bad")
        depth = str(app.main_screen.query_one(DepthPanel).border_title)
        assert depth.startswith("1 Queue depth · no worker for 1 type · 3 ready"), depth
        assert tab(app, "workers") == ("6 Workers 0 · 1 type no worker", True)
        # 8. the hung are a part of the running
        assert tab(app, "inflight") == ("2 In flight 2 (2 HUNG)", True)
        await pilot.press("2")
        inflight = str(app.main_screen.query_one(InflightPanel).border_title)
        assert inflight == "2 In flight · 2 running, 2 of them hung"

        # 8. the reap says nothing will take them, and so does its outcome
        await pilot.press("H")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert confirm.alarm == (
            "No live worker runs demo.hang: nothing will take its jobs until one starts."
        )
        await pilot.press("y")
        await until(pilot, lambda: any(m.startswith("Reaped 2") for m in notices(app)))
        assert any("No live worker runs demo.hang" in m for m in notices(app))

        # 8. they left the in-flight list: a line under it says where they went
        await until(pilot, lambda: "reaped" in reaped_notice(app))
        line = reaped_notice(app)
        assert line.startswith("↺ 2 reaped at "), line
        assert f"pid {crash.pid}, its lease lapsed: back in the queue" in line
        assert not app.main_screen.query_one(InflightPanel).table.visible_keys


async def test_jobs_a_live_workers_reaper_puts_back_are_told_of_in_the_in_flight_panel(
    db: Database, make_app: MakeApp, dsn: str
) -> None:
    """A live worker (of other types) reaps the killed worker's jobs: they leave the
    in-flight list with a word, not in silence."""
    crash = CrashedWorker(db, jobs=2)
    assert crash.run(), crash.error
    async with loaded_console(make_app(), WIDE) as (app, pilot):
        await until(pilot, lambda: app.snapshot is not None and app.snapshot.hung_count == 2, 45)
        await pilot.press("2")
        assert not app.main_screen.query_one("#inflight-reaped").display
        with EngineThread(dsn, reap=True, reap_interval=0.2):
            await until(pilot, lambda: "reaped" in reaped_notice(app), 30)
        line = reaped_notice(app)
        assert line.startswith("↺ 2 reaped at ") and " UTC (" in line, line
        assert f"pid {crash.pid}, its lease lapsed: back in the queue" in line
        assert app.main_screen.query_one("#inflight-reaped").display


async def test_a_type_no_worker_runs_is_flagged_until_a_live_worker_runs_it(
    db: Database, make_app: MakeApp, conn: Conn
) -> None:
    """Ready jobs of a type no worker ever registered for, and of one whose only worker is
    gone: both "no worker"; a paused one is not (check's rule); a live worker that runs
    one clears it."""
    register(conn, ("t.gone",), heartbeat_age_s=60, host="web-7")
    post(db, "t.gone", 2)
    post(db, "t.never", 325)
    post(db, "t.paused", 1)
    ops.PAUSE.execute(conn, ops.Selection(task_type="t.paused"), actor=ops.Actor("t", "h"))
    async with loaded_console(make_app(), WIDE) as (app, pilot):
        await until(pilot, lambda: tab(app, "workers")[1])
        cells = depth_cells(app)
        assert cells["t.never"]["state"] == ("no worker", "bad")
        assert cells["t.gone"]["state"] == ("no worker", "bad")
        assert cells["t.paused"]["state"] == ("paused", "warn")
        assert tab(app, "workers") == ("6 Workers 0 · 2 types no worker", True)

        register(conn, ("t.never",), host="web-1")
        await until(pilot, lambda: depth_cells(app)["t.never"]["state"] == "")
        assert depth_cells(app)["t.gone"]["state"] == ("no worker", "bad")
        assert tab(app, "workers") == ("6 Workers 1 · 1 type no worker", True)
        await pilot.press("6")
        title = str(app.main_screen.query_one(WorkersPanel).border_title)
        assert title.endswith("no live worker runs t.gone"), title


async def test_a_gone_worker_leaves_the_count_at_once_and_the_list_after_2_minutes(
    make_app: MakeApp, conn: Conn
) -> None:
    """Gone 30 s: listed (after the live one), not counted; gone 5 minutes: not listed,
    and the title says so; gone 5 minutes but holding a job (hung): still listed."""
    alive = register(conn, ("t.a",), host="web-1")
    recent = register(conn, ("t.a",), heartbeat_age_s=30, host="web-2")
    register(conn, ("t.a",), heartbeat_age_s=300, host="web-3")
    holder = register(conn, ("t.a",), heartbeat_age_s=300, host="web-4")
    holding(conn, holder)
    async with loaded_console(make_app(), WIDE) as (app, pilot):
        await pilot.press("6")
        panel = app.main_screen.query_one(WorkersPanel)
        await until(pilot, lambda: panel.table.total_rows > 0)

        listed = panel.table.visible_keys
        assert listed[0] == str(alive)  # the live ones first
        assert sorted(listed[1:]) == sorted([str(recent), str(holder)])
        assert tab(app, "workers") == ("6 Workers 1", False)
        title = str(panel.border_title)
        assert title.startswith(
            "6 Workers · 1 alive · 2 not answering · 1 silent over 2m not listed"
        )


async def test_a_reap_whose_types_a_live_worker_runs_warns_of_nothing(
    make_app: MakeApp, conn: Conn
) -> None:
    """A gone worker's hung job of a type a live worker runs: that worker will take it."""
    gone = register(conn, ("t.a",), heartbeat_age_s=60, host="web-7")
    holding(conn, gone, "t.a")
    register(conn, ("t.a",), host="web-1")
    async with loaded_console(make_app(), WIDE) as (app, pilot):
        await until(pilot, lambda: app.snapshot is not None and app.snapshot.hung_count == 1)
        await pilot.press("2", "H")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert confirm.question.startswith("Reap 1 hung job?")
        assert confirm.alarm == ""
        assert not confirm.query("#confirm-alarm")
    running = "SELECT count(*) FROM sk_task_results_t WHERE task_status = %s"
    assert one_row(conn, running, (JobStatus.PROCESSING,))[0] == 1  # answered no


@pytest.mark.parametrize("width", [100, 120, 150])
@pytest.mark.parametrize("scene_name", ["main", "dead-workers"])
async def test_every_tab_stays_whole_on_the_bar_whatever_the_width(
    scene_name: str, width: int
) -> None:
    """The workers tab's alarm lengthens the bar: where the full labels no longer fit,
    the tabs keep their alarms' brief notes rather than run off the bar (fixed data)."""
    scene = BY_NAME[scene_name]
    app = scene.build()
    async with app.run_test(size=(width, 40)) as pilot:
        await scene.prepare(pilot)
        bar = app.screen.query_one(Tabs)
        line = drawn_lines(app)[bar.region.y]
        labels = [t.label.plain for t in bar.query(Tab)]

    assert len(labels) == 8
    for label in labels:
        assert label in line, (label, line)
    workers = next(label for label in labels if label.startswith("6 ")).split(" ")
    assert workers[2] == ("2" if scene_name == "main" else "0")  # the alive, in every form
