"""The forecast in the previews of the actions that move jobs, read from the real flow
beside the preview: ``--dry-run --json`` carries it as an object, the text says it in one
line, and an action that moves no jobs has none."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import psycopg

from skconsole import ops
from skconsole.read.flow import WINDOW_S, flow
from skconsole.read.forecast import Change, Effect, forecast

from .test_flow_and_check import add_ready, add_results
from .test_ops import ACTOR, add_job

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]


def completed(conn: Conn, n: int, task_type: str = "t.a") -> None:
    """``n`` jobs that succeeded 10 s ago, posted before the window (no arrivals)."""
    add_results(conn, task_type, n, status=3, posted_ago_s=3600.0, finalized_ago_s=10.0)


def test_a_requeue_dry_run_carries_the_forecast_of_the_flow_read_with_it(
    run_cli: CLI, conn: Conn
) -> None:
    completed(conn, 450)
    add_ready(conn, "t.a", 30)  # the workers are busy: a backlog stands
    for _ in range(3):
        add_job(conn, 5)

    proc = run_cli("requeue", "--status", "5", "--dry-run", "--json")

    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)["forecast"]
    expected = forecast(Effect(3, (Change("t.a", added=3),)), flow(conn), WINDOW_S)
    assert got == expected.as_dict()
    (t,) = got["types"]
    assert (t["completions"], t["added"], t["backlog"], t["clearing"]) == (450, 3, 33, "clears")
    assert got["text"].startswith("3 jobs: the backlog clears in ~20 s at the present rate")


def test_a_requeue_dry_run_says_the_forecast_in_a_line(run_cli: CLI, conn: Conn) -> None:
    completed(conn, 450)
    add_ready(conn, "t.a", 30)
    add_job(conn, 5)

    proc = run_cli("requeue", "--status", "5", "--dry-run")

    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())  # as wrapped to the terminal's width
    assert "forecast: 1 job: the backlog clears in ~20 s at the present rate" in text


def test_a_requeue_onto_workers_that_kept_up_says_there_is_no_clear_time(
    run_cli: CLI, conn: Conn
) -> None:
    completed(conn, 450)
    add_job(conn, 5)

    proc = run_cli("requeue", "--status", "5", "--dry-run", "--json")

    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)["forecast"]
    assert got["types"][0]["clearing"] == "kept up" and got["types"][0]["clear_s"] is None


def test_a_resume_preview_forecasts_the_types_waiting_jobs(conn: Conn) -> None:
    completed(conn, 300, "t.p")
    add_ready(conn, "t.p", 600)
    sel = ops.Selection(task_type="t.p")
    ops.PAUSE.execute(conn, sel, actor=ACTOR)

    p = ops.RESUME.preview(conn, sel)

    assert p.forecast is not None
    assert p.forecast.types[0].backlog == 600
    assert p.forecast.text.startswith("600 jobs: the backlog clears in ~10 min")


def test_a_limit_preview_says_what_its_rate_takes_at_least(conn: Conn) -> None:
    completed(conn, 3000, "t.l")  # 10/s counted
    add_ready(conn, "t.l", 120)

    p = ops.LIMIT.preview(
        conn, ops.Selection(task_type="t.l"), ops.LimitParams(rate=ops.Rate(1, 1.0))
    )

    assert p.forecast is not None
    assert (
        p.forecast.text
        == "the backlog clears in ~2 min at its rate limit of 1/s (±5 % at this volume)"
    )


def test_an_action_that_moves_no_jobs_has_no_forecast(conn: Conn) -> None:
    completed(conn, 450)
    add_job(conn, 1)

    p = ops.CANCEL.preview(conn, ops.Selection(task_type="t.a"))

    assert p.count == 1 and p.forecast is None
    assert "forecast" not in p.as_dict()


def test_a_limit_dry_run_says_the_forecast_after_the_change(run_cli: CLI, conn: Conn) -> None:
    completed(conn, 3000, "t.l")
    add_ready(conn, "t.l", 120)

    proc = run_cli("limit", "t.l", "--rate", "1/s", "--dry-run")

    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "forecast: the backlog clears in ~2 min at its rate limit of 1/s" in text
