"""Fleet-wide limits per task type: the claim statement applies them, the limit action sets them."""

from __future__ import annotations

import subprocess
import threading
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from skconsole import ops, read
from skconsole.core.errors import ReadOnlyError
from skconsole.db.sqlfiles import query
from skconsole.ops import Actor, LimitParams, Rate, Selection
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]
ACTOR = Actor(user="tester", host="test-host")
LIMITED, OTHER = "lim.slow", "lim.fast"


def post(conn: Conn, task_type: str, n: int) -> None:
    """``n`` jobs of ``task_type``, ready now."""
    conn.execute(
        "INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,"
        " task_priority, task_posted_at_ts, task_locked_until_ts)"
        " SELECT gen_random_uuid(), %s, 'test', 'null', 0, now(), now() - interval '1 s'"
        " FROM generate_series(1, %s)",
        (task_type, n),
    )


def claim(conn: Conn, limit: int = 50, types: tuple[str, ...] = (LIMITED, OTHER)) -> list[str]:
    """One claim as a worker makes it; the claimed jobs' types."""
    rows = conn.execute(
        query("claim"),
        {"types": list(types), "limit": limit, "worker_id": uuid.uuid4(), "hold_s": 12.0},
    ).fetchall()
    return [r[1] for r in rows]


def set_limit(conn: Conn, task_type: str = LIMITED, **kw: Any) -> ops.ActionResult:
    return ops.LIMIT.execute(conn, Selection(task_type=task_type), LimitParams(**kw), actor=ACTOR)


# -- concurrency ----------------------------------------------------------------------------
def test_a_claim_takes_no_more_jobs_of_a_limited_type_than_its_free_slots(conn: Conn) -> None:
    post(conn, LIMITED, 10)
    set_limit(conn, concurrency=3)
    claim(conn, limit=1)

    assert claim(conn) == [LIMITED, LIMITED]


def test_a_claim_takes_other_types_while_a_limited_type_is_full(conn: Conn) -> None:
    post(conn, LIMITED, 10)
    post(conn, OTHER, 5)
    set_limit(conn, concurrency=2)

    taken = claim(conn)

    assert taken.count(LIMITED) == 2 and taken.count(OTHER) == 5


def test_a_finished_job_frees_its_slot(conn: Conn) -> None:
    post(conn, LIMITED, 10)
    set_limit(conn, concurrency=1)
    claim(conn)
    conn.execute("UPDATE sk_task_results_t SET task_status = 3 WHERE task_type = %s", (LIMITED,))

    assert claim(conn) == [LIMITED]


def wait_for_lock_wait(conn: Conn) -> None:
    """Until a session of this database waits for a lock."""

    def waiting() -> bool:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE wait_event_type = 'Lock' AND datname = current_database()"
        ).fetchone()
        return row is not None and row[0] > 0

    wait_until(waiting, timeout=10)


def test_two_concurrent_claims_cannot_both_take_the_last_slot(dsn: str, conn: Conn) -> None:
    """The second claim waits for the first one's lock on the type, then counts its jobs."""
    post(conn, LIMITED, 10)
    set_limit(conn, concurrency=2)
    second: list[list[str]] = []
    with psycopg.connect(dsn) as first:  # a transaction: holds the type's lock until commit
        assert claim(first, limit=1) == [LIMITED]
        with psycopg.connect(dsn, autocommit=True) as other:
            t = threading.Thread(target=lambda: second.append(claim(other)))
            t.start()
            wait_for_lock_wait(conn)  # the second claim waits for the first one's lock
            assert t.is_alive()
            first.commit()
            t.join(10)

    assert second == [[LIMITED]]  # one slot was left, not two


def test_claims_of_unlimited_types_never_wait_for_a_limited_types_lock(
    dsn: str, conn: Conn
) -> None:
    post(conn, LIMITED, 10)
    post(conn, OTHER, 3)
    set_limit(conn, concurrency=5)
    with psycopg.connect(dsn) as holder:
        claim(holder, limit=1, types=(LIMITED,))  # holds the limited type's lock
        conn.execute("SET lock_timeout = '1s'")

        assert claim(conn, types=(OTHER,)) == [OTHER] * 3


# -- rate -----------------------------------------------------------------------------------
def test_a_rate_limit_lets_n_claims_through_per_window(conn: Conn) -> None:
    post(conn, LIMITED, 20)
    set_limit(conn, rate=Rate(3, 1.0))

    assert len(claim(conn)) == 3
    assert claim(conn) == []


