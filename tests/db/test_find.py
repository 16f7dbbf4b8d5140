"""skconsole find, --where on the job actions, and find-index, against a real PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from typing import Any
from uuid import UUID

import psycopg
import pytest

from skconsole import ops, read
from skconsole.core.errors import ConfigError
from skconsole.core.find_query import FindQuery
from skconsole.core.payload_terms import PayloadTerm, parse_terms
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.db.mapping import DEFAULT_MAPPING
from skconsole.ops import Actor, Selection
from skconsole.ops.find_index import FindIndexParams
from skconsole.producer import Producer
from tests.conftest import skconsole_cmd

Conn = psycopg.Connection[Any]
ACTOR = Actor(user="tester", host="test-host")


def put(
    conn: Conn,
    payload: str | None,
    *,
    status: int = 5,
    task_type: str = "invoices.send",
    error: str | None = "app.Timeout: upstream timed out",
    age_s: float = 0.0,
    queued: bool | None = None,
) -> UUID:
    """A job with this payload text in ``status``, ``age_s`` back in time."""
    task_id = uuid.uuid4()
    conn.execute(
        """
        INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,
            task_priority, task_last_error, task_error_count, task_posted_at_ts,
            task_last_processing_attempted_at_ts, task_processing_finalized_at_ts)
        VALUES (%(id)s, %(type)s, 'tests', %(payload)s, %(status)s, 5, %(error)s,
            CASE WHEN %(error)s::text IS NULL THEN 0 ELSE 1 END,
            now() - %(age)s * interval '1 second',
            CASE WHEN %(status)s > 1 THEN now() - %(age)s * interval '1 second' END,
            CASE WHEN %(status)s IN (3, 5, 6, 7) THEN now() - %(age)s * interval '1 second' END)
        """,
        {
            "id": task_id,
            "type": task_type,
            "payload": payload,
            "status": status,
            "error": error if status not in (JobStatus.UNPROCESSED, JobStatus.PROCESSED) else None,
            "age": age_s,
        },
    )
    if queued if queued is not None else status in (JobStatus.UNPROCESSED, JobStatus.ERROR):
        conn.execute(
            "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,"
            " task_priority, task_posted_at_ts, task_locked_until_ts)"
            " VALUES (%s, %s, 'tests', %s, 5, now(), now() - interval '1 second')",
            (task_id, task_type, payload),
        )
    return task_id


def where(*texts: str) -> tuple[PayloadTerm, ...]:
    return parse_terms(list(texts))


def found(conn: Conn, **kw: Any) -> set[UUID]:
    return {j.task_id for j in read.find(conn, FindQuery(**kw))}


# -- find -----------------------------------------------------------------------------------
def test_a_number_matches_the_number_and_the_string_of_its_digits(conn: Conn) -> None:
    number = put(conn, '{"customer": {"id": 42}}')
    text = put(conn, '{"customer": {"id": "42"}}')
    put(conn, '{"customer": {"id": 421}}')
    assert found(conn, where=where("payload.customer.id=42")) == {number, text}


def test_a_string_value_and_a_nested_path_and_an_array_index_are_found(conn: Conn) -> None:
    eu = put(conn, '{"region": "eu", "items": [{"sku": "A-1"}]}')
    put(conn, '{"region": "us", "items": [{"sku": "B-2"}]}')
    assert found(conn, where=where("payload.region=eu")) == {eu}
    assert found(conn, where=where("payload.items.0.sku=A-1")) == {eu}


def test_every_term_must_match(conn: Conn) -> None:
    both = put(conn, '{"a": 1, "b": 2}')
    put(conn, '{"a": 1, "b": 3}')
    assert found(conn, where=where("payload.a=1", "payload.b=2")) == {both}


def test_payloads_that_are_not_json_are_skipped_not_fatal(conn: Conn) -> None:
    ok = put(conn, '{"a": "1"}')
    for text in ("not json{", "{broken", "[1,", "", None, '"a string"', "42", '{"a": "\\u0000"}'):
        put(conn, text)
    assert found(conn, where=where("payload.a=1")) == {ok}
    assert found(conn, where=where("payload.a=1", "payload.a=1x")) == set()


def test_find_filters_by_type_status_since_and_error(conn: Conn) -> None:
    old = put(conn, "{}", age_s=7200, error="db.Deadlock: deadlock detected")
    new = put(conn, "{}", error="Http 50%_off failed")
    other = put(conn, "{}", task_type="emails.send", status=6)
    assert found(conn, task_type="emails.send") == {other}
    assert found(conn, statuses=(6,)) == {other}
    assert found(conn, since_seconds=3600) == {new, other}
    assert found(conn, error="DEADLOCK") == {old}
    assert found(conn, error="50%_off") == {new}
    assert found(conn, error="5_%") == set()  # % and _ are taken literally


def test_find_narrows_to_the_ids_it_is_given(conn: Conn) -> None:
    a, b = put(conn, "{}"), put(conn, "{}")
    put(conn, "{}")
    assert found(conn, ids=(a, b)) == {a, b}


def test_find_by_parent_lists_the_jobs_one_job_posted(conn: Conn) -> None:
    parent, child, other = put(conn, "{}", status=3), put(conn, "{}"), put(conn, "{}")
    conn.execute(
        "UPDATE sk_task_results_t SET sk_parent_task_id = %s WHERE task_id = %s", (parent, child)
    )
    assert other not in found(conn, parent=parent)
    assert found(conn, parent=parent) == {child}


def test_find_by_group_lists_the_jobs_of_one_failure_group(conn: Conn) -> None:
    timeout = put(conn, "{}", error="app.Timeout: upstream timed out")
    put(conn, "{}", error="app.Declined: card declined")
    (signature,) = conn.execute(
        "SELECT sk_error_signature FROM sk_task_results_t WHERE task_id = %s", (timeout,)
    ).fetchone()
    assert signature is not None
    assert found(conn, group=signature) == {timeout}


def test_find_returns_at_most_its_limit_most_recent_first(conn: Conn) -> None:
    ids = [put(conn, "{}", age_s=100 - i) for i in range(5)]
    jobs = read.find(conn, FindQuery(limit=3))
    assert [j.task_id for j in jobs] == ids[::-1][:3]


def test_find_json_lists_jobs_with_their_full_payload(
    conn: Conn, run_cli: Callable[..., Any]
) -> None:
    payload = '{"customer": {"id": 42}, "note": "' + "x" * 500 + '"}'
    task_id = put(conn, payload)
    proc = run_cli("find", "--where", "payload.customer.id=42", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["limit"] == 50
    (job,) = doc["jobs"]
    assert job["task_id"] == str(task_id)
    assert job["payload"] == json.loads(payload) and job["payload_is_json"] is True
    assert set(job) == {
        "task_id",
        "task_type",
        "status",
        "status_name",
        "priority",
        "error_count",
        "posted_at",
        "last_active_at",
        "last_attempt_at",
        "due_at",
        "payload",
        "payload_is_json",
        "error",
    }
    assert job["status"] == JobStatus.FAULTED and job["error"]["message"] == "upstream timed out"


def test_find_says_when_a_delayed_job_is_due_and_that_it_never_ran(
    conn: Conn, dsn: str, run_cli: Callable[..., Any]
) -> None:
    with Producer(Database(dsn)) as p:
        job = p.post("invoices.send", {"customer": {"id": 42}}, delay=7200)

    (found,) = read.find(conn, FindQuery())
    proc = run_cli("find", "--where", "payload.customer.id=42", "--wide")

    assert found.task_id == job and found.last_attempt_at is None
    assert found.due_at is not None
    assert "due in 1h" in proc.stdout, proc.stdout
    assert "last ran" not in proc.stdout


def test_find_json_gives_a_payload_that_is_not_json_as_its_text(
    conn: Conn, run_cli: Callable[..., Any]
) -> None:
    put(conn, "not json {")
    proc = run_cli("find", "--json")
    (job,) = json.loads(proc.stdout)["jobs"]
    assert (job["payload"], job["payload_is_json"]) == ("not json {", False)


def test_find_parent_takes_the_short_id_the_console_shows(
    conn: Conn, run_cli: Callable[..., Any]
) -> None:
    parent, child = put(conn, "{}", status=3), put(conn, "{}")
    conn.execute(
        "UPDATE sk_task_results_t SET sk_parent_task_id = %s WHERE task_id = %s", (parent, child)
    )
    proc = run_cli("find", "--parent", str(parent)[:8], "--json")
    assert proc.returncode == 0, proc.stderr
    assert [j["task_id"] for j in json.loads(proc.stdout)["jobs"]] == [str(child)]


def test_find_table_shows_hostile_payload_and_error_escaped(
    conn: Conn, run_cli: Callable[..., Any]
) -> None:
    put(conn, '{"k": "\\u001b[31mred\\u001b]0;title\\u0007"}', error="bad \x1b[2J error")
    proc = run_cli("find", "--type", "invoices.send", "--wide")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "red" in proc.stdout


def test_a_bad_where_is_a_clear_error(run_cli: Callable[..., Any]) -> None:
    proc = run_cli("find", "--where", "customer.id=42")
    assert proc.returncode == 2
    assert "payload.KEY" in proc.stderr


def test_find_explain_prints_the_plan(conn: Conn, run_cli: Callable[..., Any]) -> None:
    put(conn, '{"a": 1}')
    proc = run_cli("find", "--type", "invoices.send", "--where", "payload.a=1", "--explain")
    assert proc.returncode == 0, proc.stderr
    assert "Execution Time" in proc.stdout


# -- --where on the job actions -------------------------------------------------------------
def test_requeue_where_previews_exactly_the_matching_jobs_and_audits_the_where(
    conn: Conn,
) -> None:
    match = [put(conn, '{"account": 7}'), put(conn, '{"account": "7"}')]
    put(conn, '{"account": 8}')
    put(conn, "not json")
    sel = Selection(where=where("payload.account=7"))
    preview = ops.REQUEUE.preview(conn, sel)
    assert preview.count == 2 and set(preview.ids or ()) == set(match)
    result = ops.REQUEUE.execute(conn, preview.selection, actor=ACTOR, ids=preview.ids)
    assert result.changed == 2
    (selection,) = conn.execute(
        "SELECT audit_selection FROM sk_audit_t WHERE audit_id = %s", (result.audit_id,)
    ).fetchone() or (None,)
    assert selection["where"] == [{"path": "payload.account", "value": "7"}]


def test_cancel_and_bump_where_select_waiting_jobs_by_queue_payload(conn: Conn) -> None:
    waiting = put(conn, '{"account": 7}', status=1)
    put(conn, '{"account": 8}', status=1)
    sel = Selection(where=where("payload.account=7"))
    assert ops.BUMP.preview(conn, sel, ops.BumpParams(to=0)).ids == (waiting,)
    assert ops.CANCEL.preview(conn, sel).ids == (waiting,)


def test_purge_where_counts_only_matching_final_results(conn: Conn) -> None:
    doomed = put(conn, '{"tenant": "t1"}', status=3)
    put(conn, '{"tenant": "t2"}', status=3)
    put(conn, '{"tenant": "t1"}', status=5)  # Faulted: not purged unless asked
    preview = ops.PURGE.preview(conn, Selection(where=where("payload.tenant=t1")))
    assert preview.count == 1 and preview.ids == (doomed,)


def test_purge_beyond_its_capture_limit_re_checks_the_where_in_each_batch(conn: Conn) -> None:
    doomed = [put(conn, '{"tenant": "t1"}', status=3) for _ in range(3)]
    kept = put(conn, '{"tenant": "t2"}', status=3)
    sel = Selection(where=where("payload.tenant=t1"))
    result = ops.PURGE.execute(conn, sel, actor=ACTOR, batch_size=2)  # no ids: the selection
    assert result.changed == 3
    left = {r[0] for r in conn.execute("SELECT task_id FROM sk_task_results_t").fetchall()}
    assert left == {kept} and not left & set(doomed)


def test_cli_requeue_where_dry_run_json_has_the_where(
    conn: Conn, run_cli: Callable[..., Any]
) -> None:
    put(conn, '{"account": 7}')
    put(conn, '{"account": 9}')
    proc = run_cli("requeue", "--where", "payload.account=7", "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["count"] == 1
    assert doc["selection"]["where"] == [{"path": "payload.account", "value": "7"}]


def test_a_type_action_refuses_a_where(conn: Conn) -> None:
    with pytest.raises(ConfigError, match="--type T and nothing else"):
        ops.PAUSE.preview(conn, Selection(task_type="t", where=where("payload.a=1")))


# -- find-index -----------------------------------------------------------------------------
def _plan(conn: Conn, q: FindQuery) -> str:
    conn.execute("ANALYZE sk_task_results_t")  # the plan is made on statistics, not guesses
    conn.execute("SET enable_seqscan = off")
    try:
        return "\n".join(read.explain(conn, q))
    finally:
        conn.execute("RESET enable_seqscan")


def test_find_index_add_serves_the_search_then_lists_and_drops_audited(
    conn: Conn, run_cli: Callable[..., Any]
) -> None:
    for i in range(20):
        put(conn, json.dumps({"customer": {"id": i}}))
    proc = run_cli("find-index", "add", "payload.customer.id", "--yes", "--json")
    assert proc.returncode == 0, proc.stderr
    index = FindIndexParams(("customer", "id")).index
    plan = _plan(conn, FindQuery(where=where("payload.customer.id=4")))
    assert index in plan
    listed = json.loads(run_cli("find-index", "list", "--json").stdout)["indexes"]
    assert [(i["index"], i["path"], i["valid"]) for i in listed] == [
        (index, "payload.customer.id", True)
    ]
    proc = run_cli("find-index", "drop", "payload.customer.id", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert read.find_indexes(conn, DEFAULT_MAPPING.regname("sk_task_results_t")) == []
    audit = conn.execute(
        "SELECT audit_action, audit_details->>'path' FROM sk_audit_t ORDER BY audit_id"
    ).fetchall()
    assert audit == [
        ("find-index-add", "payload.customer.id"),
        ("find-index-drop", "payload.customer.id"),
    ]


def test_a_partial_find_index_serves_a_search_bounded_by_its_type(conn: Conn) -> None:
    for i in range(20):
        put(conn, json.dumps({"order": str(i)}))
    params = FindIndexParams(("order",), "invoices.send")
    ops.FIND_INDEX_ADD.execute(conn, params=params, actor=ACTOR)
    plan = _plan(conn, FindQuery(task_type="invoices.send", where=where("payload.order=3")))
    assert params.index in plan


def test_adding_an_existing_find_index_is_nothing_to_do(conn: Conn) -> None:
    params = FindIndexParams(("a",))
    ops.FIND_INDEX_ADD.execute(conn, params=params, actor=ACTOR)
    assert ops.FIND_INDEX_ADD.preview(conn, params=params).count == 0
    again = ops.FIND_INDEX_ADD.execute(conn, params=params, actor=ACTOR)
    assert again.changed == 0
    ops.FIND_INDEX_DROP.execute(conn, params=dataclasses_replace(params), actor=ACTOR)


def dataclasses_replace(params: FindIndexParams) -> FindIndexParams:
    return FindIndexParams(params.path, params.task_type, adding=False)


def test_a_hostile_path_reaches_the_index_only_as_a_literal(conn: Conn) -> None:
    params = FindIndexParams(("a'); DROP TABLE sk_task_results_t; --",))
    ops.FIND_INDEX_ADD.execute(conn, params=params, actor=ACTOR)
    put(conn, json.dumps({"a'); DROP TABLE sk_task_results_t; --": "v"}))
    assert len(found(conn, where=(PayloadTerm(params.path, "v"),))) == 1
    ops.FIND_INDEX_DROP.execute(conn, params=dataclasses_replace(params), actor=ACTOR)


def test_a_second_build_of_an_index_being_built_refuses_in_one_line(
    conn: Conn, dsn: str, run_cli: Callable[..., Any]
) -> None:
    """Another session builds it (it holds the build lock): the second add neither drops
    that build's invalid index (failing it) nor waits, it says so."""
    index = FindIndexParams(("customer", "id")).index
    with psycopg.connect(dsn, autocommit=True) as builder:
        builder.execute(
            "SELECT pg_advisory_lock(sk_index_build_lock_class(), hashtext(%s))", (index,)
        )
        proc = run_cli("find-index", "add", "payload.customer.id", "--yes")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: the search index on payload.customer.id is being built by another session"
        " now: wait for it to end"
    ]


