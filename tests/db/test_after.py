"""Fan-in: a job posted ``after=`` others exists at once and runs only once every one
of them has succeeded; a parent that ends Fatal or Cancelled cancels it (and the
jobs that wait for it), unless it was posted with ``after_failure="run"``."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from skconsole.core.errors import FatalTaskError, InvalidJobError, UnknownJobError
from skconsole.core.find_query import parse_line
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import load_sql
from skconsole.producer import AsyncProducer, Job, Producer
from skconsole.testing import run_until_idle
from skconsole.worker import upkeep
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from tests.support.rows import one_row
from tests.support.statuses import status_of
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]

tasks = TaskRegistry(TaskOptions(max_attempts=1, timeout=30.0))
#: a gate per name: a "fanin.gate" job waits for its gate, then succeeds or fails
gates: dict[str, threading.Event] = {}
#: every run of a "fanin.child" job: its id
runs: list[uuid.UUID] = []
runs_lock = threading.Lock()


@tasks.task("fanin.gate")
def gate(payload: dict[str, Any], ctx: JobContext) -> None:
    if not gates.setdefault(payload["gate"], threading.Event()).wait(30):
        raise RuntimeError("the gate never opened")
    if payload.get("fail"):
        raise FatalTaskError("payment declined")


@tasks.task("fanin.child")
def child(payload: Any, ctx: JobContext) -> None:
    with runs_lock:
        runs.append(ctx.task_id)


@tasks.task("fanin.split")
def split(payload: Any, ctx: JobContext) -> None:
    """Posts two parts and a job after both: the usual fan-out, fan-in."""
    parts = [ctx.post("fanin.gate", {"gate": name}) for name in payload["parts"]]
    ctx.post("fanin.child", {"joined": True}, after=parts)


@tasks.task("fanin.posts_after")
def posts_after(payload: dict[str, Any], ctx: JobContext) -> None:
    ctx.post("fanin.child", {}, after=payload["after"])


@pytest.fixture(autouse=True)
def _fresh_gates() -> Iterator[None]:
    gates.clear()
    runs.clear()
    yield
    for event in gates.values():
        event.set()


def open_gate(name: str) -> None:
    gates.setdefault(name, threading.Event()).set()


def queued(conn: Conn, task_id: uuid.UUID) -> bool:
    row = conn.execute("SELECT count(*) FROM sk_tasks_queue_t WHERE task_id = %s", (task_id,))
    return row.fetchone() == (1,)


def edges(conn: Conn, task_id: uuid.UUID) -> int:
    row = conn.execute("SELECT count(*) FROM sk_task_after_t WHERE task_id = %s", (task_id,))
    found = row.fetchone()
    assert found is not None
    return int(found[0])


def error_of(conn: Conn, task_id: uuid.UUID) -> str:
    row = one_row(
        conn,
        "SELECT task_last_error::json ->> 'Message' FROM sk_task_results_t WHERE task_id = %s",
        (task_id,),
    )
    return str(row[0])


@pytest.fixture
def no_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    """The upkeep sweep off: what happens is the finish statements' own doing."""
    monkeypatch.setattr(upkeep, "AFTER_SWEEP_S", 3600.0)


def test_a_job_after_others_waits_without_a_queue_row_until_the_last_succeeds(
    db: Database, conn: Conn, no_sweep: None
) -> None:
    with Producer(db) as p:
        first = p.post("fanin.gate", {"gate": "a"})
        second = p.post("fanin.gate", {"gate": "b"})
        joined = p.post("fanin.child", {}, after=[first, second, first])
    assert (status_of(conn, joined), queued(conn, joined), edges(conn, joined)) == (
        JobStatus.UNPROCESSED,
        False,
        2,
    )
    with EngineThread(db.dsn, tasks):
        open_gate("a")
        wait_until(lambda: status_of(conn, first) == JobStatus.PROCESSED, timeout=30)
        # one parent succeeded: the worker, claiming all along, has taken nothing
        assert (status_of(conn, joined), queued(conn, joined), runs) == (
            JobStatus.UNPROCESSED,
            False,
            [],
        )
        open_gate("b")
        wait_until(lambda: status_of(conn, joined) == JobStatus.PROCESSED, timeout=30)
    assert runs == [joined]
    assert edges(conn, joined) == 0
    row = conn.execute(
        "SELECT sk_after_ids FROM sk_task_results_t WHERE task_id = %s", (joined,)
    ).fetchone()
    assert row is not None and sorted(row[0]) == sorted([first, second])


