"""What a failure group's jobs share (status failures --group G --common), on a real server."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import psycopg

from skconsole.core.signature import error_signature
from skconsole.read.factors import common_factors

Conn = psycopg.Connection[Any]
ERROR = "app.Timeout: upstream timed out"


def put(
    conn: Conn,
    payload: dict[str, Any] | str,
    *,
    failed: bool,
    host: str | None = None,
    version: str | None = None,
) -> None:
    worker = None
    task_id = uuid.uuid4()
    if host is not None:
        worker = uuid.uuid4()
        conn.execute(
            "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,"
            " worker_concurrency, worker_task_types) VALUES (%s, 'p', %s, 1, 1, '{}')",
            (worker, host),
        )
    conn.execute(
        """
        INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,
            task_priority, task_last_error, sk_error_signature, task_posted_at_ts,
            task_processing_finalized_at_ts, sk_owner_worker_id)
        VALUES (%s, 'invoices.send', 'tests', %s, %s, 5, %s, %s, now(), now(), %s)
        """,
        (
            task_id,
            payload if isinstance(payload, str) else json.dumps(payload),
            5 if failed else 3,
            ERROR if failed else None,
            error_signature(ERROR) if failed else None,
            worker,
        ),
    )
    if version is not None:  # its last attempt, as the engine records it
        conn.execute(
            "INSERT INTO sk_attempts_t (task_id, attempt, worker_host, app_version, outcome,"
            " status) VALUES (%s, 1, 'w-9', %s, %s, %s)",
            (task_id, version, "failed" if failed else "succeeded", 5 if failed else 3),
        )


def dataset(conn: Conn) -> str:
    """10 failures: 9 in eu, 6 with tier gold (nested), all on host w-3; 20 others: 2 in eu."""
    for i in range(10):
        put(
            conn,
            {
                "region": "eu" if i < 9 else "us",
                "customer": {"tier": "gold" if i < 6 else "std"},
                "n": i,
            },
            failed=True,
            host="w-3" if i < 10 else None,
        )
    for i in range(20):
        put(
            conn,
            {"region": "eu" if i < 2 else "us", "customer": {"tier": "gold" if i < 8 else "std"}},
            failed=False,
            host="w-1" if i % 2 else "w-3",
        )
    put(conn, "not json at all", failed=True)
    return error_signature(ERROR)


def test_factors_rank_the_over_represented_values_strongest_first(conn: Conn) -> None:
    found = common_factors(conn, dataset(conn))
    assert found.failing_sampled == 11 and found.others_sampled == 20
    ranked = [(f.field, f.value) for f in found.factors]
    # eu: 9/11 vs 2/20; host w-3: 10/11 vs 10/20; gold: 6/11 vs 8/20 (too weak)
    assert ranked == [("payload.region", "eu"), ("host", "w-3")]


def test_common_json_has_the_issue_s_shape(conn: Conn, run_cli: Callable[..., Any]) -> None:
    signature = dataset(conn)
    proc = run_cli("status", "failures", "--group", signature, "--common", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    first = doc["factors"][0]
    assert set(first) == {"field", "value", "share_failing", "share_others"}
    assert first == {
        "field": "payload.region",
        "value": "eu",
        "share_failing": round(9 / 11, 4),
        "share_others": 0.1,
    }


def test_common_table_offers_the_where_of_a_payload_factor(
    conn: Conn, run_cli: Callable[..., Any]
) -> None:
    signature = dataset(conn)
    proc = run_cli("status", "failures", "--group", signature, "--common", "--wide")
    assert proc.returncode == 0, proc.stderr
    assert "--where payload.region=eu" in proc.stdout


def test_common_needs_failures_and_a_group(run_cli: Callable[..., Any]) -> None:
    proc = run_cli("status", "failures", "--common")
    assert proc.returncode == 2 and "--common goes with" in proc.stderr


def test_a_group_with_nothing_in_common_says_so(conn: Conn) -> None:
    for i in range(4):
        put(conn, {"n": i}, failed=True)
    found = common_factors(conn, error_signature(ERROR))
    assert found.factors == () and found.failing_sampled == 4


def test_hostile_values_are_shown_escaped(conn: Conn, run_cli: Callable[..., Any]) -> None:
    for _ in range(4):
        put(conn, {"region": "\x1b]0;pwned\x07eu"}, failed=True)
    put(conn, {"region": "us"}, failed=False)
    proc = run_cli("status", "failures", "--group", error_signature(ERROR), "--common", "--wide")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout and "pwned" in proc.stdout


def test_the_code_version_of_the_last_attempt_is_a_factor(conn: Conn) -> None:
    """First seen in 1.8.3: the failures ran on it, the other jobs mostly on 1.8.2."""
    for i in range(6):
        put(conn, {"n": i}, failed=True, version="1.8.3")
    for i in range(10):
        put(conn, {"n": i}, failed=False, version="1.8.3" if i == 0 else "1.8.2")
    found = common_factors(conn, error_signature(ERROR))
    assert [(f.field, f.value) for f in found.factors][:1] == [("app_version", "1.8.3")]
    assert found.factors[0].share_failing == 1.0 and found.factors[0].share_others == 0.1
