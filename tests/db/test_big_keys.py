"""Payload values of any size where they are indexed or stored as keys, and per-key limits
that count a running attempt against the key it started with.

PostgreSQL refuses a btree entry over 2,704 bytes: an index on the raw text of a payload
path (a search index, a per-key limit's key index, the key rate window's primary key)
would refuse the post, the finish and the reap of one job with a 6 KB value, and stop
the queue. Those places hold ``sk_key()`` of the value (itself up to 512 bytes, else its
SHA-256); equality stays exact (a search compares the full texts too).
"""

from __future__ import annotations

import base64
import json
import random
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from skconsole import ops
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.ops import Actor, LimitParams, Rate, Selection
from skconsole.producer import Job, Producer
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from tests.support.statuses import status_of
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
ACTOR = Actor(user="tester", host="test-host")
#: 6,000 characters that do not compress (PostgreSQL compresses an index entry before it
#: measures it: "x" * 6000 would fit)
BIG = base64.b64encode(random.Random(6).randbytes(4_500)).decode()
#: a second big value that shares BIG's first 5,999 characters
BIG_TOO = BIG[:-1] + ("y" if BIG[-1] != "y" else "z")


@pytest.fixture(autouse=True)
def _no_indexes_left(conn: Conn) -> Iterator[None]:
    """Each test's search and key indexes dropped after it (the schema outlives a test)."""
    yield
    for (name,) in conn.execute(
        "SELECT relname FROM pg_class WHERE relkind = 'i'"
        " AND (relname LIKE 'sk\\_key\\_%%' OR relname LIKE 'sk\\_find\\_%%')"
    ).fetchall():
        conn.execute(f'DROP INDEX IF EXISTS "{name}"')


def _claim(conn: Conn, types: list[str], limit: int = 50) -> list[Any]:
    params = {"types": types, "limit": limit, "worker_id": uuid.uuid4(), "hold_s": 12.0}
    return conn.execute(query("claim"), params).fetchall()


def _limit(conn: Conn, task_type: str, **kw: Any) -> None:
    ops.LIMIT.execute(conn, Selection(task_type=task_type), LimitParams(**kw), actor=ACTOR)


# -- search indexes ---------------------------------------------------------------------
def test_a_big_value_at_a_search_indexed_path_is_posted_and_found_exactly(
    db: Database, conn: Conn, run_cli: Callable[..., Any]
) -> None:
    added = run_cli("find-index", "add", "payload.note", "--yes")
    assert added.returncode == 0, added.stdout + added.stderr
    with Producer(db) as p:
        big = p.post("t.note", {"note": BIG})
        p.post("t.note", {"note": BIG_TOO})
        small = p.post("t.note", {"note": "short"})

    found = run_cli("find", "--where", f"payload.note={BIG}", "--json")
    short = run_cli("find", "--where", "payload.note=short", "--json")

    assert [j["task_id"] for j in json.loads(found.stdout)["jobs"]] == [str(big)]
    assert [j["task_id"] for j in json.loads(short.stdout)["jobs"]] == [str(small)]


def test_a_handler_posting_a_child_with_a_big_indexed_value_records_its_success(
    db: Database, conn: Conn, run_cli: Callable[..., Any]
) -> None:
    assert run_cli("find-index", "add", "payload.note", "--yes").returncode == 0
    tasks = TaskRegistry(TaskOptions(max_attempts=1, timeout=30.0))
    tasks.task("t.child")(lambda payload: None)

    @tasks.task("t.parent")
    def parent(payload: Any, ctx: JobContext) -> None:
        ctx.post("t.child", {"note": BIG})

    with Producer(db) as p:
        task_id = p.post("t.parent", {})

    def children() -> list[tuple[Any, ...]]:
        return conn.execute(
            "SELECT task_status FROM sk_task_results_t WHERE task_type = 't.child'"
        ).fetchall()

    with EngineThread(db.dsn, tasks):
        wait_until(lambda: status_of(conn, task_id) == JobStatus.PROCESSED, timeout=30)
        wait_until(lambda: children() == [(3,)], timeout=30)  # posted, then run too

    assert status_of(conn, task_id) == JobStatus.PROCESSED and children() == [(3,)]


def test_an_index_of_an_older_version_is_listed_stale_and_rebuilt_when_added_again(
    conn: Conn, run_cli: Callable[..., Any]
) -> None:
    """An index built before on the raw value: listed as stale; `add` rebuilds it bounded."""
    from skconsole.ops.find_index import FindIndexParams

    name = FindIndexParams(("note",)).index
    conn.execute(
        f'CREATE INDEX "{name}" ON sk_task_results_t'
        " ((sk_try_jsonb(task_payload) #>> ARRAY['note']::text[]))"
    )
    listed = json.loads(run_cli("find-index", "list", "--json").stdout)["indexes"]
    added = run_cli("find-index", "add", "payload.note", "--yes")
    after = json.loads(run_cli("find-index", "list", "--json").stdout)["indexes"]

    assert [(i["path"], i["stale"]) for i in listed] == [("payload.note", True)]
    assert added.returncode == 0, added.stdout + added.stderr
    assert [(i["path"], i["stale"], i["valid"]) for i in after] == [("payload.note", False, True)]


