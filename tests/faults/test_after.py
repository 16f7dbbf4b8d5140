"""Fan-in under faults: a worker SIGKILLed between a parent's success and its fan-in
child's release, and posts after= racing their parents' finishes. Real worker
processes; by counting, every child runs exactly once, after all its parents
succeeded, and no job is lost."""

from __future__ import annotations

import os
import random
import signal
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from skconsole.core.status import JobStatus
from skconsole.producer import Job, Producer
from tests.support.rows import one_row
from tests.support.tasks_faults import (
    all_final,
    completions,
    queue_count,
    status_counts,
    stop_gracefully,
    worker_ids_for_pid,
)
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]


def _state(conn: Conn, task_id: uuid.UUID) -> tuple[int, bool, int]:
    """A job's status, whether it has a queue row, and how many edges it still has."""
    row = one_row(
        conn,
        "SELECT r.task_status,"
        " EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id),"
        " (SELECT count(*) FROM sk_task_after_t e WHERE e.task_id = r.task_id)"
        " FROM sk_task_results_t r WHERE r.task_id = %s",
        (task_id,),
    )
    return int(row[0]), bool(row[1]), int(row[2])


def _diag(conn: Conn, *workers: Any) -> Callable[[], str]:
    def describe() -> str:
        tails = "\n".join(f"--- worker {w.pid}:\n{w.drain.tail(30)}" for w in workers)
        edges = conn.execute("SELECT count(*) FROM sk_task_after_t").fetchone()
        return f"statuses {status_counts(conn)}, queue {queue_count(conn)}, edges {edges}\n{tails}"

    return describe


def _ran_after_its_parents(conn: Conn, child: uuid.UUID, parents: list[uuid.UUID]) -> bool:
    row = conn.execute(
        "SELECT c.task_first_processing_attempted_at_ts >= max(p.task_processing_finalized_at_ts)"
        " FROM sk_task_results_t c, sk_task_results_t p"
        " WHERE c.task_id = %s AND p.task_id = ANY(%s) GROUP BY c.task_first_processing_attempted_at_ts",
        (child, parents),
    ).fetchone()
    return row == (True,)


def test_a_worker_killed_between_the_parents_success_and_the_childs_release(
    db: Any, conn: Conn, dsn: str, spawn: Callable[..., Any], log_dir: Path
) -> None:
    """The child's result row is held locked by a test session, so the parents'
    finish statements cannot release it (they wait 200 ms for it, then leave it
    to the sweep). With both parents committed 3 Processed and the child still
    waiting, SIGKILL the worker, then let go of the lock. A new worker's sweep
    releases the child: it runs exactly once, after both parents."""
    with Producer(db) as p:
        parents = p.post_many([Job("brief"), Job("brief")]).ids
        child = p.post("ok", None, after=parents)
    holder = psycopg.connect(dsn)
    try:
        holder.execute("SELECT 1 FROM sk_task_results_t WHERE task_id = %s FOR UPDATE", (child,))
        a = spawn("--concurrency", "4")
        wait_until(lambda: all(_state(conn, pid)[0] == 3 for pid in parents), 60, _diag(conn, a))
        # the worst moment: the parents' successes are committed, the child is not released
        assert _state(conn, child) == (1, False, 2)
        os.killpg(a.pid, signal.SIGKILL)
        a.wait(10)
    finally:
        holder.rollback()
        holder.close()
    assert _state(conn, child) == (1, False, 2), "nothing released it while no worker ran"
    b = spawn("--concurrency", "4")
    wait_until(lambda: all_final(conn), 60, _diag(conn, b))
    assert _state(conn, child) == (3, False, 0)
    done = completions(log_dir)
    assert done.get(str(child)) == 1, "the child ran exactly once"
    assert [done.get(str(p)) for p in parents] == [1, 1], "each parent succeeded once"
    assert _ran_after_its_parents(conn, child, parents)
    assert status_counts(conn) == {JobStatus.PROCESSED: 3}, "no job lost"
    stop_gracefully(b)


def test_posts_after_racing_their_parents_finishes_each_run_exactly_once(
    db: Any, conn: Conn, spawn: Callable[..., Any], log_dir: Path
) -> None:
    """Threads post parents and, at once, children after= three of the parents
    posted so far, while two workers finish those parents: some posts read a
    parent as unfinished while its finish commits. Every child eventually runs
    exactly once (the finish statements, or the sweep, release it), after all
    its parents, and nothing is left waiting."""
    workers = [spawn("--concurrency", "8"), spawn("--concurrency", "8")]
    # both are up (registered, so their signal handlers are in place) before the race: a
    # worker still importing when the test ends would die of its SIGTERM (exit -15)
    wait_until(
        lambda: all(worker_ids_for_pid(conn, w.pid) for w in workers),
        60,
        _diag(conn, *workers),
    )
    parents: list[uuid.UUID] = []
    children: dict[uuid.UUID, list[uuid.UUID]] = {}
    lock = threading.Lock()
    errors: list[BaseException] = []

    def poster(seed: int) -> None:
        rnd = random.Random(seed)
        try:
            with Producer(db) as p:
                for _ in range(15):
                    posted = p.post_many([Job("ok") for _ in range(3)]).ids
                    with lock:
                        parents.extend(posted)
                        pool = list(parents)
                    after = rnd.sample(pool, 3)
                    child = p.post("ok", None, after=after)
                    with lock:
                        children[child] = after
        except BaseException as exc:  # the test says which thread failed, and how
            errors.append(exc)

    threads = [threading.Thread(target=poster, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    wait_until(lambda: all_final(conn), 60, _diag(conn, *workers))
    done = completions(log_dir)
    assert len(children) == 60
    assert {str(c): done.get(str(c)) for c in children} == {str(c): 1 for c in children}
    assert {str(p): done.get(str(p)) for p in parents} == {str(p): 1 for p in parents}
    assert status_counts(conn) == {JobStatus.PROCESSED: len(parents) + len(children)}
    assert conn.execute("SELECT count(*) FROM sk_task_after_t").fetchone() == (0,)
    for child, after in children.items():
        assert _ran_after_its_parents(conn, child, after), child
    for w in workers:
        stop_gracefully(w)
