"""Posting jobs: one, many, delayed, keyed; the wake-up notification; validation."""

from __future__ import annotations

import json
import math
import threading
import uuid
from typing import Any

import psycopg
import pytest

from skconsole.core.errors import InvalidJobError
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.producer import BATCH_ROWS, AsyncProducer, Job, Producer, job_id_for_key
from skconsole.worker.registry import TaskRegistry
from tests.support.rows import named_row, one_row
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
CHANNEL = "sk_task_queue_item_added"


# -- helpers ----------------------------------------------------------------------
def result_row(conn: Conn, task_id: uuid.UUID) -> dict[str, Any] | None:
    return named_row(conn, "SELECT * FROM sk_task_results_t WHERE task_id = %s", (task_id,))


def queue_row(conn: Conn, task_id: uuid.UUID) -> dict[str, Any] | None:
    return named_row(conn, "SELECT * FROM sk_tasks_queue_t WHERE task_id = %s", (task_id,))


def count(conn: Conn, table: str) -> int:
    row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()  # type: ignore[arg-type]
    assert row is not None
    return int(row[0])


def finish_by_hand(conn: Conn, task_id: uuid.UUID, status: int) -> None:
    """What a worker leaves behind at a final state: result row updated, queue row gone."""
    conn.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = %s", (task_id,))
    conn.execute(
        "UPDATE sk_task_results_t SET task_status = %s, task_error_count = 2, task_last_error = 'boom', "
        "task_last_error_is_recoverable = true, task_processing_time_milliseconds = 99, "
        "task_first_processing_attempted_at_ts = now(), task_last_processing_attempted_at_ts = now(), "
        "task_processing_finalized_at_ts = now(), sk_attempt = 2 WHERE task_id = %s",
        (status, task_id),
    )


def notifications(listener: Conn, seconds: float = 0.5) -> list[Any]:
    return list(listener.notifies(timeout=seconds))


@pytest.fixture
def listener(dsn: str) -> Any:
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"LISTEN {CHANNEL}")
        yield c


# -- posting -------------------------------------------------------------------------
def test_posting_one_job_writes_a_queue_row_and_an_unprocessed_result_row(
    db: Database, conn: Conn
) -> None:
    with Producer(db, source="billing-app") as p:
        task_id = p.post("emails.send", {"to": "a@example.com"})

    q = queue_row(conn, task_id)
    r = result_row(conn, task_id)
    assert q is not None and r is not None
    assert (q["task_type"], q["task_source"], q["task_priority"]) == (
        "emails.send",
        "billing-app",
        0,
    )
    assert r["task_status"] == JobStatus.UNPROCESSED
    assert (r["task_type"], r["task_source"], r["task_priority"]) == (
        "emails.send",
        "billing-app",
        0,
    )
    assert r["task_error_count"] == 0
    assert r["task_processing_finalized_at_ts"] is None
    assert r["task_posted_at_ts"] == q["task_posted_at_ts"]


def test_the_payload_is_stored_as_json_in_both_rows(db: Database, conn: Conn) -> None:
    payload = {"order": 17, "lines": [{"sku": "ÄB-1", "qty": 2}], "note": None, "gift": True}
    with Producer(db) as p:
        task_id = p.post("orders.ship", payload)

    q, r = queue_row(conn, task_id), result_row(conn, task_id)
    assert q is not None and r is not None
    assert json.loads(q["task_payload"]) == payload
    assert r["task_payload"] == q["task_payload"]


def test_payload_json_text_is_stored_exactly_as_given(db: Database, conn: Conn) -> None:
    text = '{ "b": 2,  "a": [1, 2.50] }'
    with Producer(db) as p:
        task_id = p.post("t.raw", payload_json=text)

    q = queue_row(conn, task_id)
    assert q is not None and q["task_payload"] == text