# -- per-key limits -----------------------------------------------------------------------
def test_a_big_key_is_limited_claimed_failed_and_reaped_like_any_key(
    db: Database, conn: Conn, run_cli: Callable[..., Any]
) -> None:
    _limit(conn, "t.key", concurrency=1, per=("cust",))
    with Producer(db) as p:
        first, second = p.post_many([Job("t.key", {"cust": BIG}) for _ in range(2)]).ids
        other = p.post("t.key", {"cust": BIG_TOO})
    claimed = _claim(conn, ["t.key"])
    # one of BIG's, and BIG_TOO's: two big keys that differ at their end are two keys
    assert sorted(r[0] for r in claimed) == sorted([first, other])
    # their worker died an hour ago: the operator's reap re-posts them (re-inserted queue rows)
    conn.execute(
        "UPDATE sk_task_results_t SET sk_owner_worker_id = NULL,"
        " task_last_processing_attempted_at_ts = now() - interval '1 hour' WHERE task_status = 2"
    )
    reaped = run_cli("reap", "--unowned-after", "1s", "--yes")
    assert reaped.returncode == 0, reaped.stdout + reaped.stderr
    assert {status_of(conn, first), status_of(conn, other)} <= {4, 5}
    assert status_of(conn, second) == JobStatus.UNPROCESSED


def test_a_rate_per_big_key_is_charged_and_claims_go_on(db: Database, conn: Conn) -> None:
    _limit(conn, "t.rate", rate=Rate(2, 60.0), per=("cust",))
    with Producer(db) as p:
        p.post_many([Job("t.rate", {"cust": BIG}) for _ in range(3)])
        p.post("t.plain", {})

    claimed = Counter(r[1] for r in _claim(conn, ["t.rate", "t.plain"]))
    windows = conn.execute("SELECT key, claims FROM sk_task_key_windows_t").fetchall()

    assert claimed == {"t.rate": 2, "t.plain": 1}
    assert len(windows) == 1 and windows[0][1] == 2 and len(windows[0][0]) < 100


def test_a_running_attempt_counts_against_the_key_it_started_with_after_a_keyed_re_post(
    db: Database, conn: Conn, run_cli: Callable[..., Any]
) -> None:
    """Limit 1 per customer as a mutex: while K1 (customer A) runs, K1 is re-posted for
    customer B; a new job of A must still wait for K1's A attempt."""
    _limit(conn, "t.mutex", concurrency=1, per=("cust",))
    with Producer(db) as p:
        k1 = p.post("t.mutex", {"cust": "A"}, key="k1")
        assert [r[0] for r in _claim(conn, ["t.mutex"])] == [k1]
        p.post("t.mutex", {"cust": "B"}, key="k1")
        newcomer = p.post("t.mutex", {"cust": "A"})

    assert _claim(conn, ["t.mutex"]) == []
    found = json.loads(run_cli("find", "--where", "payload.cust=A", "--json").stdout)["jobs"]
    assert {j["task_id"] for j in found} == {str(k1), str(newcomer)}


def test_a_keyed_re_post_runs_the_new_payload_once_the_running_attempt_ends(
    db: Database, conn: Conn
) -> None:
    seen: list[Any] = []
    tasks = TaskRegistry(TaskOptions(max_attempts=1, timeout=30.0))
    started = []

    @tasks.task("t.rerun")
    def rerun(payload: Any, ctx: JobContext) -> None:
        started.append(payload)
        if payload["v"] == 1:
            wait_until(lambda: len(seen) > 0, timeout=20)
        seen.append(payload)

    with Producer(db) as p:
        task_id = p.post("t.rerun", {"v": 1}, key="r")
        with EngineThread(db.dsn, tasks):
            wait_until(lambda: started == [{"v": 1}], timeout=20)
            p.post("t.rerun", {"v": 2}, key="r")
            row = conn.execute(
                "SELECT task_payload FROM sk_task_results_t WHERE task_id = %s", (task_id,)
            ).fetchone()
            seen.append("re-posted")
            wait_until(
                lambda: len(seen) == 3 and status_of(conn, task_id) == JobStatus.PROCESSED,
                timeout=30,
            )
    assert row is not None and json.loads(row[0]) == {"v": 1}  # while v1 ran
    assert seen == ["re-posted", {"v": 1}, {"v": 2}]
