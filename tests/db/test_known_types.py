"""Every known task type has a depth row, jobs waiting or not (issue 24, point 5).

A type whose jobs all failed, or one nothing is queued for, must still be on
screen, so an operator can select it (pause, limit, requeue, retention).
"""

from __future__ import annotations

from typing import Any

import psycopg

from skconsole import read
from skconsole.db.sqlfiles import load_sql

from .test_flow_and_check import add_ready, add_results

Conn = psycopg.Connection[Any]


def _rows(conn: Conn) -> dict[str, tuple[int, int, int, bool]]:
    return {
        t.task_type: (t.ready, t.scheduled, t.in_flight, t.idle) for t in read.depth(conn).types
    }


def test_depth_lists_a_type_whose_jobs_all_failed_with_nothing_waiting(conn: Conn) -> None:
    add_results(conn, "pdf.render", 72, status=6, posted_ago_s=600.0, finalized_ago_s=300.0)
    add_ready(conn, "busy", 2)

    assert _rows(conn) == {"busy": (2, 0, 0, False), "pdf.render": (0, 0, 0, True)}


def test_depth_lists_types_known_only_by_their_processed_or_cancelled_results(
    conn: Conn,
) -> None:
    add_results(conn, "done", 3, status=3, posted_ago_s=600.0, finalized_ago_s=300.0)
    add_results(conn, "called.off", 1, status=7, posted_ago_s=600.0, finalized_ago_s=300.0)

    assert sorted(_rows(conn)) == ["called.off", "done"]


def test_depth_lists_idle_types_known_by_their_settings_schedule_or_retention(
    conn: Conn,
) -> None:
    # registered by a worker (its timeout), paused, a schedule, a retention policy of its own
    conn.execute(
        "INSERT INTO sk_task_types_t (task_type, tt_timeout_seconds) VALUES ('run.by.w', 30)"
    )
    conn.execute("INSERT INTO sk_task_types_t (task_type, tt_paused) VALUES ('stopped', true)")
    conn.execute(
        "INSERT INTO sk_schedules_t (task_type, sch_every_seconds) VALUES ('reports.hourly', 3600)"
    )
    conn.execute(
        "INSERT INTO sk_retention_t (ret_task_type, ret_older_than_seconds, ret_set_by)"
        " VALUES ('kept', 86400, 'test'), ('', 86400, 'test')"
    )

    depth = read.depth(conn)

    assert [t.task_type for t in depth.types] == ["kept", "reports.hourly", "run.by.w", "stopped"]
    assert all(t.idle for t in depth.types)
    assert [t.task_type for t in depth.types if t.paused] == ["stopped"]


def test_the_known_types_are_read_by_index_probes_not_a_scan_of_the_results(
    conn: Conn,
) -> None:
    """50,000 results of 3 types: a loose index scan, one probe per type."""
    for task_type in ("a", "b", "c"):
        add_results(
            conn, task_type, 50_000 // 3, status=3, posted_ago_s=900.0, finalized_ago_s=600.0
        )
    conn.execute("ANALYZE sk_task_results_t")

    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + load_sql("queries/result_types")))

    assert "idx_sk_task_results_t_task_type" in plan, plan
    assert "Seq Scan on sk_task_results_t" not in plan, plan
    assert {"a", "b", "c"} <= {t.task_type for t in read.depth(conn).types}
