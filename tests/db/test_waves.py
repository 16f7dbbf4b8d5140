"""Requeue in canary waves: the plan is stored, the first wave is requeued at once, the
next only once the last one's jobs finished and passed the gate; any process carries it
on, exactly once; a cancel stops it; each wave has its audit row."""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from uuid import UUID

import psycopg
import pytest

from skconsole import ops
from skconsole.core.actor import Origin
from skconsole.core.errors import ConfigError
from skconsole.core.waves import PlanState
from skconsole.db.connect import Database
from skconsole.db.waves import Driver, aopen_plans
from skconsole.ops import Actor, Selection
from skconsole.ops.audit import entries as audit_entries
from skconsole.ops.audit_line import what
from skconsole.ops.waves import advance, cancel
from skconsole.read import waves as read_waves
from skconsole.testing import run_until_idle
from skconsole.worker.registry import TaskRegistry
from tests.db.test_ops import add_job

Conn = psycopg.Connection[Any]
ACTOR = Actor(user="tester", host="test-host", origin=Origin.CLI)
DRIVER = Driver(Origin.CLI, by="test")
WAVES = ops.RequeueParams(waves=(0.1, 0.5, 1.0), gate=0.95)
FLAKY = "t.waves"


def faulted_jobs(conn: Conn, n: int) -> list[UUID]:
    """``n`` jobs parked as 5 Faulted, payload {"n": i}, posted in that order."""
    jobs = [add_job(conn, 5, task_type=FLAKY) for _ in range(n)]
    conn.execute(
        "UPDATE sk_task_results_t r SET task_payload = json_build_object('n', j.n - 1)::text"
        " FROM unnest(%s::uuid[]) WITH ORDINALITY AS j(task_id, n) WHERE r.task_id = j.task_id",
        (jobs,),
    )
    return jobs


def failing_for(numbers: range) -> TaskRegistry:
    """A handler that fails for the payloads whose n is in ``numbers``."""
    tasks = TaskRegistry()

    @tasks.task(FLAKY, max_attempts=1)
    def run(payload: dict[str, int]) -> None:
        if payload["n"] in numbers:
            raise RuntimeError(f"partner refused n={payload['n']}")

    return tasks


def statuses(conn: Conn, jobs: list[UUID]) -> list[int]:
    rows = dict(
        conn.execute(
            "SELECT task_id, task_status FROM sk_task_results_t WHERE task_id = ANY(%s)", (jobs,)
        ).fetchall()
    )
    return [rows[j] for j in jobs]


def start(conn: Conn, params: ops.RequeueParams = WAVES) -> ops.ActionResult:
    preview = ops.REQUEUE.preview(conn, Selection(task_type=FLAKY), params)
    return ops.REQUEUE.execute(conn, preview.selection, params, actor=ACTOR, ids=preview.ids)


def plan_of(result: ops.ActionResult) -> int:
    plan_id = result.details["plan"]
    assert isinstance(plan_id, int)
    return plan_id


def drive_to_the_end(conn: Conn, db: Database, plan_id: int, tasks: TaskRegistry) -> None:
    """Run the jobs and advance the plan until it is over (the test is its only driver
    besides the in-process worker's upkeep, which may take a step too)."""
    for _ in range(20):
        run_until_idle(db, tasks, backoff=0)
        advance(conn, plan_id, DRIVER)
        found = read_waves.plan(conn, plan_id)
        assert found is not None
        if not found.state.is_open:
            return
    raise AssertionError("the plan did not end")


def requeued_per_wave(conn: Conn, plan_id: int) -> list[list[UUID]]:
    rows = conn.execute(
        "SELECT requeued_ids FROM sk_waves_t WHERE plan_id = %s ORDER BY wave", (plan_id,)
    ).fetchall()
    return [list(r[0]) for r in rows]