def test_a_job_without_payload_stores_json_null(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        task_id = p.post("t.nothing")

    q = queue_row(conn, task_id)
    assert q is not None and q["task_payload"] == "null"


def test_the_priority_is_stored_on_both_rows(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        task_id = p.post("t.prio", priority=42)

    q, r = queue_row(conn, task_id), result_row(conn, task_id)
    assert q is not None and r is not None
    assert q["task_priority"] == r["task_priority"] == 42


def test_the_default_source_names_skconsole_the_host_and_the_process(
    db: Database, conn: Conn
) -> None:
    import os
    import socket

    with Producer(db) as p:
        task_id = p.post("t.src")

    q = queue_row(conn, task_id)
    assert q is not None
    assert q["task_source"] == f"skconsole@{socket.gethostname()}:{os.getpid()}"


def test_a_bulk_post_of_thousands_of_jobs_in_one_call_writes_every_row(
    db: Database, conn: Conn
) -> None:
    n = 2 * BATCH_ROWS + 1_234  # more than one statement's worth
    jobs = [Job("bulk.item", {"i": i}, priority=i % 3) for i in range(n)]
    with Producer(db) as p:
        result = p.post_many(jobs)

    assert result.posted == n
    assert result.skipped == 0
    assert result.ids == [j.task_id for j in jobs]
    assert count(conn, "sk_tasks_queue_t") == n
    assert conn.execute(
        "SELECT task_status, count(*) FROM sk_task_results_t GROUP BY 1"
    ).fetchall() == [(1, n)]
    # every queue row has its result row, with the same payload and priority
    assert conn.execute(
        "SELECT count(*) FROM sk_tasks_queue_t q JOIN sk_task_results_t r USING (task_id) "
        "WHERE q.task_payload = r.task_payload AND q.task_priority = r.task_priority"
    ).fetchone() == (n,)
    assert conn.execute(
        "SELECT task_payload FROM sk_tasks_queue_t WHERE task_id = %s", (jobs[-1].task_id,)
    ).fetchone() == (json.dumps({"i": n - 1}, separators=(",", ":")),)


def test_a_bulk_post_keeps_input_order_as_the_fifo_order(db: Database, conn: Conn) -> None:
    jobs = [Job("fifo.item", {"i": i}) for i in range(50)]
    with Producer(db) as p:
        p.post_many(jobs)

    rows = conn.execute(
        "SELECT task_id FROM sk_tasks_queue_t ORDER BY task_lock_handle_id"
    ).fetchall()
    assert [r[0] for r in rows] == [j.task_id for j in jobs]


def test_a_bulk_post_is_all_or_nothing(db: Database, conn: Conn) -> None:
    jobs = [Job("bulk.item", i) for i in range(BATCH_ROWS)]
    # the second statement's batch holds the same key twice: the whole post must fail
    jobs += [Job("bulk.keyed", 1, key="same"), Job("bulk.keyed", 2, key="same")]
    with Producer(db) as p:
        with pytest.raises(InvalidJobError, match="same job key"):
            p.post_many(jobs)
        assert count(conn, "sk_tasks_queue_t") == 0
        assert count(conn, "sk_task_results_t") == 0
        # and the producer's connection is still usable
        p.post("bulk.after")
    assert count(conn, "sk_tasks_queue_t") == 1


def test_posting_an_empty_list_does_nothing(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        result = p.post_many([])

    assert (result.ids, result.posted) == ([], 0)
    assert count(conn, "sk_task_results_t") == 0


# -- delays --------------------------------------------------------------------------
def test_a_job_without_delay_is_eligible_at_once(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        task_id = p.post("t.now")

    assert conn.execute(
        "SELECT task_locked_until_ts < clock_timestamp() FROM sk_tasks_queue_t WHERE task_id = %s",
        (task_id,),
    ).fetchone() == (True,)


def test_a_delayed_job_is_locked_until_its_delay_from_now(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        task_id = p.post("t.later", delay=90)

    row = one_row(
        conn,
        "SELECT extract(epoch FROM task_locked_until_ts - task_posted_at_ts), "
        "extract(epoch FROM task_locked_until_ts - now()) FROM sk_tasks_queue_t WHERE task_id = %s",
        (task_id,),
    )
    after_post, from_now = float(row[0]), float(row[1])
    assert after_post == pytest.approx(90, abs=0.01)
    assert 80 < from_now <= 90


def test_a_fractional_delay_keeps_its_milliseconds(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        task_id = p.post("t.later", delay=2.5)

    row = conn.execute(
        "SELECT extract(epoch FROM task_locked_until_ts - task_posted_at_ts) FROM sk_tasks_queue_t "
        "WHERE task_id = %s",
        (task_id,),
    ).fetchone()
    assert row is not None and float(row[0]) == pytest.approx(2.5, abs=0.001)


# -- the wake-up notification --------------------------------------------------------
def test_one_bulk_post_sends_one_notification(db: Database, listener: Conn) -> None:
    with Producer(db) as p:
        p.post_many([Job("bulk.item", i) for i in range(2 * BATCH_ROWS + 10)])

    got = notifications(listener)
    assert [n.channel for n in got] == [CHANNEL]


def test_each_post_call_sends_its_own_notification(db: Database, listener: Conn) -> None:
    with Producer(db) as p:
        for i in range(3):
            p.post("t.one", i)

    assert len(notifications(listener)) == 3


def test_a_post_that_queues_nothing_sends_no_notification(db: Database, listener: Conn) -> None:
    with Producer(db) as p:
        p.post("t.keyed", key="k")
        assert len(notifications(listener)) == 1
        p.post("t.keyed", key="k")  # already waiting: a no-op

    assert notifications(listener) == []


# -- job keys ------------------------------------------------------------------------
def test_a_job_key_always_gives_the_same_id(db: Database) -> None:
    with Producer(db) as p:
        first = p.post("t.keyed", key="invoice-7")
    assert first == job_id_for_key("invoice-7")
    assert Job("t.other", key="invoice-7").task_id == first
    assert job_id_for_key("invoice-8") != first


def test_a_keyed_post_while_the_job_waits_is_a_no_op(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        first = p.post("t.keyed", {"v": 1}, key="doc-1")
        again = p.post_many([Job("t.keyed", {"v": 2}, key="doc-1")])

    assert again.ids == [first]
    assert (again.posted, again.rerun_requested, again.skipped) == (0, 0, 1)
    assert count(conn, "sk_tasks_queue_t") == 1
    assert count(conn, "sk_task_results_t") == 1
    q, r = queue_row(conn, first), result_row(conn, first)
    assert q is not None and r is not None
    assert json.loads(q["task_payload"]) == {"v": 1}
    assert r["task_status"] == JobStatus.UNPROCESSED


def test_a_keyed_post_while_the_job_backs_off_after_an_error_is_a_no_op(
    db: Database, conn: Conn
) -> None:
    with Producer(db) as p:
        task_id = p.post("t.keyed", key="doc-2")
        conn.execute(
            "UPDATE sk_task_results_t SET task_status = 4, task_error_count = 1 WHERE task_id = %s",
            (task_id,),
        )
        conn.execute(
            "UPDATE sk_tasks_queue_t SET task_locked_until_ts = now() + interval '1 hour' WHERE task_id = %s",
            (task_id,),
        )
        again = p.post_many([Job("t.keyed", key="doc-2")])

    assert again.posted == 0
    r = result_row(conn, task_id)
    assert r is not None and (r["task_status"], r["task_error_count"]) == (JobStatus.ERROR, 1)
    assert conn.execute(
        "SELECT task_locked_until_ts > now() + interval '50 minutes' FROM sk_tasks_queue_t WHERE task_id = %s",
        (task_id,),
    ).fetchone() == (True,)


@pytest.mark.parametrize(
    ("status", "name"), [(3, "Processed"), (5, "Faulted"), (6, "Fatal"), (7, "Cancelled")]
)
def test_a_keyed_post_after_the_job_finished_queues_it_again(
    db: Database, conn: Conn, status: int, name: str
) -> None:
    with Producer(db) as p:
        task_id = p.post("t.keyed", {"v": 1}, key="doc-3", priority=5)
        finish_by_hand(conn, task_id, status)
        again = p.post_many([Job("t.keyed", {"v": 2}, key="doc-3", priority=1)])

    assert (again.ids, again.posted) == ([task_id], 1)
    r, q = result_row(conn, task_id), queue_row(conn, task_id)
    assert r is not None and q is not None, name
    assert r["task_status"] == JobStatus.UNPROCESSED
    assert json.loads(r["task_payload"]) == json.loads(q["task_payload"]) == {"v": 2}
    assert r["task_priority"] == q["task_priority"] == 1
    assert r["task_error_count"] == 0
    assert r["task_last_error_is_recoverable"] is False
    assert r["task_processing_time_milliseconds"] == 0
    assert r["task_processing_finalized_at_ts"] is None
    assert r["task_first_processing_attempted_at_ts"] is None
    assert r["sk_owner_worker_id"] is None
    assert r["sk_attempt"] == 2, "the attempt counter is never reset: it fences late finishers"


def test_a_keyed_job_run_to_completion_by_a_worker_can_be_posted_again(
    dsn: str, db: Database, conn: Conn
) -> None:
    with Producer(db) as p:
        task_id = p.post("retry.ok", {"v": 1}, key="doc-4")
        with EngineThread(dsn, burst=True) as worker:
            worker.join()
        r = result_row(conn, task_id)
        assert r is not None and r["task_status"] == JobStatus.PROCESSED
        assert queue_row(conn, task_id) is None

        again = p.post_many([Job("retry.ok", {"v": 2}, key="doc-4")])

    assert again.posted == 1
    r = result_row(conn, task_id)
    assert r is not None and r["task_status"] == JobStatus.UNPROCESSED
    assert queue_row(conn, task_id) is not None


def test_a_keyed_post_while_the_job_runs_keeps_its_payload_and_asks_a_rerun_of_the_new_one(
    db: Database, conn: Conn
) -> None:
    with Producer(db) as p:
        task_id = p.post("t.keyed", {"v": 1}, key="doc-5", priority=3)
        conn.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = %s", (task_id,))
        conn.execute(
            "UPDATE sk_task_results_t SET task_status = 2, sk_attempt = 1, sk_owner_worker_id = gen_random_uuid() "
            "WHERE task_id = %s",
            (task_id,),
        )
        again = p.post_many([Job("t.keyed", {"v": 2}, key="doc-5", priority=1)])

    assert (again.posted, again.rerun_requested, again.skipped) == (0, 1, 0)
    r = result_row(conn, task_id)
    assert r is not None
    assert (r["task_status"], r["sk_rerun_requested"]) == (JobStatus.PROCESSING, True)
    # the running attempt keeps its own payload and priority; the re-run's wait beside them
    assert (json.loads(r["task_payload"]), r["task_priority"]) == ({"v": 1}, 3)
    assert (json.loads(r["sk_rerun_payload"]), r["sk_rerun_priority"]) == ({"v": 2}, 1)
    assert queue_row(conn, task_id) is None, "a running job must not be queued twice"


def test_a_job_re_posted_while_it_runs_is_run_again_after_it_finishes(
    dsn: str, db: Database, conn: Conn
) -> None:
    gate = threading.Event()
    seen: list[Any] = []
    registry = TaskRegistry()

    @registry.task("rerun.gated")
    def handler(payload: Any) -> None:
        seen.append(payload)
        gate.wait(10)

    def status() -> int | None:
        r = result_row(conn, task_id)
        return r["task_status"] if r else None

    with Producer(db) as p:
        task_id = p.post("rerun.gated", {"v": 1}, key="doc-6")
        with EngineThread(dsn, registry):
            wait_until(lambda: status() == JobStatus.PROCESSING and len(seen) == 1, timeout=15)
            again = p.post_many([Job("rerun.gated", {"v": 2}, key="doc-6")])
            assert again.rerun_requested == 1
            gate.set()
            wait_until(lambda: len(seen) == 2 and status() == JobStatus.PROCESSED, timeout=15)

    assert seen == [{"v": 1}, {"v": 2}]
    r = result_row(conn, task_id)
    assert r is not None
    assert r["sk_rerun_requested"] is False
    assert r["sk_attempt"] == 2
    assert r["task_processing_finalized_at_ts"] is not None
    assert queue_row(conn, task_id) is None


# -- validation ----------------------------------------------------------------------
def test_a_negative_priority_is_refused(db: Database, conn: Conn) -> None:
    with Producer(db) as p, pytest.raises(InvalidJobError, match="priority"):
        p.post("t.bad", priority=-1)
    assert count(conn, "sk_task_results_t") == 0


def test_payload_text_that_is_not_json_is_refused(db: Database, conn: Conn) -> None:
    with Producer(db) as p, pytest.raises(InvalidJobError, match="not valid JSON"):
        p.post("t.bad", payload_json="not json{")
    assert count(conn, "sk_task_results_t") == 0


@pytest.mark.parametrize(
    "payload", [object(), {1, 2}, {"x": math.nan}, b"bytes"], ids=["object", "set", "nan", "bytes"]
)
def test_a_payload_that_cannot_be_serialised_to_json_is_refused(
    db: Database, conn: Conn, payload: Any
) -> None:
    with Producer(db) as p, pytest.raises(InvalidJobError, match="JSON"):
        p.post("t.bad", payload)
    assert count(conn, "sk_task_results_t") == 0


@pytest.mark.parametrize("task_type", ["", "   "], ids=["empty", "blank"])
def test_an_empty_task_type_is_refused(db: Database, conn: Conn, task_type: str) -> None:
    with Producer(db) as p, pytest.raises(InvalidJobError, match="task type"):
        p.post(task_type)
    assert count(conn, "sk_task_results_t") == 0


def test_a_payload_string_holding_a_nul_character_is_stored_escaped_and_round_trips(
    db: Database, conn: Conn
) -> None:
    with Producer(db) as p:
        task_id = p.post("t.nul", {"s": "a\x00b"})

    q = queue_row(conn, task_id)
    assert q is not None
    assert "\x00" not in q["task_payload"]
    assert json.loads(q["task_payload"]) == {"s": "a\x00b"}


def test_one_invalid_job_refuses_the_whole_post_before_anything_is_written(
    db: Database, conn: Conn
) -> None:
    with pytest.raises(InvalidJobError):
        jobs = [Job("t.ok", 1), Job("t.bad", priority=-5)]
        with Producer(db) as p:
            p.post_many(jobs)
    assert count(conn, "sk_task_results_t") == 0


# -- the asyncio producer ------------------------------------------------------------
async def test_the_async_producer_posts_one_job_like_the_sync_one(db: Database, conn: Conn) -> None:
    async with AsyncProducer(db, source="async-app") as p:
        task_id = await p.post("emails.send", {"to": "b@example.com"}, priority=4, delay=30)

    q, r = queue_row(conn, task_id), result_row(conn, task_id)
    assert q is not None and r is not None
    assert r["task_status"] == JobStatus.UNPROCESSED
    assert json.loads(q["task_payload"]) == {"to": "b@example.com"}
    assert (q["task_source"], q["task_priority"]) == ("async-app", 4)
    assert conn.execute(
        "SELECT extract(epoch FROM task_locked_until_ts - task_posted_at_ts) FROM sk_tasks_queue_t "
        "WHERE task_id = %s",
        (task_id,),
    ).fetchone() == (pytest.approx(30, abs=0.01),)


async def test_the_async_producer_posts_thousands_in_one_call(db: Database, conn: Conn) -> None:
    n = BATCH_ROWS + 500
    async with AsyncProducer(db) as p:
        result = await p.post_many([Job("bulk.async", i) for i in range(n)])

    assert result.posted == n
    assert count(conn, "sk_tasks_queue_t") == n
    assert conn.execute(
        "SELECT task_status, count(*) FROM sk_task_results_t GROUP BY 1"
    ).fetchall() == [(1, n)]


async def test_the_async_producer_sends_one_notification_per_post(
    db: Database, listener: Conn
) -> None:
    async with AsyncProducer(db) as p:
        await p.post_many([Job("bulk.async", i) for i in range(BATCH_ROWS + 1)])

    assert len(notifications(listener)) == 1


async def test_the_async_producer_honours_job_keys(db: Database, conn: Conn) -> None:
    async with AsyncProducer(db) as p:
        first = await p.post("t.keyed", {"v": 1}, key="async-doc")
        waiting = await p.post_many([Job("t.keyed", {"v": 2}, key="async-doc")])
        finish_by_hand(conn, first, 3)
        finished = await p.post_many([Job("t.keyed", {"v": 3}, key="async-doc")])

    assert waiting.ids == finished.ids == [first]
    assert (waiting.posted, finished.posted) == (0, 1)
    r = result_row(conn, first)
    assert (
        r is not None
        and r["task_status"] == JobStatus.UNPROCESSED
        and json.loads(r["task_payload"]) == {"v": 3}
    )


async def test_the_async_producer_refuses_invalid_jobs(db: Database, conn: Conn) -> None:
    async with AsyncProducer(db) as p:
        with pytest.raises(InvalidJobError):
            await p.post("t.bad", priority=-1)
        with pytest.raises(InvalidJobError):
            await p.post("t.bad", payload_json="{oops")
        with pytest.raises(InvalidJobError):
            await p.post("", 1)
        with pytest.raises(InvalidJobError):
            await p.post("t.bad", object())
    assert count(conn, "sk_task_results_t") == 0
