"""The console at a past minute (``skconsole --at``) on a real PostgreSQL, and on an
incident bundle offline (``skconsole --bundle``): the figures of that minute after the jobs
were purged, the scrub keys, the write keys refused in one line."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skconsole import ops
from skconsole.core.errors import ReadOnlyError
from skconsole.db.connect import Database
from skconsole.read.record import sum_counts
from skconsole.tui import reads
from skconsole.tui.app import ConsoleApp
from skconsole.tui.chart_data import BY_KEY
from skconsole.tui.launch import bundle_source
from skconsole.tui.model import (
    ActionRequest,
    FailureGroups,
    Snapshot,
    Target,
    TargetKind,
    Trends,
    Windows,
)
from skconsole.tui.past_source import BundleBooks, DatabaseBooks, PastSource
from skconsole.tui.showcase.fixed_incident import INCIDENT_AT, fixed_incident
from skconsole.tui.source import NotKept, SourceUnavailable
from skconsole.tui.widgets.status_bar import StatusBar
from tests.db.test_hostile_text import RLO, SGR, TASK_TYPE
from tests.support.cli import run_in_process
from tests.tui.test_hostile_text import assert_nothing_raw

from .conftest import SIZE, until

Conn = psycopg.Connection[Any]
NO_JOB = "00000000-0000-4000-8000-00000000dead"


def purge_everything(conn: Conn) -> None:
    ids = tuple(r[0] for r in conn.execute("SELECT task_id FROM sk_task_results_t").fetchall())
    ops.PURGE.execute(
        conn,
        ops.Selection(ids=ids),
        ops.PurgeParams(include_faulted=True),
        actor=ops.Actor("t", "h"),
    )
    assert conn.execute("SELECT count(*) FROM sk_task_results_t").fetchone() == (0,)


def past_app(db: Database) -> ConsoleApp:
    source = PastSource(DatabaseBooks(db), datetime.now(UTC))
    return ConsoleApp(source, refresh_interval=60.0, actor="tester")


def status_line(app: ConsoleApp) -> str:
    bar = app.screen.query_one(StatusBar)
    return " ".join(str(label.render()) for label in bar.query("Label"))


async def test_the_past_minute_shows_the_failure_groups_of_jobs_purged_since(
    seeded: Database, conn: Conn
) -> None:
    purge_everything(conn)
    app = past_app(seeded)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.failure_groups is not None)
        assert app.failure_groups is not None
        counts = sorted(g.count for g in app.failure_groups.groups)
        assert len(counts) == 2 and sum(counts) >= 9  # 6 timeouts, 3 declined (attempts)


async def test_a_scrub_key_shows_the_minute_before_in_the_status_line(
    seeded: Database, conn: Conn
) -> None:
    app = past_app(seeded)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.snapshot is not None)
        assert app.past is not None
        before = app.past.minute()

        await pilot.press("left_square_bracket")

        earlier = before - timedelta(minutes=1)
        assert app.past.minute() == earlier
        await until(pilot, lambda: f"{earlier:%H:%M} UTC" in status_line(app))


async def test_a_write_key_in_the_past_says_so_in_one_line_and_writes_nothing(
    seeded: Database, conn: Conn
) -> None:
    app = past_app(seeded)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.failure_groups is not None)
        await pilot.press("3")
        await pilot.press("R")
        await until(pilot, lambda: bool(app._notifications))
        (note,) = [n.message for n in app._notifications]
        assert "cannot be changed" in note and "\n" not in note
    assert conn.execute("SELECT count(*) FROM sk_audit_t").fetchone() == (0,)


async def test_a_bundle_opens_offline_on_its_worst_minute(tmp_path: Path) -> None:
    path = tmp_path / "incident.json"
    path.write_text(json.dumps(fixed_incident().as_dict()), encoding="utf-8")

    source = bundle_source(path)
    app = ConsoleApp(source, refresh_interval=60.0, actor="tester")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.failure_groups is not None)
        assert source.minute() == INCIDENT_AT
        assert app.connection == "live"  # no database: the bundle answers


def test_a_foreign_file_given_to_bundle_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "package.json"
    path.write_text('{"name": "left-pad"}', encoding="utf-8")

    done = run_in_process(["--bundle", str(path)])

    assert done.returncode == 2
    assert "not an skconsole incident bundle" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_time_at_cannot_read_is_refused_in_one_line() -> None:
    done = run_in_process(["--at", "quarter to three"])

    assert done.returncode == 2
    assert "--at" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def bundle_past() -> PastSource:
    incident = fixed_incident()
    return PastSource(BundleBooks(incident, "incident.json"), INCIDENT_AT)


def test_a_past_source_answers_the_cadence_reads_with_the_present_s_types() -> None:
    source = bundle_past()

    assert isinstance(source.read(reads.SNAPSHOT), Snapshot)
    assert isinstance(source.read(reads.FAILURE_GROUPS), FailureGroups)
    assert isinstance(source.read(reads.TRENDS), Trends)
    assert isinstance(source.read(reads.WINDOWS), Windows)


@pytest.mark.parametrize(
    "request_",
    [reads.JobRead(NO_JOB), reads.GroupJobsRead("x", 10), reads.WhyRead(NO_JOB), reads.HEALTH],
    ids=["job", "group jobs", "why", "health"],
)
def test_a_past_source_answers_what_it_does_not_keep_as_not_kept(request_: Any) -> None:
    with pytest.raises(NotKept, match="not kept"):
        bundle_past().read(request_)


def test_a_past_source_draws_the_charts_of_the_hour_up_to_its_minute() -> None:
    """The charts at a past minute end with that minute and show what the bundle holds:
    every step of the hour before it, none after."""
    data = bundle_past().read(reads.ChartsRead(BY_KEY["1h"]))
    book = fixed_incident().book
    minutes = [m for per in book.by_type.values() for m in per if m <= INCIDENT_AT]
    held = sum_counts(
        c
        for per in book.by_type.values()
        for m, c in per.items()
        if INCIDENT_AT - timedelta(minutes=59) <= m <= INCIDENT_AT
    )

    assert data.record.until == INCIDENT_AT + timedelta(minutes=1)
    assert data.record.total() == held and held.posted > 0
    assert minutes and data.slo_wait_s == {}


def test_a_past_source_gives_a_group_s_curve_up_to_its_minute() -> None:
    source = bundle_past()
    (group, *_) = source.read(reads.FAILURE_GROUPS).groups

    curve = source.read(reads.GroupCurveRead(group.signature, ()))

    assert len(curve) == reads.GROUP_CURVE_MINUTES
    assert sum(curve) > 0


def test_a_past_source_refuses_every_action() -> None:
    request = ActionRequest(
        ops.PAUSE,
        Target("type", TargetKind.TYPE, task_type="mail.send"),
        ops.PAUSE.default_params(),
    )

    with pytest.raises(ReadOnlyError, match="cannot be changed"):
        bundle_past().preview(request)


def test_a_past_source_on_a_gone_server_is_unavailable(nowhere: str) -> None:
    source = PastSource(DatabaseBooks(Database(nowhere)), datetime.now(UTC))

    with pytest.raises(SourceUnavailable):
        source.read(reads.SNAPSHOT)


def hostile_bundle(tmp_path: Path) -> Path:
    """The fixed incident with control characters in a type, a signature, its sample
    error, an audit row and the queue's name, as a file."""
    incident = fixed_incident()
    book = incident.book
    book = replace(
        book,
        by_type={TASK_TYPE if t == "mail.send" else t: per for t, per in book.by_type.items()},
        by_signature={(TASK_TYPE, f"{s}{SGR}"): per for (_t, s), per in book.by_signature.items()},
        gauges=tuple(
            replace(g, task_type=TASK_TYPE) if g.task_type == "mail.send" else g
            for g in book.gauges
        ),
    )
    audit = tuple(replace(a, who=f"console (\x1b]0;pwned@{RLO}host)") for a in incident.audit)
    hostile = replace(incident, book=book, audit=audit, queue=f"ops@{SGR}db")
    path = tmp_path / f"incident{SGR}.json"
    path.write_text(json.dumps(hostile.as_dict()), encoding="utf-8")
    return path


async def test_a_bundle_s_hostile_text_is_drawn_as_visible_escapes(tmp_path: Path) -> None:
    app = ConsoleApp(bundle_source(hostile_bundle(tmp_path)), refresh_interval=60.0)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: app.failure_groups is not None)
        seen = ""
        for key in "137":
            await pilot.press(key)
            await until(pilot, lambda: app.snapshot is not None)
            seen += assert_nothing_raw(app, f"panel {key}")
    assert "t.\\x1b[31mevil\\u202e" in seen
