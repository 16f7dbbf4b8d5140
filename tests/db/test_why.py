"""``skconsole why``: each cause from a real situation, ranked, with its fix; and ``bump --now``."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import psycopg
import pytest

from skconsole import ops, read
from skconsole.core.errors import ConfigError
from skconsole.core.status import JobStatus
from skconsole.ops import Actor, Selection
from skconsole.read import Fix

from .test_ops import add_job, audit_rows, queue_row

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]
ACTOR = Actor(user="tester", host="test-host")


def worker(conn: Conn, *types: str, host: str = "w1") -> UUID:
    """A registered worker (lease renewed just now) that runs ``types``."""
    worker_id = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,"
        " worker_concurrency, worker_task_types, worker_lease_seconds, worker_lease_margin_seconds)"
        " VALUES (%s, 'p', %s, 4242, 4, %s, 3600, 1)",
        (worker_id, host, list(types)),
    )
    return worker_id


def job_a_worker_would_run(conn: Conn, status: int, **kw: Any) -> UUID:
    """A job of type t.a (``add_job``'s), with a registered worker that runs t.a: the job
    does not wait for want of a worker."""
    worker(conn, "t.a")
    return add_job(conn, status, **kw)


def type_settings(conn: Conn, task_type: str = "t.a", **cols: object) -> None:
    names = ", ".join(cols)
    marks = ", ".join(["%s"] * len(cols))
    conn.execute(
        f"INSERT INTO sk_task_types_t (task_type, {names}) VALUES (%s, {marks})",
        (task_type, *cols.values()),
    )


def why(conn: Conn, task_id: UUID, **kw: Any) -> read.Why:
    found = read.why(conn, task_id, **kw)
    assert found is not None
    return found


def cause(found: read.Why, code: str) -> read.Cause:
    (c,) = [c for c in found.causes if c.code.value == code]
    return c


@contextmanager
def other_session(dsn: str) -> Iterator[Conn]:
    with psycopg.connect(dsn, autocommit=False) as other:
        other.execute("SET idle_in_transaction_session_timeout = '30s'")
        yield other
        other.rollback()


# -- not due ---------------------------------------------------------------------------------
def test_a_delayed_job_is_not_due_and_says_when(conn: Conn) -> None:
    job = job_a_worker_would_run(conn, 1, ready=False)

    c = cause(why(conn, job), "not_due")

    assert c.facts["kind"] == "delay"
    assert "due at" in c.evidence
    assert c.fixes == (Fix("bump", ("--now", "--id", str(job))),)
    assert c.fix == f"skconsole bump --now --id {job}"


def test_a_retry_waits_out_its_back_off(conn: Conn) -> None:
    job = job_a_worker_would_run(conn, 4, ready=False)

    c = cause(why(conn, job), "not_due")

    assert c.facts["kind"] == "backoff"
    assert "back-off after 1 failed attempt(s)" in c.evidence


def test_a_snoozed_job_says_it_was_snoozed(conn: Conn) -> None:
    job = job_a_worker_would_run(conn, 1, ready=False)
    conn.execute(  # as hand_back.sql leaves a snoozed job
        "UPDATE sk_task_results_t SET sk_snooze_count = 2, sk_attempt = 2,"
        " task_last_processing_attempted_at_ts = now() WHERE task_id = %s",
        (job,),
    )

    c = cause(why(conn, job), "not_due")

    assert c.facts["kind"] == "snooze"
    assert "snoozed by its handler (2 time(s))" in c.evidence


# -- the type's settings -----------------------------------------------------------------------
def test_a_paused_type_is_named_with_resume_as_its_fix(conn: Conn) -> None:
    job = job_a_worker_would_run(conn, 1)
    ops.PAUSE.execute(conn, Selection(task_type="t.a"), actor=ACTOR)

    found = why(conn, job)

    assert found.codes == ["paused"]
    assert found.causes[0].fix == "skconsole resume t.a"


def test_a_full_concurrency_limit_names_the_jobs_holding_the_slots(conn: Conn) -> None:
    w = worker(conn, "t.a")
    holder = add_job(conn, 2, owner=w)
    job = add_job(conn, 1)
    type_settings(conn, tt_max_running=1)

    found = why(conn, job)

    assert found.codes == ["limit_full"]
    c = found.causes[0]
    assert str(holder) in c.evidence and "on w1 pid 4242" in c.evidence
    assert c.facts["holders"] == [str(holder)]
    assert c.fix.startswith("skconsole limit t.a --concurrency N")


def test_a_used_up_rate_window_says_when_the_next_claim_may_come(conn: Conn) -> None:
    job = job_a_worker_would_run(conn, 1)
    conn.execute(
        "INSERT INTO sk_task_types_t (task_type, tt_rate_count, tt_rate_seconds,"
        " tt_window_start_ts, tt_window_claims) VALUES ('t.a', 2, 3600, now(), 2)"
    )

    found = why(conn, job)

    assert found.codes == ["rate_limited"]
    assert "2 of 2 claims per 3600 s" in found.causes[0].evidence
    assert found.causes[0].facts["next_claim_at"] is not None


def test_a_type_no_live_worker_runs_has_no_worker(conn: Conn) -> None:
    worker(conn, "t.other")
    job = add_job(conn, 1)

    found = why(conn, job)

    assert found.codes == ["no_worker"]
    assert "1 live worker(s) run other types" in found.causes[0].evidence


def test_a_stopped_worker_is_no_worker(conn: Conn) -> None:
    w = worker(conn, "t.a")
    conn.execute("UPDATE sk_workers_t SET worker_stopped_at_ts = now() WHERE worker_id = %s", (w,))
    job = add_job(conn, 1)

    assert why(conn, job).codes == ["no_worker"]


# -- the queue -----------------------------------------------------------------------------------
def test_jobs_ahead_in_claim_order_are_counted(conn: Conn) -> None:
    worker(conn, "t.a")
    for _ in range(3):
        add_job(conn, 1, priority=1)
    add_job(conn, 1, priority=9)  # behind it
    add_job(conn, 1, priority=1, ready=False)  # not due: not ahead
    add_job(conn, 1, priority=1, task_type="t.b")  # another type
    job = add_job(conn, 1, priority=5)

    found = why(conn, job)

    assert found.codes == ["behind"]
    assert found.causes[0].facts["ahead"] == 3
    assert found.causes[0].fix == f"skconsole bump --to 0 --id {job}"


def test_a_job_not_due_also_names_the_jobs_it_will_be_behind_once_due(conn: Conn) -> None:
    worker(conn, "t.a")
    for _ in range(3):
        add_job(conn, 1, priority=1)
    job = add_job(conn, 1, priority=5, ready=False)

    found = why(conn, job)

    assert found.codes == ["not_due", "behind"]
    behind = found.causes[1]
    assert behind.facts["ahead"] == 3 and behind.facts["once_due"] is True
    assert behind.evidence.startswith("once due: 3 due job(s)")


def test_due_jobs_of_the_other_types_its_workers_run_are_ahead_of_it(conn: Conn) -> None:
    worker(conn, "t.a", "t.b", "t.p")
    worker(conn, "t.c", host="w2")
    add_job(conn, 1, priority=1, task_type="t.b")
    add_job(conn, 1, priority=1, task_type="t.b")
    add_job(conn, 1, priority=1, task_type="t.c")  # no worker of t.a claims t.c
    add_job(conn, 1, priority=1, task_type="t.p")  # a paused type: no claim takes it
    ops.PAUSE.execute(conn, Selection(task_type="t.p"), actor=ACTOR)
    job = add_job(conn, 1, priority=5)

    c = cause(why(conn, job), "behind")

    assert c.facts["ahead"] == 2
    assert c.facts["types"] == ["t.a", "t.b", "t.p"]
    assert "of its type and of t.b, t.p (its workers claim those too)" in c.evidence


def test_nothing_holding_it_back_says_ready(conn: Conn) -> None:
    job = job_a_worker_would_run(conn, 1)

    assert why(conn, job).codes == ["ready"]


def test_a_held_row_lock_names_its_session(conn: Conn, dsn: str) -> None:
    job = job_a_worker_would_run(conn, 1)
    with other_session(dsn) as other:
        other.execute("SET application_name = 'locker'")
        other.execute("SELECT 1 FROM sk_tasks_queue_t WHERE task_id = %s FOR UPDATE", (job,))
        pid = other.info.backend_pid

        found = why(conn, job)

    c = cause(found, "lock_wait")
    assert c.facts["pids"] == [pid]
    assert f"its queue row is locked by pid {pid} (locker)" in c.evidence
    assert c.fix.startswith(f"skconsole cancel-session {pid};")


def test_an_open_transaction_holding_the_horizon_is_named(conn: Conn, dsn: str) -> None:
    job = job_a_worker_would_run(conn, 1)
    with other_session(dsn) as other:
        other.execute("SELECT txid_current()")
        pid = other.info.backend_pid

        found = why(conn, job, horizon_s=0.0)

    c = cause(found, "horizon")
    assert pid in c.facts["pids"]  # type: ignore[operator]
    assert "holds the xmin horizon" in c.evidence


def test_a_young_transaction_is_not_a_horizon_cause(conn: Conn, dsn: str) -> None:
    job = job_a_worker_would_run(conn, 1)
    with other_session(dsn) as other:
        other.execute("SELECT txid_current()")

        assert why(conn, job).codes == ["ready"]


# -- ranking -------------------------------------------------------------------------------------
def test_causes_are_ranked_what_stops_a_claim_outright_first(conn: Conn) -> None:
    for _ in range(2):
        add_job(conn, 1, priority=0)
    job = add_job(conn, 1, ready=False)
    type_settings(conn, tt_paused=True, tt_max_running=0)

    assert why(conn, job).codes == ["paused", "no_worker", "not_due", "limit_full"]


# -- jobs that do not wait -----------------------------------------------------------------------
def test_a_running_job_gives_its_worker_state_and_run_time(conn: Conn) -> None:
    w = worker(conn, "t.a")
    job = add_job(conn, 2, owner=w, age_s=5)

    found = why(conn, job)

    assert found.codes == ["running"]
    c = found.causes[0]
    assert "its worker w1 pid 4242 is connection lost" in c.evidence
    assert c.facts["worker_state"] == "connection lost"
    assert c.fix == f"skconsole cancel --id {job}, to stop it"


def test_a_finished_job_is_not_waiting(conn: Conn) -> None:
    job = add_job(conn, 3)

    found = why(conn, job)

    assert found.codes == ["finished"]
    assert found.causes[0].evidence == "not waiting: it is over (3 Processed)"


def test_a_faulted_job_is_parked_with_requeue_as_its_fix(conn: Conn) -> None:
    job = add_job(conn, 5)

    found = why(conn, job)

    assert found.codes == ["not_queued"]
    assert found.causes[0].fix == f"skconsole requeue --id {job}"


# -- ids, the CLI and its JSON ---------------------------------------------------------------------
def test_a_unique_prefix_names_the_job(conn: Conn) -> None:
    job = add_job(conn, 1)

    assert read.resolve_job(conn, str(job)[:8]) == job
    assert read.resolve_job(conn, str(job).upper()) == job


def test_a_prefix_of_two_jobs_is_refused(conn: Conn) -> None:
    for last in "12":
        conn.execute(
            "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,"
            " task_priority, task_posted_at_ts, task_locked_until_ts)"
            " VALUES (%s, 't.a', 'tests', '{}', 0, now(), now())",
            (UUID(f"abcdef00-0000-0000-0000-00000000000{last}"),),
        )

    with pytest.raises(read.JobNotFoundError, match="matches several jobs"):
        read.resolve_job(conn, "abcdef00")
    with pytest.raises(ConfigError, match="hexadecimal"):
        read.resolve_job(conn, "xyz")


def test_why_json_is_the_causes_list(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 1, ready=False)
    type_settings(conn, tt_paused=True)

    proc = run_cli("why", str(job)[:13], "--json")

    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [c["code"] for c in doc["causes"]] == ["paused", "no_worker", "not_due"]
    assert all(set(c) == {"code", "evidence", "fix", "fixes"} for c in doc["causes"])
    assert doc["job"] == {
        "id": str(job),
        "type": "t.a",
        "status": JobStatus.UNPROCESSED,
        "status_name": "Unprocessed",
    }
    assert doc["facts"]["not_due"]["kind"] == "delay"


def test_why_prints_the_causes_with_their_fixes(run_cli: CLI, conn: Conn) -> None:
    job = job_a_worker_would_run(conn, 1, ready=False)

    proc = run_cli("why", str(job))

    assert proc.returncode == 0, proc.stderr
    assert "1. not_due: not due for" in proc.stdout
    assert f"fix: skconsole bump --now --id {job}" in proc.stdout
    assert "key N" not in proc.stdout  # a console key, not a command line's


def test_why_of_an_unknown_job_exits_1_as_job_does(run_cli: CLI) -> None:
    proc = run_cli("why", str(uuid.uuid4()))

    assert proc.returncode == 1
    assert "no job id starts with" in proc.stderr


# -- bump --now -------------------------------------------------------------------------------------
def test_bump_now_makes_waiting_jobs_due_at_once_and_leaves_their_priority(conn: Conn) -> None:
    later = add_job(conn, 1, ready=False, priority=7)
    backing_off = add_job(conn, 4, ready=False)

    result = ops.BUMP.execute(
        conn, Selection(task_type="t.a"), actor=ACTOR, params=ops.BumpParams(now=True)
    )

    assert result.changed == 2
    assert queue_row(conn, later) == (7, True)
    assert queue_row(conn, backing_off) == (5, True)


def test_bump_now_leaves_due_and_running_jobs_alone(conn: Conn) -> None:
    due = add_job(conn, 1, age_s=60)
    before = conn.execute(
        "SELECT task_locked_until_ts FROM sk_tasks_queue_t WHERE task_id = %s", (due,)
    ).fetchone()
    running = add_job(conn, 2, owner=uuid.uuid4())

    result = ops.BUMP.execute(
        conn, Selection(ids=(due, running)), actor=ACTOR, params=ops.BumpParams(now=True)
    )

    assert (result.changed, result.details["unchanged"]) == (0, 1)
    after = conn.execute(
        "SELECT task_locked_until_ts FROM sk_tasks_queue_t WHERE task_id = %s", (due,)
    ).fetchone()
    assert after == before
    assert conn.execute(
        "SELECT task_status FROM sk_task_results_t WHERE task_id = %s", (running,)
    ).fetchone() == (2,)


def test_bump_now_is_audited(conn: Conn) -> None:
    add_job(conn, 1, ready=False)

    ops.BUMP.execute(conn, Selection(task_type="t.a"), actor=ACTOR, params=ops.BumpParams(now=True))

    ((user, _host, action, _sel, count, details),) = audit_rows(conn)
    assert (user, action, count) == ("tester", "bump", 1)
    assert details["now"] is True


def test_bump_now_leaves_a_job_whose_queue_row_is_locked(conn: Conn, dsn: str) -> None:
    job = add_job(conn, 1, ready=False)
    preview = ops.BUMP.preview(conn, Selection(ids=(job,)), params=ops.BumpParams(now=True))
    with other_session(dsn) as other:  # a claim holding the row
        other.execute("SELECT 1 FROM sk_tasks_queue_t WHERE task_id = %s FOR UPDATE", (job,))

        result = ops.BUMP.execute(
            conn, preview.selection, actor=ACTOR, ids=preview.ids, params=ops.BumpParams(now=True)
        )

    assert (result.changed, result.skipped_changed_state) == (0, 1)
    assert queue_row(conn, job) == (5, False)


def test_bump_now_from_the_cli_then_why_says_ready(run_cli: CLI, conn: Conn) -> None:
    job = job_a_worker_would_run(conn, 1, ready=False)

    proc = run_cli("bump", "--now", "--id", str(job), "--yes")

    assert proc.returncode == 0, proc.stderr
    assert why(conn, job).codes == ["ready"]


def test_bump_takes_only_one_of_by_to_and_now() -> None:
    with pytest.raises(ConfigError, match="exactly one of --by N, --to N or --now"):
        ops.BumpParams(to=0, now=True)