def test_a_parent_ending_fatal_cancels_the_job_naming_it(
    db: Database, conn: Conn, no_sweep: None
) -> None:
    with Producer(db) as p:
        ok = p.post("fanin.gate", {"gate": "ok"})
        bad = p.post("fanin.gate", {"gate": "bad", "fail": True})
        joined = p.post("fanin.child", {}, after=[ok, bad])
    with EngineThread(db.dsn, tasks):
        open_gate("bad")
        wait_until(lambda: status_of(conn, joined) == JobStatus.CANCELLED, timeout=30)
        open_gate("ok")
        wait_until(lambda: status_of(conn, ok) == JobStatus.PROCESSED, timeout=30)
    assert error_of(conn, joined) == (
        f"cancelled: waited for job {str(bad)[:8]} (fanin.gate), which ended Fatal"
    )
    assert (runs, queued(conn, joined), edges(conn, joined)) == ([], False, 0)


def test_the_cancel_cascades_to_the_jobs_that_wait_for_the_cancelled_one(
    db: Database, conn: Conn, no_sweep: None
) -> None:
    with Producer(db) as p:
        bad = p.post("fanin.gate", {"gate": "bad", "fail": True})
        middle = p.post("fanin.child", {}, after=[bad])
        last = p.post("fanin.child", {}, after=[middle])
    with EngineThread(db.dsn, tasks):
        open_gate("bad")
        wait_until(lambda: status_of(conn, last) == JobStatus.CANCELLED, timeout=30)
    assert status_of(conn, middle) == JobStatus.CANCELLED
    assert error_of(conn, last) == (
        f"cancelled: waited for job {str(middle)[:8]} (fanin.child), which ended Cancelled"
    )
    assert runs == []


def test_after_failure_run_counts_a_failed_parent_as_done(
    db: Database, conn: Conn, no_sweep: None
) -> None:
    with Producer(db) as p:
        bad = p.post("fanin.gate", {"gate": "bad", "fail": True})
        cleanup = p.post("fanin.child", {}, after=[bad], after_failure="run")
    with EngineThread(db.dsn, tasks):
        open_gate("bad")
        wait_until(lambda: status_of(conn, cleanup) == JobStatus.PROCESSED, timeout=30)
    assert status_of(conn, bad) == JobStatus.FATAL
    assert runs == [cleanup]


def test_parents_that_already_succeeded_make_the_job_claimable_at_once(
    db: Database, conn: Conn
) -> None:
    with Producer(db) as p:
        done = p.post("fanin.gate", {"gate": "a"})
    conn.execute("UPDATE sk_task_results_t SET task_status = 3 WHERE task_id = %s", (done,))
    conn.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = %s", (done,))
    with Producer(db) as p:
        joined = p.post("fanin.child", {}, after=[done])
    assert (status_of(conn, joined), queued(conn, joined), edges(conn, joined)) == (
        JobStatus.UNPROCESSED,
        True,
        0,
    )