def test_a_rate_limit_lets_n_more_through_when_the_window_ends(conn: Conn) -> None:
    post(conn, LIMITED, 20)
    set_limit(conn, rate=Rate(3, 60.0))
    claim(conn, limit=2)
    claim(conn, limit=2)  # the third of the window
    conn.execute(  # the window as if it had opened an hour ago: ended, without waiting for it
        "UPDATE sk_task_types_t SET tt_window_start_ts = tt_window_start_ts - interval '1 hour'"
    )

    assert len(claim(conn)) == 3


def test_a_rate_window_counts_only_jobs_actually_claimed(conn: Conn) -> None:
    post(conn, LIMITED, 1)
    set_limit(conn, rate=Rate(3, 60.0))
    claim(conn)
    post(conn, LIMITED, 5)

    assert len(claim(conn)) == 2


# -- changing and clearing ------------------------------------------------------------------
def test_clearing_a_limit_lets_the_type_be_claimed_in_full(conn: Conn) -> None:
    post(conn, LIMITED, 10)
    set_limit(conn, concurrency=1, rate=Rate(1, 60.0))
    claim(conn)
    set_limit(conn, clear_concurrency=True, clear_rate=True)

    assert len(claim(conn)) == 9


def test_a_raised_limit_applies_at_the_next_claim(conn: Conn) -> None:
    post(conn, LIMITED, 10)
    set_limit(conn, concurrency=1)
    claim(conn)
    set_limit(conn, concurrency=4)

    assert len(claim(conn)) == 3


def test_setting_one_limit_keeps_the_other(conn: Conn) -> None:
    set_limit(conn, concurrency=2)
    set_limit(conn, rate=Rate(10, 60.0))

    [limit] = read.limits(conn)
    assert (limit.concurrency, limit.rate) == (2, "10/min")


def test_a_paused_limited_type_is_not_claimed(conn: Conn) -> None:
    post(conn, LIMITED, 3)
    set_limit(conn, concurrency=2)
    ops.PAUSE.execute(conn, Selection(task_type=LIMITED), actor=ACTOR)

    assert claim(conn) == []


# -- the action -----------------------------------------------------------------------------
def test_the_preview_shows_the_limits_before_and_after(conn: Conn) -> None:
    set_limit(conn, concurrency=2)

    p = ops.LIMIT.preview(conn, Selection(task_type=LIMITED), LimitParams(rate=Rate(5, 1.0)))

    assert p.count == 1
    assert p.details["old"] == {"concurrency": 2, "rate": None}
    assert p.details["new"] == {"concurrency": 2, "rate": "5/s"}


def test_the_audit_row_records_the_old_and_new_limits(conn: Conn) -> None:
    set_limit(conn, concurrency=2)
    set_limit(conn, concurrency=5, rate=Rate(10, 60.0))

    details = ops.audit.entries(conn, action="limit")[0].details or {}
    assert details["old"] == {"concurrency": 2, "rate": None}
    assert details["new"] == {"concurrency": 5, "rate": "10/min"}


def test_setting_the_same_limits_again_changes_nothing(conn: Conn) -> None:
    set_limit(conn, concurrency=2)

    again = set_limit(conn, concurrency=2)

    assert again.changed == 0 and again.details["unchanged"] == 1


def test_a_limit_is_refused_in_a_read_only_session(conn: Conn) -> None:
    conn.execute("SET default_transaction_read_only = on")

    with pytest.raises(ReadOnlyError, match="refused: limit"):
        set_limit(conn, concurrency=2)


# -- the command ----------------------------------------------------------------------------
def test_the_limit_command_sets_a_concurrency_and_a_rate(run_cli: CLI, conn: Conn) -> None:
    done = run_cli("limit", LIMITED, "--concurrency", "2", "--rate", "10/min", "--yes")

    assert done.returncode == 0, done.stderr
    assert f"{LIMITED}: concurrency 2, rate 10/min (audit #" in done.stdout


def test_the_limit_command_alone_lists_the_limits(run_cli: CLI, conn: Conn) -> None:
    set_limit(conn, concurrency=2, rate=Rate(10, 60.0))

    shown = run_cli("limit", "--json")

    assert '"concurrency": 2, "rate": "10/min", "running": 0' in shown.stdout


