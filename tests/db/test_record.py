"""The per-minute record: written by the statements that change jobs, rolled by any
worker's upkeep, and never deleted with the job rows."""

from __future__ import annotations

import json
import subprocess
import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg import conninfo, sql

from skconsole import read
from skconsole.core.errors import FatalTaskError
from skconsole.core.latency import BUCKETS, bucket_of
from skconsole.core.record_grains import RECORD_GRAINS
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.ops import RETENTION, RetentionParams, Selection
from skconsole.producer import Producer
from skconsole.producer.job import Job
from skconsole.read.record import RecordSource
from skconsole.testing.run import run_until_idle
from skconsole.worker import retention as worker_retention
from skconsole.worker.config import RECORD_KEEP_S
from skconsole.worker.registry import TaskOptions, TaskRegistry
from tests.conftest import select_only_role
from tests.support.waiting import wait_until

from .test_ops import ACTOR, add_job

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]


def registry() -> TaskRegistry:
    tasks = TaskRegistry(TaskOptions(max_attempts=2, timeout=10.0))
    tasks.task("rec.ok")(lambda payload: None)

    def fatal(payload: object) -> None:
        raise FatalTaskError("partner rejected the invoice")

    tasks.task("rec.fatal")(fatal)

    def flaky(payload: object) -> None:
        raise ValueError("partner timed out")

    tasks.task("rec.flaky")(flaky)
    return tasks


def db_now(conn: Conn) -> datetime:
    value: datetime = conn.execute("SELECT now()").fetchone()[0]  # type: ignore[index]
    return value


def last_hour(conn: Conn) -> read.Record:
    now = db_now(conn)
    return read.record(conn, since=now - timedelta(hours=1), until=now + timedelta(minutes=1))


def roll(conn: Conn, keep_s: float = RECORD_KEEP_S) -> tuple[int, int, int]:
    params = {"keep_s": keep_s, "batch": 50_000, "grains": list(RECORD_GRAINS)}
    row = conn.execute(query("record_roll"), params).fetchone()
    assert row is not None
    return row[0], row[1], row[2]


def post_and_run(db: Database, ok: int, fatal: int, flaky: int) -> None:
    with Producer(db) as p:
        p.post_many(
            [Job("rec.ok", {"i": i}) for i in range(ok)]
            + [Job("rec.fatal", {"i": i}) for i in range(fatal)]
            + [Job("rec.flaky", {"i": i}) for i in range(flaky)]
        )
    run_until_idle(db, registry(), backoff=0)


def test_posts_starts_and_endings_are_counted_per_type(db: Database, conn: Conn) -> None:
    post_and_run(db, ok=5, fatal=2, flaky=3)

    rec = last_hour(conn)

    ok, fatal, flaky = rec.total("rec.ok"), rec.total("rec.fatal"), rec.total("rec.flaky")
    assert (ok.posted, ok.started, ok.succeeded, ok.failed) == (5, 5, 5, 0)
    assert (fatal.posted, fatal.started, fatal.failed_fatal, fatal.succeeded) == (2, 2, 2, 0)
    # max_attempts 2: one recoverable failure, then faulted
    assert (flaky.posted, flaky.started) == (3, 6)
    assert (flaky.failed_recoverable, flaky.failed_faulted) == (3, 3)
    assert rec.source is RecordSource.RECORD


def test_each_failure_counts_under_its_signature(db: Database, conn: Conn) -> None:
    post_and_run(db, ok=0, fatal=2, flaky=1)

    signatures = {(t, n) for t, _s, n in last_hour(conn).signatures()}

    assert signatures == {("rec.fatal", 2), ("rec.flaky", 2)}
    (fatal_sig,) = [s for t, s, _n in last_hour(conn).signatures() if t == "rec.fatal"]
    assert "partner rejected the invoice" in fatal_sig


