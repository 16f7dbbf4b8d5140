"""Workers write absolute totals under an owner id of their own (as Stakhanovise.NET
does), so each worker run adds rows. When a long-gone worker is forgotten, the rows of
one that stopped cleanly are folded into the retired totals: the tables stop growing
with every restart and every reader's sums stay exactly what they were."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from skconsole import read
from skconsole.db.connect import Database
from skconsole.db.schema import RETIRED_METRICS_OWNER
from skconsole.db.sqlfiles import query
from skconsole.producer import Job, Producer
from skconsole.worker.upkeep import FORGET_AFTER_S
from tests.support.rows import one_row
from tests.support.tasks_retry import EngineThread
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
LONG_AGO = FORGET_AFTER_S + 3600
PARAMS = {"after_s": FORGET_AFTER_S, "retired": RETIRED_METRICS_OWNER}


def add_worker(conn: Conn, *, stopped: bool, gone_s: float = LONG_AGO) -> str:
    """A worker row gone ``gone_s`` ago and its rows: 5 processed, 2 runs of type t (10
    and 30 ms); returns its owner id, named as the engine names it."""
    worker_id = uuid.uuid4()
    process_id, pid = f"p-{worker_id.hex[:6]}", 4242
    conn.execute(
        "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid, "
        "worker_concurrency, worker_task_types, worker_heartbeat_at_ts, worker_stopped_at_ts) "
        "VALUES (%(id)s, %(p)s, 'h', %(pid)s, 1, '{t}', now() - %(s)s * interval '1 second', "
        "CASE WHEN %(stopped)s THEN now() - %(s)s * interval '1 second' END)",
        {"id": worker_id, "p": process_id, "pid": pid, "s": gone_s, "stopped": stopped},
    )
    owner = f"{process_id}:{pid}:{worker_id.hex[:8]}"
    conn.execute(
        "INSERT INTO sk_metrics_t (metric_id, metric_owner_process_id, metric_category, "
        "metric_value, metric_last_updated) VALUES ('worker@processed-payload-count', %s, "
        "'task-worker', 5, now() - interval '2 days')",
        (owner,),
    )
    conn.execute(
        "INSERT INTO sk_task_execution_time_stats_t (et_payload_type, et_owner_process_id, "
        "et_n_execution_cycles, et_last_execution_time, et_avg_execution_time, "
        "et_fastest_execution_time, et_longest_execution_time, et_total_execution_time) "
        "VALUES ('t', %s, 2, 30, 20, 10, 30, 40)",
        (owner,),
    )
    return owner


def forget(conn: Conn) -> tuple[int, int, int]:
    row = one_row(conn, query("forget_old_workers"), PARAMS)
    return row[0], row[1], row[2]


def owners(conn: Conn) -> set[str]:
    rows = conn.execute(
        "SELECT metric_owner_process_id FROM sk_metrics_t UNION "
        "SELECT et_owner_process_id FROM sk_task_execution_time_stats_t"
    ).fetchall()
    return {r[0] for r in rows}


def sums(conn: Conn, excluding: str = "") -> tuple[dict[str, int], list[tuple[Any, ...]]]:
    """What readers sum (read.metrics, read.execution_stats), over every owner but one."""
    metrics = conn.execute(
        "SELECT metric_id, sum(metric_value)::bigint FROM sk_metrics_t "
        "WHERE metric_owner_process_id <> %s GROUP BY metric_id",
        (excluding,),
    ).fetchall()
    times = conn.execute(
        "SELECT et_payload_type, sum(et_n_execution_cycles)::bigint, "
        "sum(et_total_execution_time)::bigint, min(et_fastest_execution_time), "
        "max(et_longest_execution_time) FROM sk_task_execution_time_stats_t "
        "WHERE et_owner_process_id <> %s GROUP BY 1 ORDER BY 1",
        (excluding,),
    ).fetchall()
    return dict(metrics), times


def test_a_cleanly_stopped_workers_rows_fold_into_the_retired_totals_with_sums_unchanged(
    conn: Conn,
) -> None:
    first, second = add_worker(conn, stopped=True), add_worker(conn, stopped=True)
    before = sums(conn)

    assert forget(conn) == (2, 2, 4)

    assert owners(conn) == {RETIRED_METRICS_OWNER}
    assert sums(conn) == before
    assert before[0]["worker@processed-payload-count"] == 10
    assert first != second


def test_the_retired_totals_add_up_over_several_rounds(conn: Conn) -> None:
    add_worker(conn, stopped=True)
    forget(conn)
    add_worker(conn, stopped=True)
    before = sums(conn)

    forget(conn)

    assert sums(conn) == before
    row = conn.execute(
        "SELECT et_n_execution_cycles, et_total_execution_time, et_avg_execution_time, "
        "et_fastest_execution_time, et_longest_execution_time "
        "FROM sk_task_execution_time_stats_t WHERE et_owner_process_id = %s",
        (RETIRED_METRICS_OWNER,),
    ).fetchone()
    assert row == (4, 80, 20, 10, 30)


def test_a_worker_that_died_keeps_its_rows_when_forgotten(conn: Conn) -> None:
    """It may be alive behind a partition and write its absolute totals again: folding
    them would count them twice."""
    dead = add_worker(conn, stopped=False)

    assert forget(conn) == (1, 0, 0)

    assert owners(conn) == {dead}


def test_a_recently_stopped_workers_rows_stay_its_own(conn: Conn) -> None:
    recent = add_worker(conn, stopped=True, gone_s=60)

    assert forget(conn) == (0, 0, 0)

    assert owners(conn) == {recent}


def test_nothing_is_forgotten_while_another_worker_holds_the_maintenance_lock(
    conn: Conn, dsn: str
) -> None:
    owner = add_worker(conn, stopped=True)
    with psycopg.connect(dsn, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(sk_maintenance_lock_class(), 2)")

        assert forget(conn) == (0, 0, 0)
        assert owners(conn) == {owner}

        other.execute("SELECT pg_advisory_unlock(sk_maintenance_lock_class(), 2)")
    assert forget(conn) == (1, 1, 2)


def test_the_retired_totals_are_not_counted_as_a_process(conn: Conn) -> None:
    add_worker(conn, stopped=True)
    forget(conn)
    add_worker(conn, stopped=False)

    (metric,) = read.metrics(conn).metrics

    assert (metric.value, metric.processes) == (10, 1)


def test_real_workers_that_stopped_are_folded_by_the_next_workers_housekeeping(
    conn: Conn, dsn: str, db: Database
) -> None:
    runs, stopped = 2, []
    for run in range(1, runs + 1):
        with Producer(db) as producer:
            producer.post_many([Job("retry.ok", {"n": n}) for n in range(5)])
        with EngineThread(dsn) as worker:
            wait_until(lambda run=run: _processed(conn) == 5 * run)
        stopped.append(worker.metrics_owner)
    conn.execute(
        "UPDATE sk_workers_t SET worker_stopped_at_ts = now() - %s * interval '1 second'",
        (LONG_AGO,),
    )
    assert set(stopped) <= owners(conn)
    before = sums(conn)

    with EngineThread(dsn, reap=True) as housekeeper:
        wait_until(lambda: RETIRED_METRICS_OWNER in owners(conn), timeout=20)
    own = housekeeper.metrics_owner  # it writes its own rows (poller counts) meanwhile

    assert owners(conn) - {own} == {RETIRED_METRICS_OWNER}
    assert sums(conn, excluding=own) == before
    assert before[0]["worker@processed-payload-count"] == 5 * runs


def _processed(conn: Conn) -> int:
    row = conn.execute("SELECT count(*) FROM sk_task_results_t WHERE task_status = 3").fetchone()
    return int(row[0]) if row else 0