def test_two_adds_of_one_path_at_once_end_with_one_valid_index(conn: Conn, dsn: str) -> None:
    for i in range(2_000):
        put(conn, json.dumps({"customer": {"id": i}}))
    cmd = skconsole_cmd("--dsn", dsn, "find-index", "add", "payload.customer.id", "--yes")
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    codes = sorted(p.returncode for p in procs)
    listed = read.find_indexes(conn, DEFAULT_MAPPING.regname("sk_task_results_t"))
    conn.execute(f'DROP INDEX IF EXISTS "{FindIndexParams(("customer", "id")).index}"')
    assert codes in ([0, 0], [0, 1]), outs
    ours = [(i.path, i.valid) for i in listed if i.path == "payload.customer.id"]
    assert ours == [("payload.customer.id", True)]
    assert all("deadlock" not in out + err for out, err in outs), outs


def test_an_index_whose_comment_is_missing_is_listed_with_its_path_and_type(
    conn: Conn, run_cli: Callable[..., Any]
) -> None:
    """A build that failed before its comment was written: its definition says what it is."""
    params = FindIndexParams(("order", "id"), "invoices.send")
    conn.execute(
        f'CREATE INDEX "{params.index}" ON sk_task_results_t'
        " (sk_key(sk_try_jsonb(task_payload) #>> ARRAY['order', 'id']::text[]))"
        " WHERE task_type = 'invoices.send'::text"
    )
    listed = json.loads(run_cli("find-index", "list", "--json").stdout)["indexes"]
    conn.execute(f'DROP INDEX "{params.index}"')
    ours = [(i["path"], i["task_type"]) for i in listed if i["index"] == params.index]
    assert ours == [("payload.order.id", "invoices.send")]
