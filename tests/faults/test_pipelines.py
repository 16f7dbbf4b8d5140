"""Pipelines (then=) and ctx.post children when a worker is SIGKILLed mid-run.

Real PostgreSQL, real ``skconsole worker`` processes (``--tasks
tests.support.tasks_pipelines``). A job's children (its next stage, or the
jobs it ctx.posts) are written in the transaction that records its success,
and only then. So whatever a kill interrupts: every stage runs for every root
(none lost), each child exists once (none doubled by a re-run), no child
exists without its parent's success, and a job runs again only if the killed
worker had it, never at the same time as before. Counted from the result rows
(lineage columns ``sk_parent_task_id``, ``sk_pipeline``, ``sk_stage``) and
from the handlers' own logs (every execution with start, end, pid, attempt).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from skconsole.core.signature import final_exception_line
from skconsole.core.status import JobStatus
from skconsole.producer import Job, Producer
from tests.support.rows import one_row
from tests.support.tasks_faults import (
    REAP_AFTER_S,
    SHORT_LEASE,
    Execution,
    OutputDrain,
    all_final,
    executions,
    kill_group,
    overlaps,
    owned_in_flight,
    queue_count,
    status_counts,
    wait_exit,
    worker_ids_for_pid,
)
from tests.support.tasks_pipelines import CHILDREN
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
StartWorker = Callable[..., subprocess.Popen[str]]

CONCURRENCY = 5
#: most jobs a worker process holds in 2 Processing (README, safety model)
HELD_AT_MOST = 4 * CONCURRENCY
STAGES = ("p.validate", "p.charge", "p.ship")
ROOTS = 300
PARENTS = 200


def _start(
    start_worker: StartWorker, log_dir: Path, concurrency: int = CONCURRENCY
) -> subprocess.Popen[str]:
    p = start_worker(
        "--tasks",
        "tests.support.tasks_pipelines",
        "--lease",
        SHORT_LEASE,
        "--grace",
        "5s",
        "--concurrency",
        str(concurrency),
        env={"SKTEST_LOG_DIR": str(log_dir)},
    )
    p.drain = OutputDrain(p)  # type: ignore[attr-defined]
    return p


def _tails(*procs: Any) -> str:
    return "\n".join(f"--- worker {p.pid}:\n{p.drain.tail(20)}" for p in procs)


def _describe(conn: Conn, *procs: Any) -> Callable[[], str]:
    def describe() -> str:
        rows = conn.execute(
            "SELECT task_type, task_status, count(*) FROM sk_task_results_t GROUP BY 1, 2 ORDER BY 1, 2"
        ).fetchall()
        return f"{rows}, queue {queue_count(conn)}\n{_tails(*procs)}"

    return describe


def _worker_id(conn: Conn, p: Any) -> Any:
    wait_until(lambda: len(worker_ids_for_pid(conn, p.pid)) == 1, 30, lambda: _tails(p))
    return worker_ids_for_pid(conn, p.pid)[0]


def _done(conn: Conn, task_type: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM sk_task_results_t WHERE task_type = %s AND task_status = 3",
        (task_type,),
    ).fetchone()
    return int(row[0]) if row else 0


def _running(conn: Conn, worker_id: Any, task_type: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM sk_task_results_t WHERE task_status = 2 AND task_type = %s"
        " AND sk_owner_worker_id = %s",
        (task_type, worker_id),
    ).fetchone()
    return int(row[0]) if row else 0


def _stop(*procs: subprocess.Popen[str]) -> None:
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        assert wait_exit(p, 30) == 0, _tails(p)


def _held_by_the_dead(conn: Conn, worker_id: Any) -> set[uuid.UUID]:
    """The jobs a killed worker holds (2 Processing, its own): what its lease's end
    hands to the reapers. Read 1 s after the kill (long before its lease lapses): a
    statement it sent just before dying may still commit on the server."""
    time.sleep(1.0)
    return set(owned_in_flight(conn, worker_id))


def _check_reruns(
    conn: Conn,
    runs: dict[str, list[Execution]],
    held: set[uuid.UUID],
    victim_pid: int,
    killed_at: float,
) -> dict[str, list[Execution]]:
    """No two executions of a job overlap; a job ran again only if the killed worker
    held it, then exactly twice, first on the killed worker, again only after its
    lease lapsed; the held jobs were reaped (one HungJob error, attempt 2), no other
    job failed."""
    for job_runs in runs.values():
        assert not overlaps(job_runs), job_runs
    again = {t: r for t, r in runs.items() if len(r) > 1}
    for task_id, job_runs in again.items():
        assert uuid.UUID(task_id) in held, (
            f"re-run of a job the killed worker did not hold: {job_runs}"
        )
        assert len(job_runs) == 2 and job_runs[0].pid == victim_pid, job_runs
        assert job_runs[0].started < killed_at, job_runs
        assert job_runs[1].started - killed_at >= REAP_AFTER_S - 1.0, job_runs
        assert job_runs[1].note.startswith("attempt=2"), job_runs
    rows = conn.execute(
        "SELECT task_id, task_error_count, task_last_error, sk_attempt FROM sk_task_results_t"
    ).fetchall()
    for task_id, errors, last_error, attempt in rows:
        if task_id in held:
            assert errors == 1 and attempt == 2, (task_id, errors, attempt, last_error)
            assert final_exception_line(last_error).startswith("skconsole.HungJob: worker gone"), (
                last_error
            )
            assert f"pid {victim_pid})" in last_error, last_error
        else:
            assert (errors, last_error, attempt) == (0, None, 1), (task_id, errors, last_error)
    return again


def test_pipeline_x300_with_a_worker_sigkilled_midway_ships_each_root_once(
    db: Any, conn: Conn, start_worker: StartWorker, log_dir: Path
) -> None:
    """300 roots through p.validate -> p.charge -> p.ship on 2 workers (concurrency 5,
    lease 5 s). SIGKILL one worker's process group once about a third of the last
    stage is done; start a replacement; wait until everything is final. Then:
    exactly 300 rows per stage, all 3 Processed; stage 2/3 rows carry sk_stage 2/3
    and the pipeline's name; each p.ship row's parent chain leads to its own root;
    each root's number reaches the last stage exactly once; no job ran twice at
    once, and only the killed worker's jobs (at most 4 x concurrency) ran again."""
    with Producer(db) as producer:
        roots = producer.post_many([Job("p.validate", {"n": n}) for n in range(ROOTS)]).ids
    a = _start(start_worker, log_dir)
    b = _start(start_worker, log_dir)
    a_id = _worker_id(conn, a)
    _worker_id(conn, b)
    # a third of the last stage done, and the victim running some of it
    wait_until(
        lambda: _done(conn, "p.ship") >= ROOTS // 3 and _running(conn, a_id, "p.ship") >= 2,
        60,
        _describe(conn, a, b),
        interval=0.002,
    )
    killed_at = kill_group(a)
    shipped_at_kill = _done(conn, "p.ship")
    held = _held_by_the_dead(conn, a_id)
    c = _start(start_worker, log_dir)
    took = wait_until(lambda: all_final(conn), 60, _describe(conn, b, c))
    _stop(b, c)

    assert 0 < len(held) <= HELD_AT_MOST, held
    assert shipped_at_kill < ROOTS, "killed midway"
    assert status_counts(conn) == {JobStatus.PROCESSED: 3 * ROOTS} and queue_count(conn) == 0
    rows = {
        r[0]: r[1:]
        for r in conn.execute(
            "SELECT task_id, task_type, task_payload, sk_parent_task_id, sk_pipeline, sk_stage,"
            " task_source FROM sk_task_results_t"
        ).fetchall()
    }
    by_type = Counter(r[0] for r in rows.values())
    assert by_type == dict.fromkeys(STAGES, ROOTS), by_type
    assert {i for i, r in rows.items() if r[0] == "p.validate"} == set(roots)
    for task_id, (task_type, _payload, parent, pipeline, stage, source) in rows.items():
        if task_type == "p.validate":
            assert parent is None, task_id
            continue
        k = STAGES.index(task_type)
        assert (pipeline, stage) == ("p", k + 1), (task_id, task_type, pipeline, stage)
        assert rows[parent][0] == STAGES[k - 1] and source == STAGES[k - 1], (task_id, parent)
    children = Counter(r[2] for r in rows.values() if r[2] is not None)
    assert set(children.values()) == {1}, "one next-stage job per success, none doubled"
    chain_roots: list[uuid.UUID] = []
    shipped: list[int] = []
    for task_type, payload, parent, *_rest in rows.values():
        if task_type != "p.ship":
            continue
        root = rows[parent][2]
        assert rows[root][0] == "p.validate"
        chain_roots.append(root)
        n = json.loads(payload)["n"]
        assert json.loads(rows[root][1]) == {"n": n}, "the root's number carried down its chain"
        shipped.append(n)
    assert len(set(chain_roots)) == ROOTS, "each last stage leads to a root of its own"
    assert sorted(shipped) == list(range(ROOTS)), "every root shipped exactly once"

    runs = executions(log_dir, {a.pid: killed_at})
    assert set(runs) == {str(i) for i in rows}, "every job ran"
    again = _check_reruns(conn, runs, held, a.pid, killed_at)
    print(
        f"\nkilled at {shipped_at_kill}/{ROOTS} shipped, holding {len(held)} jobs"
        f" ({sum(1 for h in held if any(r.pid == a.pid for r in runs[str(h)]))} of them started);"
        f" {len(again)} ran again; all final {took:.1f}s after the replacement started"
    )