def test_a_parent_already_fatal_at_post_cancels_the_job_at_once(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        bad = p.post("fanin.gate", {"gate": "a"})
    conn.execute("UPDATE sk_task_results_t SET task_status = 6 WHERE task_id = %s", (bad,))
    conn.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = %s", (bad,))
    with Producer(db) as p:
        joined = p.post("fanin.child", {}, after=[bad])
    assert (status_of(conn, joined), queued(conn, joined), edges(conn, joined)) == (
        JobStatus.CANCELLED,
        False,
        0,
    )
    assert error_of(conn, joined).endswith("which ended Fatal")


def test_an_unknown_id_is_a_clear_error_and_nothing_is_written(db: Database, conn: Conn) -> None:
    ghost = uuid.uuid4()
    with Producer(db) as p:
        real = p.post("fanin.gate", {"gate": "a"})
        with pytest.raises(UnknownJobError, match=f"after= names no job: {ghost}"):
            p.post_many([Job("fanin.child", {"n": 1}), Job("fanin.child", {}, after=[real, ghost])])
    count = conn.execute("SELECT count(*) FROM sk_task_results_t").fetchone()
    assert count == (1,)


def test_a_job_cannot_wait_for_itself_nor_be_keyed() -> None:
    with pytest.raises(InvalidJobError, match="cannot wait for itself"):
        Job("fanin.child", key="k", after=[Job("fanin.child", key="k").task_id])
    with pytest.raises(InvalidJobError, match="keyed job cannot wait"):
        Job("fanin.child", key="k", after=[uuid.uuid4()])
    with pytest.raises(InvalidJobError, match="after_failure"):
        Job("fanin.child", after=[uuid.uuid4()], after_failure="ignore")


def test_a_job_may_wait_for_one_posted_earlier_in_the_same_post(db: Database, conn: Conn) -> None:
    first = Job("fanin.gate", {"gate": "a"})
    second = Job("fanin.child", {}, after=[first.task_id])
    third = Job("fanin.child", {}, after=[second.task_id])
    with Producer(db) as p:
        p.post_many([third, second, first])
    assert [edges(conn, j.task_id) for j in (first, second, third)] == [0, 1, 1]
    assert [queued(conn, j.task_id) for j in (first, second, third)] == [True, False, False]


def test_a_bulk_post_after_one_job_is_released_by_its_success_all_at_once(
    db: Database, conn: Conn, no_sweep: None
) -> None:
    with Producer(db) as p:
        parent = p.post("fanin.gate", {"gate": "a"})
        result = p.post_many([Job("fanin.child", {"n": n}, after=[parent]) for n in range(500)])
    assert result.posted == 500
    found = conn.execute("SELECT count(*) FROM sk_task_after_t WHERE after_id = %s", (parent,))
    assert found.fetchone() == (500,)
    with EngineThread(db.dsn, tasks):
        open_gate("a")
        wait_until(lambda: len(runs) == 500, timeout=60)
    assert sorted(runs) == sorted(result.ids)
    assert conn.execute("SELECT count(*) FROM sk_task_after_t").fetchone() == (0,)


def test_a_handler_posts_parts_and_a_job_after_them(
    db: Database, conn: Conn, no_sweep: None
) -> None:
    with Producer(db) as p:
        root = p.post("fanin.split", {"parts": ["x", "y"]})
    with EngineThread(db.dsn, tasks):
        wait_until(lambda: status_of(conn, root) == JobStatus.PROCESSED, timeout=30)
        (joined,) = [
            r[0]
            for r in conn.execute(
                "SELECT task_id FROM sk_task_results_t WHERE task_type = 'fanin.child'"
            ).fetchall()
        ]
        assert (status_of(conn, joined), queued(conn, joined), edges(conn, joined)) == (
            JobStatus.UNPROCESSED,
            False,
            2,
        )
        open_gate("x")
        open_gate("y")
        wait_until(lambda: status_of(conn, joined) == JobStatus.PROCESSED, timeout=30)
    assert runs == [joined]


def test_a_parent_finished_by_a_dotnet_consumer_is_released_by_the_sweep(
    db: Database, conn: Conn
) -> None:
    with Producer(db) as p:
        parent = p.post("fanin.gate", {"gate": "a"})
        joined = p.post("fanin.child", {}, after=[parent])
    # as Stakhanovise.NET finishes a job: its own UPDATE, no skconsole SQL
    conn.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = %s", (parent,))
    conn.execute("UPDATE sk_task_results_t SET task_status = 3 WHERE task_id = %s", (parent,))
    assert (status_of(conn, joined), queued(conn, joined)) == (JobStatus.UNPROCESSED, False)
    with EngineThread(db.dsn, tasks):
        wait_until(lambda: status_of(conn, joined) == JobStatus.PROCESSED, timeout=30)
    assert runs == [joined]


def test_a_transactional_post_after_others_commits_with_the_callers_rows(
    db: Database, conn: Conn, dsn: str
) -> None:
    with Producer(db) as p:
        parent = p.post("fanin.gate", {"gate": "a"})
    with psycopg.connect(dsn) as caller, Producer() as p:
        joined = p.post("fanin.child", {}, after=[parent], connection=caller)
        caller.rollback()
    found = conn.execute("SELECT count(*) FROM sk_task_results_t WHERE task_id = %s", (joined,))
    assert found.fetchone() == (0,)
    assert edges(conn, joined) == 0


def test_cancelling_a_waiting_job_deletes_its_edges_and_cascades(
    db: Database, conn: Conn, run_cli: Any
) -> None:
    with Producer(db) as p:
        parent = p.post("fanin.gate", {"gate": "a"})
        waiting = p.post("fanin.child", {}, after=[parent])
        behind = p.post("fanin.child", {}, after=[waiting])
    done = run_cli("cancel", "--id", str(waiting), "--yes")
    assert done.returncode == 0, done.stderr
    assert (status_of(conn, waiting), edges(conn, waiting)) == (JobStatus.CANCELLED, 0)
    assert status_of(conn, behind) == JobStatus.CANCELLED
    assert error_of(conn, behind) == (
        f"cancelled: waited for job {str(waiting)[:8]} (fanin.child), which ended Cancelled"
    )
    assert status_of(conn, parent) == JobStatus.UNPROCESSED and queued(conn, parent)


def test_cancelling_a_queued_parent_cancels_the_jobs_after_it(
    db: Database, conn: Conn, run_cli: Any
) -> None:
    with Producer(db) as p:
        parent = p.post("fanin.gate", {"gate": "a"})
        waiting = p.post("fanin.child", {}, after=[parent])
    done = run_cli("cancel", "--id", str(parent), "--yes")
    assert done.returncode == 0, done.stderr
    assert status_of(conn, waiting) == JobStatus.CANCELLED
    assert error_of(conn, waiting).endswith("which ended Cancelled")


def test_job_and_why_say_what_a_waiting_job_waits_for(
    db: Database, conn: Conn, run_cli: Any
) -> None:
    with Producer(db) as p:
        done = p.post("fanin.gate", {"gate": "a"})
        pending = p.post("fanin.gate", {"gate": "b"})
        joined = p.post("fanin.child", {}, after=[done, pending])
    conn.execute("UPDATE sk_task_results_t SET task_status = 3 WHERE task_id = %s", (done,))
    shown = run_cli("job", str(joined)[:8])
    assert shown.returncode == 0, shown.stderr
    assert f"waits for 1 of 2: {str(pending)[:8]} Unprocessed" in shown.stdout
    why = run_cli("why", str(joined), "--json")
    assert why.returncode == 0, why.stderr
    found = json.loads(why.stdout)
    (first, *_) = found["causes"]
    assert first["code"] == "after"
    assert first["evidence"].startswith("waits for 1 job(s)")
    assert f"{pending} (fanin.gate) Unprocessed" in first["evidence"]
    assert "post it without after" in first["fix"]
    assert found["facts"]["after"]["waits_for"] == [str(pending)]


def test_job_says_what_a_released_job_was_posted_after(
    db: Database, conn: Conn, run_cli: Any
) -> None:
    with Producer(db) as p:
        parent = p.post("fanin.gate", {"gate": "a"})
    conn.execute("UPDATE sk_task_results_t SET task_status = 3 WHERE task_id = %s", (parent,))
    with Producer(db) as p:
        joined = p.post("fanin.child", {}, after=[parent])
    shown = run_cli("job", str(joined), "--json")
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)
    assert found["after"] == [
        {
            "task_id": str(parent),
            "task_type": "fanin.gate",
            "status": JobStatus.PROCESSED,
            "status_name": "Processed",
        }
    ]
    assert found["waits_for"] == []