def test_the_limit_command_clears_both_limits(run_cli: CLI, conn: Conn) -> None:
    set_limit(conn, concurrency=2, rate=Rate(10, 60.0))

    done = run_cli("limit", LIMITED, "--clear", "--yes")

    assert done.returncode == 0 and f"{LIMITED}: no limits" in done.stdout
    assert read.limits(conn) == []


def test_a_dry_run_changes_nothing(run_cli: CLI, conn: Conn) -> None:
    done = run_cli("limit", LIMITED, "--concurrency", "2", "--dry-run")

    assert "limit would set concurrency 2" in done.stdout.replace("\n", " ")
    assert read.limits(conn) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--rate", "10/hour"), "error: invalid --rate '10/hour': expected N/s or N/min"),
        (("--concurrency", "-1"), "error: --concurrency must be 1 to 1,000,000"),
    ],
)
def test_a_bad_limit_is_one_clear_line(run_cli: CLI, args: tuple[str, ...], message: str) -> None:
    done = run_cli("limit", LIMITED, *args, "--yes")

    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith(message)


def test_the_limit_command_is_refused_in_read_only_mode(run_cli: CLI, conn: Conn) -> None:
    done = run_cli("--read-only", "limit", LIMITED, "--concurrency", "2", "--yes")

    assert done.returncode != 0 and "refused" in done.stderr
    assert read.limits(conn) == []


def test_status_depth_shows_a_types_limits(run_cli: CLI, conn: Conn) -> None:
    post(conn, LIMITED, 1)
    set_limit(conn, concurrency=2, rate=Rate(10, 60.0))

    shown = run_cli("status", "depth", "--wide")

    assert "0/2 · 10/min" in shown.stdout


def test_a_claim_of_an_unlimited_type_locks_no_type_row(dsn: str, conn: Conn) -> None:
    post(conn, OTHER, 3)
    ops.PAUSE.execute(conn, Selection(task_type=OTHER), actor=ACTOR)
    ops.RESUME.execute(conn, Selection(task_type=OTHER), actor=ACTOR)  # it has a row, no limits
    with psycopg.connect(dsn) as claimer:
        assert claim(claimer, types=(OTHER,)) == [OTHER] * 3  # its transaction still open

        row = conn.execute(
            "SELECT task_type FROM sk_task_types_t WHERE task_type = %s FOR UPDATE NOWAIT",
            (OTHER,),
        ).fetchone()

    assert row == (OTHER,)


# -- claims never wait for a row another transaction holds ---------------------------------
def test_a_claim_skips_a_job_whose_result_row_another_transaction_holds(
    dsn: str, conn: Conn
) -> None:
    """An application's transaction holds the result row of a waiting job of a limited
    type (say it posted it again with its key and has not committed yet): a claim takes
    the other jobs at once and leaves that one, instead of waiting for the row while it
    holds the limited type's lock, which every other worker's claim would queue behind."""
    from skconsole.producer import Job, Producer

    set_limit(conn, concurrency=5)
    with Producer(dsn) as producer:
        held_job = producer.post_many([Job(LIMITED, {"n": 0}, priority=0)]).ids[0]
        producer.post_many([Job(OTHER, {"n": 1}, priority=1)])
    with psycopg.connect(dsn) as app:
        app.execute("SELECT 1 FROM sk_task_results_t WHERE task_id = %s FOR UPDATE", (held_job,))
        with psycopg.connect(dsn, autocommit=True) as worker:
            worker.execute("SET statement_timeout = '3s'")
            assert claim(worker) == [OTHER]
        app.rollback()
    assert claim(conn) == [LIMITED]


def test_a_keyed_post_of_a_waiting_job_inside_a_transaction_locks_nothing(
    dsn: str, conn: Conn
) -> None:
    """A keyed re-post of a job that waits changes nothing, so it must lock nothing: the
    caller's transaction may stay open for long, and claims would have to go around it."""
    from skconsole.producer import Job, Producer

    with Producer(dsn) as producer:
        waiting = producer.post_many([Job(LIMITED, {"n": 0}, key="order-7")]).ids[0]
    with psycopg.connect(dsn) as app, Producer(dsn) as producer:
        again = producer.post_many([Job(LIMITED, {"n": 1}, key="order-7")], connection=app)
        assert (again.posted, again.skipped) == (0, 1)
        with psycopg.connect(dsn, autocommit=True) as other:
            row = other.execute(
                "SELECT task_id FROM sk_task_results_t WHERE task_id = %s FOR UPDATE NOWAIT",
                (waiting,),
            ).fetchone()
            assert row == (waiting,)
        app.commit()