def test_the_first_wave_requeues_its_share_of_the_jobs_in_requeue_order(conn: Conn) -> None:
    jobs = faulted_jobs(conn, 40)

    result = start(conn)

    assert result.requested == 4 and result.changed == 4
    assert statuses(conn, jobs[:4]) == [1] * 4 and statuses(conn, jobs[4:]) == [5] * 36
    found = read_waves.plan(conn, plan_of(result))
    assert found is not None and found.state is PlanState.WAITING and found.sizes == (4, 16, 20)


def test_a_wave_is_not_judged_until_every_job_of_it_has_finished(conn: Conn) -> None:
    faulted_jobs(conn, 20)
    plan_id = plan_of(start(conn))

    stepped = advance(conn, plan_id, DRIVER)

    assert stepped.state is PlanState.WAITING and "0 of 2 finished" in stepped.said


def test_the_plan_stops_at_the_first_wave_whose_gate_fails(conn: Conn, db: Database) -> None:
    jobs = faulted_jobs(conn, 40)
    plan_id = plan_of(start(conn))

    drive_to_the_end(conn, db, plan_id, failing_for(range(4, 12)))  # 8 of wave 2's 16

    found = read_waves.plan(conn, plan_id)
    assert found is not None and found.state is PlanState.STOPPED and found.wave == 2
    assert found.reason is not None and found.reason.startswith(
        "wave 2: 50% succeeded (gate 95%): 8 of 16 failed, e.g. RuntimeError: partner refused"
    )
    assert statuses(conn, jobs[20:]) == [5] * 20  # the third wave never went


def test_every_wave_goes_while_the_gate_holds_and_each_job_is_requeued_once(
    conn: Conn, db: Database
) -> None:
    jobs = faulted_jobs(conn, 40)
    plan_id = plan_of(start(conn))

    drive_to_the_end(conn, db, plan_id, failing_for(range(0)))

    found = read_waves.plan(conn, plan_id)
    assert found is not None and found.state is PlanState.DONE
    per_wave = requeued_per_wave(conn, plan_id)
    assert [len(w) for w in per_wave] == [4, 16, 20]
    assert sorted(j for w in per_wave for j in w) == sorted(jobs)


def test_each_wave_has_its_audit_row_and_a_stop_has_one_saying_why(
    conn: Conn, db: Database
) -> None:
    faulted_jobs(conn, 40)
    plan_id = plan_of(start(conn))

    drive_to_the_end(conn, db, plan_id, failing_for(range(4, 12)))

    rows = conn.execute(
        "SELECT audit_action, audit_count, audit_details FROM sk_audit_t ORDER BY audit_id"
    ).fetchall()
    waves = [(a, n, d["wave"]) for a, n, d in rows if a == "requeue"]
    assert waves == [("requeue", 4, 1), ("requeue", 16, 2)]
    assert rows[-1][0] == "waves" and rows[-1][2]["state"] == "stopped-gate-failed"
    second = next(d for a, _, d in rows if a == "requeue" and d["wave"] == 2)
    assert second["because"].startswith("wave 1: 100% succeeded")
    lines = [what(e) for e in reversed(audit_entries(conn))]
    assert lines[1] == (
        f"requeue 16 jobs of type {FLAKY}, error counts kept,"
        f" in waves 10%,50%,100% gated at 95%, wave 2 of 3 of waves requeue #{plan_id}"
    )
    assert lines[-1].startswith(f"waves requeue #{plan_id} stopped-gate-failed: wave 2: 50%")


def test_jobs_no_longer_failed_at_their_wave_are_left_alone_and_counted(conn: Conn) -> None:
    jobs = faulted_jobs(conn, 20)
    plan_id = plan_of(start(conn))
    # before wave 2: one of its jobs is requeued by someone else, one is purged
    ops.REQUEUE.execute(conn, Selection(ids=(jobs[2],)), actor=ACTOR)
    conn.execute("DELETE FROM sk_task_results_t WHERE task_id = %s", (jobs[3],))
    conn.execute(
        "UPDATE sk_task_results_t SET task_status = 3 WHERE task_id = ANY(%s)", (jobs[:2],)
    )
    conn.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = ANY(%s)", (jobs[:2],))

    advance(conn, plan_id, DRIVER)

    (_, second) = read_waves.waves(conn, plan_id)
    assert second.requeued == 6 and (second.left_waiting, second.left_gone) == (1, 1)
    assert "1 already waiting or running, 1 gone (purged)" in second.left_words()
    assert conn.execute(
        "SELECT count(*) FROM sk_tasks_queue_t WHERE task_id = %s", (jobs[2],)
    ).fetchone() == (1,)