def _lineage_violations(conn: Conn) -> tuple[int, int, int]:
    """In one snapshot: children whose parent is not 3 Processed (or is missing),
    3 Processed parents without exactly CHILDREN children, parents 3 Processed."""
    row = one_row(
        conn,
        "SELECT"
        " (SELECT count(*) FROM sk_task_results_t c WHERE c.task_type = 'g.child' AND NOT EXISTS"
        "   (SELECT 1 FROM sk_task_results_t p WHERE p.task_id = c.sk_parent_task_id"
        "    AND p.task_status = 3)),"
        " (SELECT count(*) FROM sk_task_results_t p WHERE p.task_type = 'g.parent'"
        "   AND p.task_status = 3 AND (SELECT count(*) FROM sk_task_results_t c"
        "   WHERE c.sk_parent_task_id = p.task_id) <> %s),"
        " (SELECT count(*) FROM sk_task_results_t WHERE task_type = 'g.parent' AND task_status = 3)",
        (CHILDREN,),
    )
    return int(row[0]), int(row[1]), int(row[2])


def test_ctx_post_children_exist_only_with_their_parents_success(
    db: Any, conn: Conn, start_worker: StartWorker, log_dir: Path
) -> None:
    """200 g.parent jobs, each ctx.posting 3 g.child jobs then running 0.3 s, on 2
    workers (concurrency 10). SIGKILL one once 60 parents are done, while it runs
    about 10. Checked in one snapshot every few ms from the first post to the end:
    no child without its parent 3 Processed, every 3 Processed parent with exactly
    3 children. At the end: 200 parents with 3 children each (their payloads name
    them), the children posted by an execution cut short by the kill never
    written, only those of each parent's succeeding execution."""
    with Producer(db) as producer:
        parents = producer.post_many([Job("g.parent", None) for _ in range(PARENTS)]).ids
    a = _start(start_worker, log_dir, concurrency=10)
    b = _start(start_worker, log_dir, concurrency=10)
    a_id = _worker_id(conn, a)
    _worker_id(conn, b)
    checks = 0

    def consistent() -> tuple[int, int, int]:
        nonlocal checks
        orphans, miscounted, done = _lineage_violations(conn)
        checks += 1
        assert (orphans, miscounted) == (0, 0), (orphans, miscounted, done)
        return orphans, miscounted, done

    wait_until(
        lambda: consistent()[2] >= 60 and _running(conn, a_id, "g.parent") >= 5,
        60,
        _describe(conn, a, b),
        interval=0.002,
    )
    killed_at = kill_group(a)
    held = _held_by_the_dead(conn, a_id)
    held_parents = held & set(parents)
    took = wait_until(
        lambda: consistent() is not None and all_final(conn), 60, _describe(conn, b), interval=0.02
    )
    _stop(b)

    assert len(held_parents) >= 5, f"the kill caught only {len(held_parents)} parents running"
    assert _lineage_violations(conn) == (0, 0, PARENTS)
    assert status_counts(conn) == {JobStatus.PROCESSED: PARENTS * (1 + CHILDREN)}
    kids = conn.execute(
        "SELECT task_id, sk_parent_task_id, task_payload, task_source, sk_pipeline, sk_stage"
        " FROM sk_task_results_t WHERE task_type = 'g.child'"
    ).fetchall()
    by_parent: dict[uuid.UUID, list[int]] = {}
    for _kid, parent, payload, source, pipeline, stage in kids:
        body = json.loads(payload)
        assert body["parent"] == str(parent) and source == "g.parent", (parent, body, source)
        assert (pipeline, stage) == (None, None), "a ctx.post child is no pipeline stage"
        by_parent.setdefault(parent, []).append(body["i"])
    assert set(by_parent) == set(parents)
    assert all(sorted(v) == list(range(CHILDREN)) for v in by_parent.values())

    # each execution logged the ids of the children it posted: only the
    # succeeding execution's exist
    runs = executions(log_dir, {a.pid: killed_at})
    kid_ids = {str(r[0]) for r in kids}
    written_by = Counter[str]()
    for task_id in map(str, parents):
        for run in runs[task_id]:
            posted = set(run.note.split("children=")[1].split(","))
            assert len(posted) == CHILDREN
            exists = posted & kid_ids
            assert exists in (set(), posted), (run, exists)
            if exists:
                written_by[task_id] += 1
                assert not (run.pid == a.pid and run.ended == killed_at), (
                    f"children of an execution cut short by the kill were written: {run}"
                )
    assert written_by == dict.fromkeys(map(str, parents), 1), "one execution's children each"
    again = _check_reruns(conn, runs, held, a.pid, killed_at)
    assert again, "some parent the killed worker was running ran again"
    print(
        f"\nkilled holding {len(held_parents)} running parents; {len(again)} jobs ran again;"
        f" lineage consistent in {checks} snapshots; all final {took:.1f}s after the kill"
    )
