"""Failure signatures: the SQL twin of the Python reference agrees with it (the reference
itself: tests/unit/test_signature_samples.py)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skconsole import read
from skconsole.core.signature import (
    LINE_LIMIT,
    error_signature,
    final_exception_line,
    signature_view,
)
from skconsole.core.stored_error import JSON_LIMIT, StoredError, parse_json
from tests.support.rows import one_row
from tests.unit.test_signature import AROUND_BOUNDS
from tests.unit.test_signature_samples import DOTNET, PIECES, PY_TRACEBACK, SAMPLES
from tests.unit.test_stored_error import JSON_SAMPLES

Conn = psycopg.Connection[Any]
MB = 1024 * 1024


# -- the SQL twin -------------------------------------------------------------------------
def test_sql_signature_agrees_with_python_on_samples(conn: Conn) -> None:
    for text in SAMPLES:
        row = conn.execute("SELECT sk_error_signature(%s)", (text,)).fetchone()
        assert row == (error_signature(text),), text


# PostgreSQL text holds neither NUL nor lone surrogates: those never reach the column
_SQL_TEXT = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_characters="\x00")),
    st.lists(PIECES.filter(lambda p: p not in ("\x00", "\udcff")), max_size=80).map("".join),
)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=_SQL_TEXT)
def test_sql_signature_agrees_with_python_on_generated_texts(conn: Conn, text: str) -> None:
    row = conn.execute("SELECT sk_error_signature(%s)", (text,)).fetchone()
    assert row == (error_signature(text),)


def test_writing_an_error_fills_the_signature_column(conn: Conn) -> None:
    task_id = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_status, task_priority, "
        "task_posted_at_ts, task_last_error) VALUES (%s, 't', 'tests', 6, 0, now(), %s)",
        (task_id, PY_TRACEBACK),
    )
    got = conn.execute(
        "SELECT sk_error_signature FROM sk_task_results_t WHERE task_id = %s", (task_id,)
    ).fetchone()
    assert got == (error_signature(PY_TRACEBACK),)

    conn.execute(
        "UPDATE sk_task_results_t SET task_last_error = %s WHERE task_id = %s", (DOTNET, task_id)
    )
    got = conn.execute(
        "SELECT sk_error_signature FROM sk_task_results_t WHERE task_id = %s", (task_id,)
    ).fetchone()
    assert got == (error_signature(DOTNET),)


# -- QueuedTaskError JSON: the same texts read as the shape, the same naming line ----------
def test_sql_reads_the_same_texts_as_queued_task_error_json(conn: Conn) -> None:
    for text in JSON_SAMPLES:
        row = conn.execute("SELECT sk_error_json(%s) IS NOT NULL", (text,)).fetchone()
        assert row == (parse_json(text) is not None,), text
        _sql_agrees(conn, text)


_JSON_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=60)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kind=st.one_of(st.none(), _JSON_TEXT, st.sampled_from(["System.ArgumentException", "E"])),
    message=st.one_of(
        st.none(),
        _JSON_TEXT,
        st.lists(PIECES.filter(lambda p: p not in ("\x00", "\udcff")), max_size=12).map("".join),
    ),
    stack=st.one_of(st.none(), _JSON_TEXT),
    ascii_only=st.booleans(),
)
def test_sql_agrees_with_python_on_generated_json_errors(
    conn: Conn, kind: str | None, message: str | None, stack: str | None, ascii_only: bool
) -> None:
    doc = {"Type": kind, "Message": message, "StackTrace": stack}
    text = json.dumps(doc, ensure_ascii=ascii_only)
    _sql_agrees(conn, text)


def test_a_json_error_over_the_limit_is_read_as_text_alike(conn: Conn) -> None:
    text = json.dumps({"Type": "E", "Message": "x " * (JSON_LIMIT // 2)})
    row = conn.execute("SELECT sk_error_json(%s) IS NULL", (text,)).fetchone()
    assert row == (True,)
    _sql_agrees(conn, text)


def test_every_error_written_in_sql_is_queued_task_error_json(conn: Conn) -> None:
    row = one_row(conn, "SELECT sk_task_error('skconsole.HungJob', 'worker gone: \"x\"\n', NULL)")
    assert parse_json(row[0]) == StoredError("skconsole.HungJob", 'worker gone: "x"\n', None)


# -- long and huge texts: the bounded definition is the same in SQL ------------------------
def _sql_agrees(conn: Conn, text: str) -> None:
    """SQL's view, naming line and signature of ``text`` are Python's."""
    row = conn.execute(
        "SELECT sk_error_signature_view(%(t)s) = %(view)s, sk_error_final_line(%(t)s),"
        " sk_error_signature(%(t)s)",
        {"t": text, "view": signature_view(text)},
    ).fetchone()
    assert row == (True, final_exception_line(text), error_signature(text))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=AROUND_BOUNDS)
def test_sql_agrees_with_python_near_the_bounds(conn: Conn, text: str) -> None:
    _sql_agrees(conn, text)


HUGE_FRAME = '  File "/srv/app/tasks.py", line 41, in handle\n    return client.call(payload)\n'


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            PY_TRACEBACK.replace("  File", HUGE_FRAME * (100_000 // len(HUGE_FRAME)) + "  File", 1),
            id="100 KB traceback",
        ),
        pytest.param(
            "ValueError: cannot store payload " + "{'id': 12, 'at': '/srv/x'} " * (MB // 27),
            id="1 MB line",
        ),
        pytest.param(
            DOTNET.replace("\n", "\n" + (DOTNET.split("\n")[1] + "\n") * 14_000, 1), id="1 MB .NET"
        ),
        pytest.param(
            "InvalidPayload: rows rejected\n"
            + "row 12 at /srv/part-7.csv rejected: 'bad'\n" * (40 * MB // 42),
            id="40 MB message",
        ),
        pytest.param("E: " + "0123456789abcdef " * (40 * MB // 17), id="40 MB line"),
    ],
)
def test_sql_agrees_with_python_on_huge_texts(conn: Conn, text: str) -> None:
    conn.execute("SET statement_timeout = '5s'")
    _sql_agrees(conn, text)


def test_a_40_mb_error_is_written_well_within_the_statement_timeout(conn: Conn) -> None:
    """Writing it used to run the signature's regexes over all 40 MB (20 s and
    more); now the trigger reads a bounded part of it."""
    record = "{'id': 12345, 'path': '/srv/x/y.csv'} "
    huge_line = "InvalidPayload: cannot store " + record * (40 * MB // len(record) + 1)
    huge_traceback = PY_TRACEBACK.replace(
        "  File", HUGE_FRAME * (40 * MB // len(HUGE_FRAME)) + "  File", 1
    )
    task_id = uuid.uuid4()
    conn.execute("SET statement_timeout = '5s'")
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_status, task_priority, "
        "task_posted_at_ts, task_last_error) VALUES (%s, 't', 'tests', 6, 0, now(), %s)",
        (task_id, huge_line),
    )
    for text in (huge_traceback, huge_line + " again"):
        assert len(text) > 40 * MB
        conn.execute(
            "UPDATE sk_task_results_t SET task_last_error = %s WHERE task_id = %s", (text, task_id)
        )
        got = conn.execute(
            "SELECT sk_error_signature, length(task_last_error) FROM sk_task_results_t "
            "WHERE task_id = %s",
            (task_id,),
        ).fetchone()
        assert got == (error_signature(text), len(text))
    assert error_signature(huge_traceback) == error_signature(PY_TRACEBACK)
    # the failure groups' sample line is read through the same bounded view
    line = conn.execute(
        "SELECT sk_error_final_line(task_last_error) FROM sk_task_results_t WHERE task_id = %s",
        (task_id,),
    ).fetchone()
    assert line is not None and line[0] == final_exception_line(huge_line + " again")
    assert (
        final_exception_line(line[0]).startswith("InvalidPayload: cannot store {")
        and len(line[0]) <= LINE_LIMIT
    )


def test_the_failure_groups_read_runs_under_a_parallel_plan(conn: Conn) -> None:
    # PostgreSQL 15 refuses a subtransaction (sk_error_json's EXCEPTION block, entered
    # for an error stored as JSON) while a parallel plan runs: seen on 5M results,
    # where the planner chose one by itself
    conn.execute(
        "INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload,"
        " task_status, task_priority, task_last_error, task_error_count, task_posted_at_ts,"
        " task_processing_finalized_at_ts, task_last_error_is_recoverable,"
        " task_processing_time_milliseconds)"
        " SELECT gen_random_uuid(), 't.a', 'test', '{}', 5, 0,"
        " sk_task_error('app.Timeout', 'upstream timed out after ' || i || ' ms'), 1, now(),"
        " now(), false, 0"
        " FROM generate_series(1, 2000) AS i"
    )
    conn.execute("ANALYZE sk_task_results_t")
    for setting in (
        "parallel_setup_cost = 0",
        "parallel_tuple_cost = 0",
        "min_parallel_table_scan_size = 0",
        "min_parallel_index_scan_size = 0",
        "max_parallel_workers_per_gather = 2",
        # renamed in PostgreSQL 16
        "force_parallel_mode = on"
        if conn.info.server_version < 160000
        else "debug_parallel_query = on",
    ):
        conn.execute(f"SET {setting}")
    try:
        (group,) = read.failure_groups(conn, limit=10)
        jobs = read.failure_jobs(conn, group.signature, limit=5)
    finally:
        conn.execute("RESET ALL")
    assert group.count == 2000 and (group.sample_error or "").startswith("app.Timeout")
    assert len(jobs.jobs) == 5