def test_waits_and_run_times_are_kept_as_histograms(db: Database, conn: Conn) -> None:
    post_and_run(db, ok=10, fatal=0, flaky=0)

    ok = last_hour(conn).total("rec.ok")

    assert ok.wait.count == 10 and ok.run.count == 10
    assert ok.wait_latency.max_ms is not None and ok.wait_latency.p95_ms is not None
    assert ok.wait_latency.p95_ms <= ok.wait_latency.max_ms


def test_a_purge_and_a_retention_pass_leave_the_history_as_it_was(
    db: Database, conn: Conn, run_cli: CLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    post_and_run(db, ok=6, fatal=3, flaky=0)
    roll(conn)  # some of it rolled, some of it fresh: both kept
    before = last_hour(conn)
    history_before = json.loads(run_cli("status", "history", "--json").stdout)
    wait_until(
        lambda: (
            conn.execute(
                "SELECT count(*) FROM sk_task_results_t"
                " WHERE task_processing_finalized_at_ts > now() - interval '1 second'"
            ).fetchone()
            == (0,)
        )
    )

    purged = run_cli("purge", "--status", "3", "--older-than", "1s", "--yes", "--json")
    RETENTION.execute(conn, Selection(), RetentionParams(older_than_s=1.0), actor=ACTOR)
    (policy,) = worker_retention_policies(conn)
    conn.execute(query("retention_purge"), _purge_params(policy, conn))

    assert purged.returncode == 0, purged.stderr
    assert conn.execute("SELECT count(*) FROM sk_task_results_t").fetchone() == (0,)
    after = last_hour(conn)
    assert after.total() == before.total()
    assert after.signatures() == before.signatures()
    assert json.loads(run_cli("status", "history", "--json").stdout) == history_before


def worker_retention_policies(conn: Conn) -> list[Any]:
    from skconsole.ops import retention

    return retention.policies(conn)


def _purge_params(policy: Any, conn: Conn) -> dict[str, object]:
    from skconsole.ops import retention

    return worker_retention.purge_params(policy, retention.policies(conn), "test", None, 100)


def test_a_reap_is_counted_as_reaped_under_the_hung_job_signature(conn: Conn, run_cli: CLI) -> None:
    add_job(conn, 2, task_type="rec.hung", owner=uuid.uuid4())

    reaped = run_cli("reap", "--yes", "--json")

    assert reaped.returncode == 0, reaped.stderr
    hung = last_hour(conn).total("rec.hung")
    assert (hung.reaped, hung.failed_recoverable) == (1, 1)
    ((task_type, signature, n),) = last_hour(conn).signatures()
    assert (task_type, n) == ("rec.hung", 1)
    assert signature.startswith("skconsole.HungJob")


def test_a_cancel_of_a_waiting_job_is_counted(conn: Conn, run_cli: CLI) -> None:
    job = add_job(conn, 1, task_type="rec.cancel")

    run_cli("cancel", "--id", str(job), "--yes")

    assert last_hour(conn).total("rec.cancel").cancelled == 1


def test_a_roll_moves_rows_without_changing_any_figure(db: Database, conn: Conn) -> None:
    post_and_run(db, ok=4, fatal=1, flaky=0)
    conn.execute("UPDATE sk_record_fresh_t SET minute = minute - interval '5 minutes'")
    before = last_hour(conn)

    rolled, spans, _ = roll(conn)

    assert rolled > 0 and spans > 0
    assert conn.execute("SELECT count(*) FROM sk_record_fresh_t").fetchone() == (0,)
    assert last_hour(conn).total() == before.total()


def test_rolls_racing_each_other_and_late_writers_count_every_row_once(
    dsn: str, conn: Conn
) -> None:
    """Three rollers and two writers at once: the writers add rows for minutes already
    rolled (a statement that commits late), over and over; every row is counted once and
    no roll waits for, or deadlocks with, another."""
    stop = threading.Event()
    errors: list[BaseException] = []
    written = [0, 0]

    def roller() -> None:
        with psycopg.connect(dsn, autocommit=True) as c:
            while not stop.is_set():
                try:
                    roll(c)
                except BaseException as exc:
                    errors.append(exc)
                    return

    def writer(k: int) -> None:
        with psycopg.connect(dsn, autocommit=True) as c:
            for _ in range(300):
                c.execute(
                    "INSERT INTO sk_record_fresh_t (minute, task_type, posted, wait_ms)"
                    " SELECT date_trunc('minute', now()) - m * interval '1 minute',"
                    " 'rec.race', 1, ARRAY[1.5] FROM generate_series(1, 5) m"
                )
                written[k] += 5

    rollers = [threading.Thread(target=roller) for _ in range(3)]
    writers = [threading.Thread(target=writer, args=(k,)) for k in range(2)]
    for t in rollers + writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    for t in rollers:
        t.join()
    roll(conn)

    assert errors == []
    got = last_hour(conn).total("rec.race")
    assert got.posted == sum(written) == 3_000
    assert got.wait.count == 3_000


def test_quarter_hours_and_hours_add_up_to_the_same_figures_as_the_minutes(
    db: Database, conn: Conn
) -> None:
    post_and_run(db, ok=7, fatal=2, flaky=1)
    conn.execute("UPDATE sk_record_fresh_t SET minute = minute - interval '2 hours'")
    roll(conn)
    now = db_now(conn)

    def read_in(step: timedelta) -> read.Counts:
        return read.record(conn, since=now - timedelta(hours=4), until=now, step=step).total()

    by_minute = read_in(timedelta(minutes=1))
    assert by_minute.posted == 10
    assert read_in(timedelta(minutes=15)) == by_minute
    assert read_in(timedelta(hours=1)) == by_minute


def test_the_roll_trims_minutes_older_than_the_record_keeps(conn: Conn) -> None:
    conn.execute(
        "INSERT INTO sk_record_t (grain, minute, task_type, posted) VALUES"
        " (1, date_trunc('minute', now()) - interval '3 hours', 'old', 1),"
        " (1, date_trunc('minute', now()) - interval '30 minutes', 'young', 1)"
    )

    _, _, trimmed = roll(conn, keep_s=3600)

    assert trimmed == 1
    assert [r[0] for r in conn.execute("SELECT task_type FROM sk_record_t")] == ["young"]


def test_the_sql_buckets_are_the_python_buckets(conn: Conn) -> None:
    times = [0.0, 0.4, 1.0, 1.41, 1.42, 2.0, 3.0, 10.0, 999.0, 1e5, 3.6e6, 1e12]

    got = [
        r[0]
        for r in conn.execute("SELECT sk_record_bucket(t) FROM unnest(%s::float8[]) t", (times,))
    ]

    assert got == [bucket_of(t) for t in times]
    assert max(got) == BUCKETS - 1


def test_a_row_written_finished_counts_its_ending(conn: Conn) -> None:
    add_job(conn, 3, task_type="rec.copied")
    add_job(conn, 6, task_type="rec.copied")

    copied = last_hour(conn).total("rec.copied")

    assert (copied.posted, copied.succeeded, copied.failed_fatal) == (2, 1, 1)


def test_history_reads_the_record(db: Database, conn: Conn) -> None:
    post_and_run(db, ok=3, fatal=1, flaky=0)

    h = read.history(conn, minutes=60)

    assert len(h.minutes) == 60
    assert sum(h.series("posted")) == 4
    assert sum(h.series("processed")) == 3
    assert sum(h.series("failed")) == 1


def test_a_role_that_may_write_only_the_job_tables_still_records(dsn: str, conn: Conn) -> None:
    """A Stakhanovise.NET application's role: rights on its tables, none on ours."""
    with select_only_role(dsn, "sk_net") as role_dsn:
        role = conninfo.conninfo_to_dict(role_dsn)["user"]
        conn.execute(
            sql.SQL("GRANT INSERT, UPDATE ON sk_task_results_t TO {}").format(sql.Identifier(role))
        )
        conn.execute(
            sql.SQL("REVOKE ALL ON sk_record_fresh_t FROM {}").format(sql.Identifier(role))
        )
        with psycopg.connect(role_dsn, autocommit=True) as net:
            net.execute(
                "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
                " task_status, task_priority, task_error_count, task_last_error_is_recoverable,"
                " task_processing_time_milliseconds, task_posted_at_ts)"
                " VALUES (gen_random_uuid(), 'rec.net', 'net', '{}', 1, 0, 0, false, 0, now())"
            )
            net.execute(
                "UPDATE sk_task_results_t SET task_status = 2,"
                " task_last_processing_attempted_at_ts = now() WHERE task_type = 'rec.net'"
            )

    got = last_hour(conn).total("rec.net")
    assert (got.posted, got.started) == (1, 1)


def test_a_record_no_worker_rolls_says_so(conn: Conn) -> None:
    conn.execute(
        "INSERT INTO sk_record_fresh_t (minute, task_type, posted)"
        " VALUES (date_trunc('minute', now()) - interval '30 minutes', 'rec.idle', 1)"
    )

    rec = last_hour(conn)

    assert rec.total("rec.idle").posted == 1
    assert rec.unrolled_warning is not None and "no skconsole worker" in rec.unrolled_warning
    roll(conn)
    assert last_hour(conn).unrolled_warning is None


def test_a_keyed_re_post_of_a_finished_job_counts_as_a_post(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        p.post_many([Job("rec.ok", {"v": 1}, key="invoice-42")])
    run_until_idle(db, registry())
    with Producer(db) as p:
        p.post_many([Job("rec.ok", {"v": 2}, key="invoice-42")])

    assert last_hour(conn).total("rec.ok").posted == 2


@pytest.mark.parametrize("at", ["infinity", "-infinity", None])
def test_a_row_with_odd_times_is_written_and_counted_at_the_statements_minute(
    conn: Conn, at: str | None
) -> None:
    """The record's trigger never refuses a write: a time it cannot use is replaced by
    the statement's, and left out of the latency histograms."""
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_posted_at_ts, task_last_processing_attempted_at_ts,"
        " sk_due_at_ts) VALUES (gen_random_uuid(), 'rec.odd', 'test', '{}', 2, 0,"
        " coalesce(%s::timestamptz, 'infinity'), %s, %s)",
        (at, at, at),
    )
    conn.execute(
        "UPDATE sk_task_results_t SET task_status = 3, task_processing_finalized_at_ts = %s", (at,)
    )

    got = last_hour(conn).total("rec.odd")
    assert (got.posted, got.started, got.succeeded) == (1, 1, 1)
    assert got.wait.count == 0


def test_a_lone_post_records_itself_once(db: Database, conn: Conn) -> None:
    """post_new_job.sql writes its own row of the record; the triggers leave it alone."""
    with Producer(db) as p:
        for i in range(3):
            p.post("rec.lone", {"i": i})

    fresh = conn.execute(
        "SELECT count(*), sum(posted) FROM sk_record_fresh_t WHERE task_type = 'rec.lone'"
    ).fetchone()
    assert fresh == (3, 3)
    assert last_hour(conn).total("rec.lone").posted == 3


def test_a_statement_that_only_mentions_the_marker_in_a_value_is_still_recorded(
    conn: Conn,
) -> None:
    """The marker is the statement's own text: one a client sends without it, whatever
    its values say, is recorded by the trigger."""
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_posted_at_ts) VALUES (gen_random_uuid(),"
        " 'rec.marker', 'test', %s, 1, 0, now())",
        ("sk:records-itself",),
    )

    assert last_hour(conn).total("rec.marker").posted == 1


def test_only_statements_that_write_their_own_record_carry_the_marker() -> None:
    """A marked statement is skipped by the record's triggers, so it must write the
    record itself, and call no function that writes jobs (that write would be skipped
    too)."""
    from skconsole.db.sqlfiles import QUERIES

    marked = sorted(name for name, text in QUERIES.items() if "sk:records-itself" in text)

    assert marked == ["post_new_job"]
    assert "INSERT INTO sk_record_fresh_t" in QUERIES["post_new_job"]
