"""Edit a job, then retry it: ``ops.EDIT`` and ``skconsole edit`` on a real database."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from skconsole import ops
from skconsole.core.errors import ConfigError, FatalTaskError, ReadOnlyError
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.ops.model import Selection
from skconsole.producer import Producer
from skconsole.worker.registry import TaskOptions, TaskRegistry
from tests.support.statuses import status_of
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

from .test_ops import ACTOR, add_job

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]

NEW = '{"order_id": 7, "amount": "12.50"}'


def one(task_id: uuid.UUID) -> Selection:
    return Selection(ids=(task_id,))


def edit(conn: Conn, task_id: uuid.UUID, **kw: Any) -> ops.ActionResult:
    params = ops.EditParams(**{"payload": NEW, **kw})
    preview = ops.EDIT.preview(conn, one(task_id), params)
    return ops.EDIT.execute(conn, preview.selection, params, actor=ACTOR, ids=preview.ids)


def result_row(conn: Conn, task_id: uuid.UUID) -> tuple[Any, ...] | None:
    return conn.execute(
        "SELECT task_payload, task_priority, task_status, task_error_count "
        "FROM sk_task_results_t WHERE task_id = %s",
        (task_id,),
    ).fetchone()


def queue_payload(conn: Conn, task_id: uuid.UUID) -> tuple[Any, ...] | None:
    return conn.execute(
        "SELECT task_payload, task_priority, task_locked_until_ts <= now() "
        "FROM sk_tasks_queue_t WHERE task_id = %s",
        (task_id,),
    ).fetchone()


def edit_audits(conn: Conn) -> list[tuple[int, dict[str, Any]]]:
    return [
        (int(r[0]), r[1])
        for r in conn.execute(
            "SELECT audit_count, audit_details FROM sk_audit_t WHERE audit_action = 'edit' "
            "ORDER BY audit_id"
        ).fetchall()
    ]


def as_json(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# -- what may be edited ------------------------------------------------------------------------
@pytest.mark.parametrize("status", [2, 3], ids=["running", "succeeded"])
def test_an_edit_of_a_running_or_succeeded_job_is_refused_and_changes_nothing(
    conn: Conn, status: int
) -> None:
    job = add_job(conn, status)
    before = result_row(conn, job)

    with pytest.raises(ConfigError, match=f"edit refused: job {job} is {status} ") as refused:
        ops.EDIT.preview(conn, one(job), ops.EditParams(payload=NEW))

    assert "\n" not in str(refused.value)
    assert result_row(conn, job) == before
    assert edit_audits(conn) == []


def test_an_execute_without_preview_leaves_a_running_job_alone(conn: Conn) -> None:
    job = add_job(conn, 2)
    before = result_row(conn, job)

    result = ops.EDIT.execute(conn, one(job), ops.EditParams(payload=NEW), actor=ACTOR)

    assert (result.changed, result.skipped_changed_state) == (0, 1)
    assert result_row(conn, job) == before


def test_invalid_json_is_refused_with_one_line_before_anything_is_read(conn: Conn) -> None:
    job = add_job(conn, 5)

    with pytest.raises(ConfigError, match="not valid JSON") as refused:
        ops.EditParams(payload='{"order_id": 7,')

    assert "\n" not in str(refused.value)
    assert result_row(conn, job) == ("{}", 5, 5, 1)


def test_requeue_is_refused_for_a_job_that_already_waits(conn: Conn) -> None:
    job = add_job(conn, 1)

    with pytest.raises(ConfigError, match="already waits"):
        ops.EDIT.preview(conn, one(job), ops.EditParams(payload=NEW, requeue=True))


def test_an_edit_applies_to_exactly_one_job_by_id(conn: Conn) -> None:
    with pytest.raises(ConfigError, match="one job"):
        ops.EDIT.preview(conn, Selection(statuses=(5,)), ops.EditParams(payload=NEW))


# -- what an edit writes -------------------------------------------------------------------------
def test_an_edit_of_a_waiting_job_updates_its_queue_row_too(conn: Conn) -> None:
    job = add_job(conn, 1, priority=5)

    result = edit(conn, job, priority=2)

    assert result.changed == 1
    assert result_row(conn, job) == (NEW, 2, 1, 0)
    assert queue_payload(conn, job) == (NEW, 2, True)


def test_an_edit_of_a_backing_off_job_keeps_its_back_off(conn: Conn) -> None:
    job = add_job(conn, 4, ready=False)

    edit(conn, job)

    assert queue_payload(conn, job) == (NEW, 5, False)
    assert status_of(conn, job) == JobStatus.ERROR


def test_an_edit_of_a_failed_job_without_requeue_leaves_it_parked(conn: Conn) -> None:
    job = add_job(conn, 6)

    edit(conn, job)

    assert result_row(conn, job) == (NEW, 5, 6, 1)
    assert queue_payload(conn, job) is None


def test_an_edit_with_requeue_posts_a_failed_job_again_ready_now(conn: Conn) -> None:
    job = add_job(conn, 6, error_count=3)

    result = edit(conn, job, requeue=True)

    assert result.details["requeued"] is True
    assert result_row(conn, job) == (NEW, 5, 1, 3)
    assert queue_payload(conn, job) == (NEW, 5, True)


def test_reset_errors_starts_the_error_count_of_the_re_run_from_zero(conn: Conn) -> None:
    job = add_job(conn, 5, error_count=3)

    edit(conn, job, requeue=True, reset_errors=True)

    assert result_row(conn, job) == (NEW, 5, 1, 0)


def test_the_audit_row_holds_the_old_and_the_new_payload_and_priority(conn: Conn) -> None:
    job = add_job(conn, 5, priority=4)

    result = edit(conn, job, priority=0, requeue=True)

    [(count, details)] = edit_audits(conn)
    assert count == 1 and result.audit_id is not None
    assert details["old"] == {"payload": "{}", "priority": 4}
    assert details["new"] == {"payload": NEW, "priority": 0}
    assert (details["requeue"], details["requeued"], details["status"]) == (True, True, 5)


def test_a_job_claimed_between_preview_and_execute_is_left_alone(conn: Conn, dsn: str) -> None:
    job = add_job(conn, 1)
    params = ops.EditParams(payload=NEW)
    preview = ops.EDIT.preview(conn, one(job), params)
    with psycopg.connect(dsn, autocommit=True) as worker:  # what a claim does
        worker.execute("DELETE FROM sk_tasks_queue_t WHERE task_id = %s", (job,))
        worker.execute("UPDATE sk_task_results_t SET task_status = 2 WHERE task_id = %s", (job,))

    result = ops.EDIT.execute(conn, preview.selection, params, actor=ACTOR, ids=preview.ids)

    assert (result.changed, result.skipped_changed_state) == (0, 1)
    assert result_row(conn, job) == ("{}", 5, 2, 0)
    assert queue_payload(conn, job) is None


def test_a_job_being_claimed_at_that_instant_is_left_alone(conn: Conn, dsn: str) -> None:
    job = add_job(conn, 1)
    with psycopg.connect(dsn) as worker:  # a claim holds the queue row's lock
        worker.execute("SELECT 1 FROM sk_tasks_queue_t WHERE task_id = %s FOR UPDATE", (job,))

        result = edit(conn, job)

    assert result.skipped_changed_state == 1
    assert queue_payload(conn, job) == ("{}", 5, True)


PAUSE_KEY = 424242


def _paused_edit_sql(name: str) -> str:
    """``name``'s SQL; the edit's deciding statement (ops_edit) first waits for the test's
    advisory lock, after it took its snapshot: the point where a concurrent requeue or
    keyed re-post committing used to go unseen."""
    from skconsole.db.sqlfiles import query

    text = query(name)
    if name != "ops_edit":
        return text
    return text.replace(
        "WITH lq AS (\n    SELECT q.task_id FROM sk_tasks_queue_t q\n"
        "    WHERE q.task_id = ANY(%(ids)s::uuid[])\n",
        "WITH pause AS MATERIALIZED (SELECT pg_advisory_xact_lock(424242) AS p),\n"
        "lq AS (\n    SELECT q.task_id FROM sk_tasks_queue_t q\n"
        "    WHERE q.task_id = ANY(%(ids)s::uuid[]) AND (SELECT count(*) FROM pause) = 1\n",
        1,
    )


@pytest.mark.parametrize("other", ["requeue", "keyed re-post"])
def test_an_edit_racing_a_requeue_never_leaves_the_queue_row_with_another_payload(
    dsn: str, conn: Conn, monkeypatch: pytest.MonkeyPatch, other: str
) -> None:
    """A faulted job is edited while another session posts it again (an operator's
    requeue, or a keyed re-post) and commits at the worst moment: between the edit's
    snapshot and its row lock. Whichever wins, the job that will run carries the payload
    the result row shows, and the audit counts what was written."""
    import threading

    from skconsole.ops import edit as edit_module
    from skconsole.producer import Job, job_id_for_key

    job = job_id_for_key("order-42")
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_error_count, task_posted_at_ts,"
        " task_processing_finalized_at_ts) VALUES (%s, 't.a', 'tests', '{}', 5, 5, 1, now(), now())",
        (job,),
    )
    assert edit_module.query("ops_edit") != _paused_edit_sql("ops_edit"), "the pause must go in"
    monkeypatch.setattr(edit_module, "query", _paused_edit_sql)
    params = ops.EditParams(payload=NEW)
    preview = ops.EDIT.preview(conn, one(job), params)
    outcome: dict[str, Any] = {}

    with psycopg.connect(dsn, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (PAUSE_KEY,))

        def run_edit() -> None:
            with psycopg.connect(dsn, autocommit=True) as c:
                outcome["result"] = ops.EDIT.execute(
                    c, preview.selection, params, actor=ACTOR, ids=preview.ids
                )

        editing = threading.Thread(target=run_edit)
        editing.start()
        wait_until(
            lambda: (
                conn.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                    " AND objid = 424242"
                ).fetchone()
                == (1,)
            ),
            timeout=10,
        )

        def run_other() -> None:
            try:
                _run_other()
            except Exception as exc:
                outcome["error"] = exc

        def _run_other() -> None:
            with psycopg.connect(dsn, autocommit=True) as c:
                if other == "requeue":
                    ops.REQUEUE.execute(c, Selection(ids=(job,)), ops.RequeueParams(), actor=ACTOR)
                else:
                    with Producer(dsn) as producer:
                        producer.post_many([Job("t.a", {"reposted": True}, key="order-42")])

        competing = threading.Thread(target=run_other)
        competing.start()
        # it commits at once, or waits for a row the paused edit holds: either way, on
        wait_until(
            lambda: (
                not competing.is_alive()
                or conn.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype <> 'advisory' AND NOT granted"
                    " AND pid IN (SELECT pid FROM pg_stat_activity"
                    " WHERE datname = current_database())"
                ).fetchone()
                != (0,)
            ),
            timeout=10,
        )
        holder.execute("SELECT pg_advisory_unlock(%s)", (PAUSE_KEY,))
        editing.join(30)
        competing.join(30)
    assert not competing.is_alive()
    assert "error" not in outcome, outcome
    assert not editing.is_alive()

    result_payload = result_row(conn, job)[0]  # type: ignore[index]
    queued = queue_payload(conn, job)
    if queued is not None:
        assert queued[0] == result_payload, "the job that runs carries another payload"
    changed = outcome["result"].changed
    assert edit_audits(conn)[-1][0] == changed
    if changed == 0:
        assert result_payload != NEW, "edited, and the audit says it was not"
    else:  # the edit wrote its payload; a re-post that waited for it may come after
        assert result_payload in (NEW, '{"reposted":true}'), result_payload


def test_an_edit_is_refused_on_a_read_only_session(dsn: str, conn: Conn) -> None:
    job = add_job(conn, 5)
    params = ops.EditParams(payload=NEW)
    with Database(dsn, read_only=True).connect() as ro:
        preview = ops.EDIT.preview(ro, one(job), params)
        with pytest.raises(ReadOnlyError, match="read-only"):
            ops.EDIT.execute(ro, preview.selection, params, actor=ACTOR, ids=preview.ids)

    assert result_row(conn, job) == ("{}", 5, 5, 1)


# -- with a real engine ---------------------------------------------------------------------------
def test_a_failed_job_edited_with_requeue_runs_again_with_the_new_payload(
    db: Database, dsn: str, conn: Conn
) -> None:
    seen: list[Any] = []
    registry = TaskRegistry(TaskOptions(max_attempts=1, backoff=0.05, timeout=10.0))

    @registry.task("edit.charge")
    async def charge(payload: Any) -> None:
        seen.append(payload)
        if payload["amount"] == "-1":
            raise FatalTaskError("amount must be positive")

    with Producer(db) as producer:
        job = producer.post("edit.charge", {"order_id": 7, "amount": "-1"})
    with EngineThread(dsn, registry):
        wait_until(lambda: status_of(conn, job) == JobStatus.FATAL, timeout=30)
        edit(conn, job, requeue=True)
        wait_until(lambda: status_of(conn, job) == JobStatus.PROCESSED, timeout=30)

    assert seen == [{"order_id": 7, "amount": "-1"}, json.loads(NEW)]


# -- the command --------------------------------------------------------------------------------
def test_the_command_dry_run_shows_old_and_new_and_changes_nothing(
    run_cli: CLI, conn: Conn
) -> None:
    job = add_job(conn, 5)

    doc = as_json(run_cli("edit", "--id", str(job), "--payload", NEW, "--dry-run", "--json"))

    assert (doc["action"], doc["dry_run"], doc["count"]) == ("edit", True, 1)
    assert doc["details"]["old"]["payload"] == "{}"
    assert doc["details"]["new"]["payload"] == NEW
    assert result_row(conn, job) == ("{}", 5, 5, 1)


def test_the_command_dry_run_prints_a_diff(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 5)

    proc = run_cli("edit", "--id", str(job), "--payload", '{"a": 1}', "--dry-run")

    assert proc.returncode == 0, proc.stderr
    assert '+  "a": 1' in proc.stdout
    assert "-{}" in proc.stdout


def test_the_command_with_yes_and_json_reports_the_edit(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 5)

    doc = as_json(
        run_cli("edit", "--id", str(job), "--payload", NEW, "--requeue", "--yes", "--json")
    )

    assert (doc["changed"], doc["skipped_changed_state"]) == (1, 0)
    assert doc["details"]["requeued"] is True and doc["audit_id"] is not None
    assert status_of(conn, job) == JobStatus.UNPROCESSED


def test_the_command_refuses_a_running_job_with_one_line(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 2)

    proc = run_cli("edit", "--id", str(job), "--payload", NEW, "--yes")

    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "running" in proc.stderr
    assert result_row(conn, job) == ("{}", 5, 2, 0)


def test_the_command_refuses_invalid_json_with_one_line(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 5)

    proc = run_cli("edit", "--id", str(job), "--payload", "{nope", "--yes")

    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "not valid JSON" in proc.stderr
    assert result_row(conn, job) == ("{}", 5, 5, 1)


def test_the_command_refuses_in_read_only_mode(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 5)

    proc = run_cli("--read-only", "edit", "--id", str(job), "--payload", NEW, "--yes")

    assert proc.returncode == 5 and "read-only" in proc.stderr
    assert result_row(conn, job) == ("{}", 5, 5, 1)


def test_the_command_diff_shows_hostile_payload_text_with_visible_escapes(
    run_cli: CLI, conn: Conn
) -> None:
    job = add_job(conn, 5)
    conn.execute(
        "UPDATE sk_task_results_t SET task_payload = %s WHERE task_id = %s",
        ('{"note": "\x1b]0;pwned\x07\x9b31m"}', job),
    )

    proc = run_cli("edit", "--id", str(job), "--payload", NEW, "--dry-run")

    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x9b" not in proc.stdout
    assert '-{"note": "\\x1b]0;pwned\\x07\\x9b31m"}' in proc.stdout
