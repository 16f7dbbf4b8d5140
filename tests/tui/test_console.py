"""The console on a real database: the read-only session, drill-down to a job and its
error, rows keyed across refreshes, refreshes off the UI thread, the embedded engine.
(Keys, help, filter, palette and read-only mode on fixed data: test_keys.py.)"""

from __future__ import annotations

import threading
import time
from typing import TypeVar

import pytest

from skconsole import ops
from skconsole.core.errors import ReadOnlyError
from skconsole.core.signature import read_error
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.producer import Job, Producer
from skconsole.tui.app import ConsoleApp
from skconsole.tui.database_source import DatabaseSource
from skconsole.tui.model import ActionRequest, Target, TargetKind
from skconsole.tui.reads import FAILURE_GROUPS, SNAPSHOT, Read
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.main import MainScreen
from skconsole.tui.widgets.failures_panel import FailuresPanel
from tests.support.statuses import status_counts
from tests.tui.conftest import (
    SIZE,
    TIMEOUT_SIGNATURE_PREFIX,
    Conn,
    MakeApp,
    loaded,
    loaded_console,
    notices,
    reread,
    run_burst,
    until,
)

WRITE_KEYS = ("R", "A", "B", "X", "H", "P", "D")


def _failures(app: ConsoleApp) -> FailuresPanel:
    return app.main_screen.query_one(FailuresPanel)


# -- read-only ------------------------------------------------------------------------------


def test_read_only_session_refuses_writes_on_the_server_too(seeded: Database, dsn: str) -> None:
    """The second guard: even if the console asked, the read-only session refuses."""
    source = DatabaseSource(Database(dsn, read_only=True))
    try:
        with source._conn("action") as c:
            assert c.execute("SHOW default_transaction_read_only").fetchone() == ("on",)
        target = Target(
            "group", TargetKind.GROUP, group=source.read(FAILURE_GROUPS).groups[0].signature
        )
        preview = source.preview(ActionRequest(ops.REQUEUE, target, ops.RequeueParams()))
        assert preview.count > 0
        with pytest.raises(ReadOnlyError):
            source.execute(preview, "tester")
    finally:
        source.close()


# -- filter and drill-down --------------------------------------------------------------------


