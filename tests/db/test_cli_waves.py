"""``skconsole requeue --waves`` and ``skconsole waves`` with real worker processes: the
command drives its plan and stops at the first wave whose gate fails, saying why; a
driver killed mid-plan leaves it to the workers, which requeue every job exactly once;
bad input is one clear line."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from typing import Any, LiteralString
from uuid import UUID

import psycopg
import pytest

from tests.conftest import ROOT, skconsole_cmd
from tests.db.test_ops import add_job
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
RunCli = Callable[..., subprocess.CompletedProcess[str]]
TASKS = ("--tasks", "tests.support.tasks_waves")
WIDE = {"COLUMNS": "250"}


def faulted_jobs(conn: Conn, n: int, failing: range = range(0)) -> list[UUID]:
    """``n`` jobs of t.waves parked as 5 Faulted, in posting order; those whose place is in
    ``failing`` fail when run again."""
    jobs = [add_job(conn, 5, task_type="t.waves") for _ in range(n)]
    conn.execute(
        "UPDATE sk_task_results_t r SET task_payload = json_build_object('n', j.n - 1,"
        " 'fail', (j.n - 1) = ANY(%s::integer[]))::text"
        " FROM unnest(%s::uuid[]) WITH ORDINALITY AS j(task_id, n) WHERE r.task_id = j.task_id",
        (list(failing), jobs),
    )
    return jobs


def one(conn: Conn, sql: LiteralString, params: tuple[Any, ...] = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (("--waves", "10%,5%"), "each wave must take more than the one before"),
        (("--waves", "abc"), "--waves takes percentages such as 1%,10%,50%,100%: 'abc'"),
        (("--waves", "10%,50%"), "the last wave must be 100%"),
        (("--waves", "10%,100%", "--gate", "150%"), "--gate 150%: the gate is a share from 0%"),
        (("--gate", "95%"), "--gate goes with --waves"),
        (("--waves", "10%,100%", "--spread", "10m"), "--spread and --waves do not go together"),
    ],
)
def test_bad_waves_input_is_one_clear_line(
    run_cli: RunCli, option: tuple[str, ...], said: str
) -> None:
    done = run_cli("requeue", "--type", "t.waves", *option, "--yes")

    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_requeue_waves_stops_at_the_first_wave_whose_gate_fails_and_says_why(
    run_cli: RunCli, conn: Conn, start_worker: Callable[..., Any]
) -> None:
    jobs = faulted_jobs(conn, 40, failing=range(4, 12))
    start_worker(*TASKS)

    done = run_cli("requeue", "--type", "t.waves", "--waves", "10%,50%,100%", "--yes", env=WIDE)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "requeued 4 job(s)" in done.stdout and "wave 1 of 3 of waves requeue #" in done.stdout
    assert "wave 1: 100% succeeded (gate 95%): 4 of 4" in done.stdout
    assert (
        "wave 2: 50% succeeded (gate 95%): 8 of 16 failed, e.g. RuntimeError: partner refused"
        in done.stdout
    )
    assert "stopped at wave 2 of 3, whose gate failed: 20 job(s)" in done.stdout
    waiting = one(
        conn,
        "SELECT count(*) FROM sk_task_results_t WHERE task_id = ANY(%s)"
        " AND task_status = 5 AND task_error_count = 1",
        (jobs[20:],),
    )
    assert waiting == 20  # the third wave was never requeued


def test_a_driver_killed_mid_plan_leaves_it_to_the_workers_who_requeue_each_job_once(
    dsn: str, conn: Conn, start_worker: Callable[..., Any]
) -> None:
    jobs = faulted_jobs(conn, 50)
    driver = subprocess.Popen(
        skconsole_cmd(
            "--dsn",
            dsn,
            "requeue",
            "--type",
            "t.waves",
            "--waves",
            "10%,50%,100%",
            "--gate",
            "90%",
            "--yes",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        wait_until(
            lambda: one(conn, "SELECT taken FROM sk_waves_t WHERE wave = 1") == 5,
            describe="the first wave requeued",
        )
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait(10)
    assert one(conn, "SELECT state FROM sk_wave_plans_t") == "waiting-for-wave"

    start_worker(*TASKS)

    wait_until(
        lambda: (
            one(conn, "SELECT state FROM sk_wave_plans_t") == "done"
            and one(conn, "SELECT count(*) FROM sk_task_results_t WHERE task_status = 3") == 50
        ),
        timeout=120,
        describe=lambda: conn.execute("SELECT * FROM sk_wave_plans_t").fetchall(),
    )
    per_wave = [
        list(r[0])
        for r in conn.execute("SELECT requeued_ids FROM sk_waves_t ORDER BY wave").fetchall()
    ]
    assert [len(w) for w in per_wave] == [5, 20, 25]
    assert sorted(j for w in per_wave for j in w) == sorted(jobs)  # each exactly once
    counts = conn.execute(
        "SELECT audit_count, audit_origin FROM sk_audit_t WHERE audit_action = 'requeue'"
        " ORDER BY audit_id"
    ).fetchall()
    assert counts == [(5, "cli"), (20, "worker"), (25, "worker")]
    attempts = one(conn, "SELECT max(task_error_count) FROM sk_task_results_t")
    assert attempts == 1  # no job ran twice for a wave: none failed again


def test_ctrl_c_leaves_the_plan_stored_and_says_how_to_go_on(dsn: str, conn: Conn) -> None:
    faulted_jobs(conn, 20)
    driver = subprocess.Popen(
        skconsole_cmd("--dsn", dsn, "requeue", "--type", "t.waves", "--waves", "10%,100%", "--yes"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **WIDE},
    )
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(driver.stdout or ()), daemon=True)
    reader.start()
    wait_until(
        lambda: any(line.startswith("waves requeue #") for line in said),
        describe=lambda: said,
    )

    driver.send_signal(signal.SIGINT)
    err = (driver.stderr or io.StringIO()).read()
    driver.wait(30)

    assert driver.returncode == 130, "".join(said) + err
    plan_id = one(conn, "SELECT plan_id FROM sk_wave_plans_t")
    assert f"skconsole waves resume {plan_id}" in err
    assert f"skconsole waves cancel {plan_id}" in err
    assert one(conn, "SELECT state FROM sk_wave_plans_t") == "waiting-for-wave"


def test_waves_lists_shows_and_cancels_a_plan(run_cli: RunCli, conn: Conn) -> None:
    faulted_jobs(conn, 20)
    started = run_cli("requeue", "--type", "t.waves", "--waves", "10%,100%", "--yes", "--json")
    plan_id = json.loads(started.stdout)["details"]["plan"]

    listed = run_cli("waves", "--json")
    shown = run_cli("waves", "show", str(plan_id), env=WIDE)
    cancelled = run_cli("waves", "cancel", str(plan_id), "--yes")
    again = run_cli("waves", "cancel", str(plan_id), "--yes")

    assert [p["plan_id"] for p in json.loads(listed.stdout)["plans"]] == [plan_id]
    assert f"waves requeue #{plan_id}" in shown.stdout and "wave 1 of 2" in shown.stdout
    assert cancelled.returncode == 0 and "no further wave goes" in cancelled.stdout
    assert again.returncode == 2 and "is cancelled: nothing to cancel" in again.stderr
    audit = run_cli("audit", env=WIDE)
    assert f"waves requeue #{plan_id} cancelled at wave 1" in audit.stdout