def test_enqueue_after_takes_ids_and_prefixes(db: Database, conn: Conn, run_cli: Any) -> None:
    with Producer(db) as p:
        first = p.post("fanin.gate", {"gate": "a"})
        second = p.post("fanin.gate", {"gate": "b"})
    posted = run_cli(
        "enqueue", "fanin.child", "--after", str(first)[:8], "--after", str(second), "--json"
    )
    assert posted.returncode == 0, posted.stderr
    (job,) = json.loads(posted.stdout)
    joined = uuid.UUID(job["id"])
    assert (status_of(conn, joined), queued(conn, joined), edges(conn, joined)) == (
        JobStatus.UNPROCESSED,
        False,
        2,
    )


def test_enqueue_after_an_unknown_prefix_says_so_and_posts_nothing(
    db: Database, conn: Conn, run_cli: Any
) -> None:
    posted = run_cli("enqueue", "fanin.child", "--after", "abcdef12")
    assert posted.returncode != 0
    assert "no job id starts with" in posted.stderr
    assert conn.execute("SELECT count(*) FROM sk_task_results_t").fetchone() == (0,)


def test_the_edges_of_a_purged_waiting_job_are_swept_away(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        parent = p.post("fanin.gate", {"gate": "a"})
        waiting = p.post("fanin.child", {}, after=[parent])
    conn.execute("DELETE FROM sk_task_results_t WHERE task_id = %s", (waiting,))
    conn.execute("UPDATE sk_task_results_t SET task_status = 3 WHERE task_id = %s", (parent,))
    conn.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = %s", (parent,))
    swept = conn.execute(load_sql("queries/after_sweep"), {"scan": 10, "from": None}).fetchone()
    assert swept == (0, parent, 1)
    assert edges(conn, waiting) == 0


def test_find_after_lists_the_jobs_still_waiting_for_a_job(
    db: Database, conn: Conn, run_cli: Any
) -> None:
    with Producer(db) as p:
        parent = p.post("fanin.gate", {"gate": "a"})
        other = p.post("fanin.gate", {"gate": "b"})
        waiting = p.post("fanin.child", {}, after=[parent, other])
        p.post("fanin.child", {}, after=[other])
    found = run_cli("find", "--after", str(parent)[:8], "--json")
    assert found.returncode == 0, found.stderr
    assert [j["task_id"] for j in json.loads(found.stdout)["jobs"]] == [str(waiting)]
    line = parse_line(f"after={parent}")
    assert (line.after, parse_line(line.describe()).after) == (parent, parent)


def test_bump_and_edit_of_a_waiting_job_are_what_its_release_queues(
    db: Database, conn: Conn, run_cli: Any, no_sweep: None
) -> None:
    with Producer(db) as p:
        parent = p.post("fanin.gate", {"gate": "a"})
        waiting = p.post("fanin.child", {"v": 1}, priority=9, delay=3600, after=[parent])
    bumped = run_cli("bump", "--id", str(waiting), "--to", "2", "--yes", "--json")
    assert bumped.returncode == 0, bumped.stderr
    due = run_cli("bump", "--id", str(waiting), "--now", "--yes")
    assert due.returncode == 0, due.stderr
    edited = run_cli("edit", "--id", str(waiting), "--payload", '{"v": 2}', "--yes")
    assert edited.returncode == 0, edited.stderr
    assert (status_of(conn, waiting), queued(conn, waiting)) == (JobStatus.UNPROCESSED, False)
    with EngineThread(db.dsn, tasks):
        open_gate("a")
        wait_until(lambda: status_of(conn, waiting) == JobStatus.PROCESSED, timeout=30)
    row = conn.execute(
        "SELECT task_priority, task_payload::jsonb, task_first_processing_attempted_at_ts"
        " < task_posted_at_ts + interval '1 hour' FROM sk_task_results_t WHERE task_id = %s",
        (waiting,),
    ).fetchone()
    assert row == (2, {"v": 2}, True)


def test_the_sweep_looks_at_a_bounded_number_of_parents_a_round_and_goes_on(
    db: Database, conn: Conn
) -> None:
    with Producer(db) as p:
        parents = sorted([p.post("fanin.gate", {"gate": str(n)}) for n in range(3)], key=str)
        waiting = [p.post("fanin.child", {"n": n}, after=[parents[n]]) for n in range(3)]
        p.post_many([Job("fanin.child", {"n": n}, after=[parents[0]]) for n in range(50)])
    conn.execute(
        "UPDATE sk_task_results_t SET task_status = 3 WHERE task_id = ANY(%s)", (parents[1:],)
    )
    sweep = load_sql("queries/after_sweep")
    first = conn.execute(sweep, {"scan": 2, "from": None}).fetchone()
    assert first == (1, parents[1], 2)  # parents[0] still waits: 50 children, one step
    assert [queued(conn, w) for w in waiting] == [False, True, False]
    second = conn.execute(sweep, {"scan": 2, "from": parents[1]}).fetchone()
    assert second == (1, parents[2], 1)  # fewer than 2: the next round starts over
    assert [queued(conn, w) for w in waiting] == [False, True, True]


def test_the_async_producer_posts_after_others_too(db: Database, conn: Conn) -> None:
    async def post() -> tuple[uuid.UUID, uuid.UUID]:
        async with AsyncProducer(db) as p:
            parent = await p.post("fanin.gate", {"gate": "a"})
            return parent, await p.post("fanin.child", {}, after=[parent])

    parent, joined = asyncio.run(post())
    assert (status_of(conn, joined), queued(conn, joined), edges(conn, joined)) == (
        JobStatus.UNPROCESSED,
        False,
        1,
    )
    assert status_of(conn, parent) == JobStatus.UNPROCESSED
    with pytest.raises(UnknownJobError):
        asyncio.run(_post_after_ghost(db))


async def _post_after_ghost(db: Database) -> None:
    async with AsyncProducer(db) as p:
        await p.post("fanin.child", {}, after=[uuid.uuid4()])


def test_a_handler_posting_after_an_unknown_id_gets_a_cancelled_child_saying_so(
    db: Database, conn: Conn
) -> None:
    ghost = uuid.uuid4()
    with Producer(db) as p:
        root = p.post("fanin.posts_after", {"after": [str(ghost)]})
    with EngineThread(db.dsn, tasks):
        wait_until(lambda: status_of(conn, root) == JobStatus.PROCESSED, timeout=30)
    (child,) = [
        r[0]
        for r in conn.execute(
            "SELECT task_id FROM sk_task_results_t WHERE sk_parent_task_id = %s", (root,)
        ).fetchall()
    ]
    assert (status_of(conn, child), queued(conn, child)) == (JobStatus.CANCELLED, False)
    assert error_of(conn, child) == f"cancelled: waited for job {str(ghost)[:8]}, which is gone"
    assert runs == []


def test_run_until_idle_lists_a_job_still_waiting_for_others_as_pending(
    db: Database, conn: Conn
) -> None:
    with Producer(db) as p:
        bad = p.post("fanin.gate", {"gate": "a"})
        waiting = p.post("fanin.child", {}, after=[bad])
    # parked for an operator (5 Faulted): the job after it keeps waiting
    conn.execute("UPDATE sk_task_results_t SET task_status = 5 WHERE task_id = %s", (bad,))
    conn.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = %s", (bad,))
    report = run_until_idle(db, tasks, types=["fanin.child"])
    assert [j.task_id for j in report.pending] == [waiting]
    assert report.jobs == ()


def _sweep(conn: Conn) -> None:
    """One round of the upkeep sweep, now (it would cancel a job whose parent is gone)."""
    conn.execute(load_sql("queries/after_sweep"), {"scan": 100, "from": None})


def test_a_succeeded_parent_purged_by_an_operator_still_counts_for_the_job_after_it(
    db: Database, conn: Conn, run_cli: Any
) -> None:
    with Producer(db) as p:
        first = p.post("fanin.gate", {"gate": "a"})
        second = p.post("fanin.gate", {"gate": "b"})
        joined = p.post("fanin.child", {}, after=[first, second])
    with EngineThread(db.dsn, tasks):
        open_gate("a")
        wait_until(lambda: status_of(conn, first) == JobStatus.PROCESSED, timeout=30)
        purged = run_cli("purge", "--id", str(first), "--yes")
        assert purged.returncode == 0, purged.stdout + purged.stderr
        _sweep(conn)
        # waits for the second
        assert (status_of(conn, joined), edges(conn, joined)) == (JobStatus.UNPROCESSED, 2)
        open_gate("b")
        wait_until(lambda: status_of(conn, joined) == JobStatus.PROCESSED, timeout=30)
    assert runs == [joined]


def test_a_succeeded_parent_purged_by_retention_still_counts_for_the_job_after_it(
    db: Database, conn: Conn, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skconsole import ops
    from skconsole.worker import retention

    monkeypatch.setattr(retention, "FIRST_ROUND_AFTER_S", 0.0)
    monkeypatch.setattr(retention, "ROUND_EVERY_S", 0.2)
    with Producer(db) as p:
        first = p.post("fanin.gate", {"gate": "a"})
        second = p.post("fanin.gate", {"gate": "b"})
        joined = p.post("fanin.child", {}, after=[first, second])
    ops.RETENTION.execute(
        conn,
        ops.Selection(task_type="fanin.gate"),
        ops.RetentionParams(older_than_s=3600.0),
        actor=ops.Actor(user="tester", host="test-host"),
    )
    with EngineThread(db.dsn, tasks, reap=True):
        open_gate("a")
        wait_until(lambda: status_of(conn, first) == JobStatus.PROCESSED, timeout=30)
        conn.execute(  # it finished long ago, as far as the policy can tell
            "UPDATE sk_task_results_t SET task_processing_finalized_at_ts = now() - interval '2h'"
            " WHERE task_id = %s",
            (first,),
        )
        wait_until(lambda: not _exists(conn, first), timeout=30)
        _sweep(conn)
        assert (status_of(conn, joined), edges(conn, joined)) == (JobStatus.UNPROCESSED, 2)
        open_gate("b")
        wait_until(lambda: status_of(conn, joined) == JobStatus.PROCESSED, timeout=30)
    assert runs == [joined]


def _exists(conn: Conn, task_id: uuid.UUID) -> bool:
    row = conn.execute("SELECT 1 FROM sk_task_results_t WHERE task_id = %s", (task_id,)).fetchone()
    return row is not None