async def test_drill_down_group_jobs_detail_and_copy(seeded: Database, make_app: MakeApp) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        panel = _failures(app)
        assert app.snapshot is not None
        key = next(
            g.signature
            for g in app.snapshot.failures
            if g.signature.startswith(TIMEOUT_SIGNATURE_PREFIX)
        )
        panel.table.select_key(key)
        await pilot.press("3", "enter")
        await until(
            pilot, lambda: isinstance(app.screen, GroupJobsScreen) and app.screen.jobs is not None
        )
        jobs = app.screen
        assert isinstance(jobs, GroupJobsScreen)
        assert jobs.jobs is not None and jobs.jobs.total == 6 and len(jobs.jobs.jobs) == 6
        assert all(j.status == JobStatus.FAULTED for j in jobs.jobs.jobs)
        await pilot.press("enter")
        await until(
            pilot, lambda: isinstance(app.screen, JobDetailScreen) and app.screen.detail is not None
        )
        detail = app.screen
        assert isinstance(detail, JobDetailScreen)
        assert detail.detail is not None
        assert detail.detail.last_error is not None
        stored = read_error(detail.detail.last_error)
        assert stored is not None and stored.stack_trace is not None
        assert stored.stack_trace.startswith("Traceback (most recent call last):")
        assert '"n"' in (detail.detail.payload or "")
        await pilot.press("c")
        assert str(detail.detail.task_id) in app.clipboard
        assert "UpstreamTimeout: timeout after" in app.clipboard
        assert any(m.startswith("Copied job") for m in notices(app))
        await pilot.press("escape")
        assert isinstance(app.screen, GroupJobsScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


# -- live refresh -----------------------------------------------------------------------------
async def test_rows_are_keyed_so_the_cursor_stays_on_its_row(
    seeded: Database, make_app: MakeApp, db: Database
) -> None:
    async with loaded_console(make_app()) as (app, pilot):
        panel = _failures(app)
        table = panel.table
        declined = next(g.signature for g in app.snapshot.failures if "declined" in g.signature)  # type: ignore[union-attr]
        await pilot.press("3")
        table.select_key(declined)
        assert table.cursor_row == 1
        # a new group appears above it (4 jobs: between the 6 and the 3)
        with db.connect() as c:
            c.execute(
                "UPDATE sk_task_results_t SET task_status = 6, "
                "task_last_error = 'ZeroDivisionError: division by zero' WHERE task_type = 'tui.ok'"
            )
        await reread(pilot, lambda: table.total_rows == 3)
        assert table.selected_key == declined and table.cursor_row == 2
        # and one that goes away below it: still on the same row
        with db.connect() as c:
            c.execute("DELETE FROM sk_task_results_t WHERE task_type = 'tui.ok'")
        await reread(pilot, lambda: table.total_rows == 2)
        assert table.selected_key == declined and table.cursor_row == 1


T = TypeVar("T")


class _SlowSource(DatabaseSource):
    """The real source, slowed down, recording concurrency and the threads it runs on."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.active = 0
        self.most_at_once = 0
        self.calls = 0
        self.threads: set[int] = set()
        self._count = threading.Lock()

    def read(self, request: Read[T]) -> T:
        if request != SNAPSHOT:
            return super().read(request)
        with self._count:
            self.active += 1
            self.calls += 1
            self.most_at_once = max(self.most_at_once, self.active)
            self.threads.add(threading.get_ident())
        try:
            time.sleep(0.4)
            return super().read(request)
        finally:
            with self._count:
                self.active -= 1


async def test_refreshes_never_pile_up_and_never_run_on_the_ui_thread(
    seeded: Database, dsn: str
) -> None:
    source = _SlowSource(Database(dsn))
    app = ConsoleApp(source, refresh_interval=0.5)
    async with app.run_test(size=SIZE) as pilot:
        ui_thread = threading.get_ident()
        await loaded(pilot)
        for _ in range(10):  # hammer "refresh now" while refreshes are running
            await pilot.press("r")
            await until(pilot, lambda: app.refresh_loop.busy)
        await until(pilot, lambda: app.refresh_count >= 4, timeout=20)
    source.close()
    assert source.most_at_once == 1
    assert ui_thread not in source.threads


# -- keys, help, palette --------------------------------------------------------------------------


# -- the embedded engine --------------------------------------------------------------------------
async def test_embedded_engine_start_stop(db: Database, make_app: MakeApp, conn: Conn) -> None:
    from skconsole.worker.engine import WorkerConfig
    from skconsole.worker.thread import EngineThread
    from tests.support.tasks_console import tasks

    engine = EngineThread(db, tasks, WorkerConfig(concurrency=2, poll_interval=0.1, grace_period=1))
    app = make_app(engine=engine, start_engine=True)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await loaded(pilot)
            await until(pilot, lambda: engine.state == "running")
            assert (app.status_state().engine or "").startswith("running 0/2")
            with Producer(db) as p:
                p.post_many([Job("tui.ok", {"i": i}) for i in range(5)])
            await until(pilot, lambda: status_counts(conn, "tui.ok") == {JobStatus.PROCESSED: 5})
            await pilot.press("e")
            await until(pilot, lambda: engine.state == "stopped")
            with Producer(db) as p:
                p.post("tui.ok", {"i": 99})
            count = app.refresh_count  # the stopped engine had two refreshes' time to take it
            await until(pilot, lambda: app.refresh_count >= count + 2)
            assert status_counts(conn, "tui.ok") == {
                JobStatus.PROCESSED: 5,
                JobStatus.UNPROCESSED: 1,
            }
            await pilot.press("e")
            await until(pilot, lambda: status_counts(conn, "tui.ok") == {JobStatus.PROCESSED: 6})
            assert (app.status_state().engine or "").endswith("6 done")
    finally:
        engine.close(10)


def test_burst_helper_leaves_the_expected_groups(seeded: Database) -> None:
    source = DatabaseSource(seeded)
    try:
        groups = source.read(FAILURE_GROUPS).groups
    finally:
        source.close()
    counts = sorted((g.count, {s: n for s, n in g.statuses.items() if n}) for g in groups)
    assert counts == [(3, {JobStatus.FATAL: 3}), (6, {JobStatus.FAULTED: 6})]
    run_burst(seeded)  # idempotent: nothing left to run
