"""``skconsole status history``: the per-minute record per step, for scripts (--json, the
record's own document) and for people (a table), over --since / --until, in --step,
of --type; bad input is one line, never a traceback."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from skconsole import FatalTaskError, Producer, TaskRegistry
from skconsole.db.connect import Database
from skconsole.read.record import record
from skconsole.testing import run_until_idle

Cli = Callable[..., subprocess.CompletedProcess[str]]


def _fail(_payload: Any) -> None:
    raise FatalTaskError("card declined")


@pytest.fixture
def ran(db: Database) -> Database:
    """Five jobs of mail.send that succeed and two of pay.charge that fail for good."""
    tasks = TaskRegistry()
    tasks.task("mail.send")(lambda _payload: None)
    tasks.task("pay.charge")(_fail)
    with Producer(db) as p:
        for i in range(5):
            p.post("mail.send", {"n": i})
        for i in range(2):
            p.post("pay.charge", {"n": i})
    run_until_idle(db, tasks)
    return db


def _totals(doc: dict[str, Any]) -> dict[str, int]:
    figures = ("posted", "started", "succeeded", "failed", "failed_fatal")
    return {f: sum(step[f] for step in doc["steps"]) for f in figures}


def test_history_since_json_gives_the_records_figures_after_posts_and_finishes(
    ran: Database, run_cli: Cli
) -> None:
    got = run_cli("status", "history", "--since", "1h", "--json")

    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    assert doc["source"] == "record"
    assert doc["step_seconds"] == 60
    assert _totals(doc) == {
        "posted": 7,
        "started": 7,
        "succeeded": 5,
        "failed": 2,
        "failed_fatal": 2,
    }
    assert sorted(doc["types"]) == ["mail.send", "pay.charge"]
    assert [s["failed"] for s in doc["signatures"]] == [2]


def test_history_json_is_the_read_models_document(ran: Database, run_cli: Cli) -> None:
    got = run_cli("status", "history", "--since", "1h", "--json")
    doc = json.loads(got.stdout)
    with ran.connect() as conn:
        found = record(
            conn,
            since=datetime.fromisoformat(doc["since"]),
            until=datetime.fromisoformat(doc["until"]),
        )
    assert doc["steps"] == found.as_dict()["steps"]


def test_history_of_one_type_counts_only_that_type(ran: Database, run_cli: Cli) -> None:
    got = run_cli("status", "history", "--since", "1h", "--type", "pay.charge", "--json")

    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    assert list(doc["types"]) == ["pay.charge"]
    assert _totals(doc)["posted"] == 2


def test_history_step_sets_the_rows_step(ran: Database, run_cli: Cli) -> None:
    doc = json.loads(run_cli("status", "history", "--since", "2h", "--step", "1h", "--json").stdout)

    assert doc["step_seconds"] == 3600
    assert len(doc["steps"]) in (2, 3)  # since is cut to its minute: a third, partial step
    assert _totals(doc)["posted"] == 7


def test_history_until_ends_the_span_before_the_jobs(ran: Database, run_cli: Cli) -> None:
    doc = json.loads(
        run_cli("status", "history", "--since", "1h", "--until", "1h", "--json").stdout
    )

    assert _totals(doc)["posted"] == 0


def test_history_until_takes_a_time_with_its_zone(ran: Database, run_cli: Cli) -> None:
    until = (datetime.now(UTC) + timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc = json.loads(
        run_cli("status", "history", "--since", "1h", "--until", until, "--json").stdout
    )

    assert _totals(doc)["posted"] == 7


def test_history_table_shows_each_steps_figures(ran: Database, run_cli: Cli) -> None:
    got = run_cli("status", "history", "--since", "15m", "--wide")

    assert got.returncode == 0, got.stderr
    assert "Jobs per minute" in got.stdout
    for label in ("posted", "succeeded", "failed", "reaped", "wait p95", "run p95"):
        assert label in got.stdout


def test_history_minutes_still_sets_the_span(ran: Database, run_cli: Cli) -> None:
    doc = json.loads(run_cli("status", "history", "--minutes", "30", "--json").stdout)

    since, until = (datetime.fromisoformat(doc[k]) for k in ("since", "until"))
    assert timedelta(minutes=29) <= until - since <= timedelta(minutes=31)
    assert _totals(doc)["posted"] == 7


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--since", "soon"), "invalid duration 'soon' for --since"),
        (("--since", "30s"), "--since must be between 1m and 366d"),
        (("--step", "90s"), "--step must be a whole number of minutes"),
        (("--since", "7d", "--step", "1m"), "more than 10,000 rows"),
        (("--until", "2027-01-01T06:00"), "--until needs a time zone"),
        (("--until", "later"), "invalid duration 'later' for --until"),
    ],
)
def test_history_bad_input_is_one_line_without_a_traceback(
    run_cli: Cli, args: tuple[str, ...], said: str
) -> None:
    got = run_cli("status", "history", *args)

    assert got.returncode == 2
    assert said in got.stderr
    assert "Traceback" not in got.stderr
    assert len(got.stderr.strip().splitlines()) == 1


def test_a_hostile_type_name_reaches_the_table_title_as_plain_text(run_cli: Cli) -> None:
    got = run_cli("status", "history", "--since", "15m", "--type", "[bold]evil\x1b[2J")

    assert got.returncode == 0, got.stderr
    assert "\x1b[2J" not in got.stdout
    assert "[bold]evil" in got.stdout