def test_two_drivers_racing_never_requeue_a_wave_twice(dsn: str, conn: Conn) -> None:
    jobs = faulted_jobs(conn, 200)
    params = ops.RequeueParams(waves=(0.5, 1.0), gate=0.5)
    plan_id = plan_of(start(conn, params))
    conn.execute(
        "UPDATE sk_task_results_t SET task_status = 3 WHERE task_id = ANY(%s)", (jobs[:100],)
    )
    conn.execute("DELETE FROM sk_tasks_queue_t")
    small = Driver(Origin.CLI, batch=7, by="racer")
    go = threading.Barrier(4)

    def race() -> None:
        with psycopg.connect(dsn, autocommit=True) as own:
            go.wait()
            for _ in range(50):
                advance(own, plan_id, small)

    racers = [threading.Thread(target=race) for _ in range(4)]
    for r in racers:
        r.start()
    for r in racers:
        r.join(60)

    per_wave = requeued_per_wave(conn, plan_id)
    assert [len(w) for w in per_wave] == [100, 100]
    assert sorted(per_wave[1]) == sorted(jobs[100:])
    assert conn.execute("SELECT count(*) FROM sk_tasks_queue_t").fetchone() == (100,)


def test_a_cancelled_plan_requeues_no_further_wave(conn: Conn) -> None:
    jobs = faulted_jobs(conn, 20)
    plan_id = plan_of(start(conn))
    conn.execute(
        "UPDATE sk_task_results_t SET task_status = 3 WHERE task_id = ANY(%s)", (jobs[:2],)
    )
    conn.execute("DELETE FROM sk_tasks_queue_t")

    audit_id = cancel(conn, plan_id, ACTOR)
    stepped = advance(conn, plan_id, DRIVER)

    assert not stepped.took and statuses(conn, jobs[2:]) == [5] * 18
    found = read_waves.plan(conn, plan_id)
    assert found is not None and found.state is PlanState.CANCELLED
    row = conn.execute(
        "SELECT audit_action FROM sk_audit_t WHERE audit_id = %s", (audit_id,)
    ).fetchone()
    assert row == ("waves",)


def test_cancelling_a_plan_that_is_over_says_so(conn: Conn) -> None:
    faulted_jobs(conn, 20)
    plan_id = plan_of(start(conn))
    cancel(conn, plan_id, ACTOR)

    with pytest.raises(ConfigError, match=f"waves requeue #{plan_id} is cancelled"):
        cancel(conn, plan_id, ACTOR)


def test_a_waves_preview_states_the_waves_and_the_gate(conn: Conn) -> None:
    faulted_jobs(conn, 20)

    preview = ops.REQUEUE.preview(conn, Selection(task_type=FLAKY), WAVES)

    assert preview.count == 20
    assert WAVES.phrase() == ", error counts kept, in waves 10%,50%,100% gated at 95%"


def test_the_plans_are_listed_newest_first(conn: Conn) -> None:
    faulted_jobs(conn, 20)
    first = plan_of(start(conn))
    second = plan_of(start(conn))

    assert [p.plan_id for p in read_waves.plans(conn)] == [second, first]


def test_the_workers_read_a_waiting_wave_once_per_interval_however_many_they_are(
    dsn: str, conn: Conn
) -> None:
    faulted_jobs(conn, 20)
    plan_id = plan_of(start(conn))
    advance(conn, plan_id, DRIVER)  # its jobs read now: not all finished

    async def open_plans(every_s: float) -> list[int]:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as aconn:
            return await aopen_plans(aconn, every_s=every_s)

    assert asyncio.run(open_plans(3600.0)) == []
    assert asyncio.run(open_plans(0.0)) == [plan_id]
