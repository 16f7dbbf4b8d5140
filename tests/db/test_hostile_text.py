"""Hostile text from upstream systems never reaches the terminal raw.

Task types, errors, worker hosts, metric ids and audit users hold ESC
sequences (SGR colours, an OSC window title), an 8-bit CSI and a bidi
override. Every ``status`` view, the dry-run preview, the audit listing and
the error lines of the real CLI show them as visible escapes (``\\x1b``), and
the ``--json`` forms stay valid JSON that gives the exact text back.
"""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from skconsole import read

from .test_ops import add_job

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]

SGR = "\x1b[31m"  # colours whatever follows red
OSC = "\x1b]0;pwned\x07"  # sets the terminal's window title
CSI8 = "\x9b31m"  # the same as SGR, as one 8-bit C1 character
RLO = "\u202e"  # shows the rest of the line right to left
HOSTILE = f"{SGR}red{OSC}{CSI8}c1{RLO}exe.txt\x7f\x08"

TASK_TYPE = f"t.{SGR}evil{RLO}"
OTHER_TYPE = f"t.{CSI8}c1{OSC}"
ERROR = (
    "Traceback (most recent call last):\n"
    '  File "worker.py", line 3, in run\n'
    f"RuntimeError: boom {HOSTILE}"
)
WORKER_HOST = f"host-{OSC}{RLO}"
METRIC = f"worker@{SGR}count"
AUDIT_USER = f"eve{SGR}"

#: Anything a terminal would act on: C0 but the newline, DEL, C1, bidi controls.
RAW_CONTROL = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


PIPELINE = f"check{SGR}out{RLO}"
CRON = f"0 3 * * *{OSC}"
PROGRESS = f"rows{SGR}copied{RLO}"


def seed_hostile_text(conn: Conn) -> None:
    """Waiting, running, failed jobs; a worker, metrics, execution times, an
    audit row and schedules: every text field that is shown holds control
    characters. The two failed jobs are stage 2 of a pipeline, each after the other."""
    add_job(conn, 1, task_type=TASK_TYPE)
    faulted = add_job(conn, 5, task_type=TASK_TYPE, error=ERROR)
    fatal = add_job(conn, 6, task_type=OTHER_TYPE, error=ERROR)
    for job, parent in ((faulted, fatal), (fatal, faulted)):
        conn.execute(
            "UPDATE sk_task_results_t SET sk_parent_task_id = %s, sk_pipeline = %s, sk_stage = 2 "
            "WHERE task_id = %s",
            (parent, PIPELINE, job),
        )
    conn.execute(
        "INSERT INTO sk_schedules_t (task_type, sch_cron, sch_every_seconds, sch_timezone, "
        "sch_last_tick_ts, sch_last_task_id, sch_last_posted_ts) VALUES "
        "(%s, %s, NULL, %s, now(), %s, now()), (%s, NULL, 60, 'UTC', now(), NULL, NULL)",
        (TASK_TYPE, CRON, f"Europe/{RLO}Paris", faulted, OTHER_TYPE),
    )
    conn.execute(
        "UPDATE sk_task_results_t SET task_payload = %s, task_source = %s WHERE task_status IN (5, 6)",
        (f'{{"note": "{HOSTILE}"}}', f"src{SGR}"),
    )
    worker = uuid.uuid4()
    conn.execute(
        "INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid, "
        "worker_concurrency, worker_task_types, worker_heartbeat_at_ts) "
        "VALUES (%s, %s, %s, 42, 4, %s, now() - interval '1 hour')",
        (worker, f"proc{SGR}", WORKER_HOST, [TASK_TYPE]),
    )
    running = add_job(conn, 2, task_type=OTHER_TYPE, owner=worker)
    conn.execute("UPDATE sk_task_results_t SET sk_claim_id = 77 WHERE task_id = %s", (running,))
    conn.execute(
        "INSERT INTO sk_task_progress_t VALUES (%s, 77, 0.5, %s, now())",
        (running, PROGRESS),
    )
    conn.execute(
        "INSERT INTO sk_task_execution_time_stats_t VALUES (%s, %s, 10, 30, 20, 5, 90, 200)",
        (TASK_TYPE, f"proc{OSC}"),
    )
    conn.execute(
        "INSERT INTO sk_metrics_t (metric_id, metric_owner_process_id, metric_category, "
        "metric_value) VALUES (%s, %s, %s, 7)",
        (METRIC, f"proc{CSI8}", f"task-{RLO}worker"),
    )
    conn.execute(
        "INSERT INTO sk_audit_t (audit_user, audit_host, audit_action, audit_selection, "
        "audit_count, audit_details) VALUES (%s, %s, 'requeue', %s, 3, '{}')",
        (AUDIT_USER, WORKER_HOST, json.dumps({"task_type": TASK_TYPE})),
    )


def assert_nothing_raw(proc: subprocess.CompletedProcess[str]) -> None:
    for name, text in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        raw = RAW_CONTROL.search(text)
        assert raw is None, f"raw {raw.group()!r} in {name}: {text!r}"


def strings_in(doc: Any) -> Iterator[str]:
    """Every string in a JSON document, keys included."""
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for key, value in doc.items():
            yield key
            yield from strings_in(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from strings_in(value)


def failure_group_id(conn: Conn) -> str:
    (group,) = [g for g in read.failure_groups(conn) if g.count == 2]
    return group.id


VIEWS: list[tuple[str, ...]] = [
    ("status",),
    ("status", "depth"),
    ("status", "inflight"),
    ("status", "failures"),
    ("status", "failures", "--group", "{group}"),
    ("status", "stats"),
    ("status", "metrics", "--sample", "0"),
    ("status", "workers"),
    ("status", "schedules"),
    ("requeue", "--dry-run", "--type", TASK_TYPE),
    ("audit",),
]


def _args(view: tuple[str, ...], conn: Conn) -> list[str]:
    return [failure_group_id(conn) if a == "{group}" else a for a in view]


def _name(view: tuple[str, ...]) -> str:
    return " ".join("TYPE" if a == TASK_TYPE else a for a in view)


@pytest.mark.parametrize("view", VIEWS, ids=_name)
def test_a_table_shows_control_characters_as_visible_escapes(
    run_cli: CLI, conn: Conn, view: tuple[str, ...]
) -> None:
    seed_hostile_text(conn)

    proc = run_cli(*_args(view, conn), env={"COLUMNS": "250"})

    assert proc.returncode == 0, proc.stderr
    assert_nothing_raw(proc)
    assert "\\x1b" in proc.stdout or "\\x9b" in proc.stdout or "\\u202e" in proc.stdout


@pytest.mark.parametrize("view", VIEWS, ids=_name)
def test_json_output_escapes_control_characters_and_gives_the_exact_text_back(
    run_cli: CLI, conn: Conn, view: tuple[str, ...]
) -> None:
    seed_hostile_text(conn)

    proc = run_cli(*_args(view, conn), "--json")

    assert proc.returncode == 0, proc.stderr
    assert_nothing_raw(proc)
    text = "\n".join(strings_in(json.loads(proc.stdout)))
    assert any(s in text for s in (TASK_TYPE, OTHER_TYPE, WORKER_HOST, METRIC, AUDIT_USER))


def test_the_dry_run_preview_names_the_type_with_its_escapes_visible(
    run_cli: CLI, conn: Conn
) -> None:
    seed_hostile_text(conn)

    proc = run_cli("requeue", "--dry-run", "--type", TASK_TYPE, env={"COLUMNS": "250"})

    assert proc.returncode == 0, proc.stderr
    assert "would requeue 1 job(s) (type t.\\x1b[31mevil\\u202e)" in proc.stdout


def test_why_shows_a_hostile_type_with_its_escapes_visible(run_cli: CLI, conn: Conn) -> None:
    job = add_job(conn, 1, task_type=TASK_TYPE, ready=False)
    conn.execute(
        "INSERT INTO sk_task_types_t (task_type, tt_paused) VALUES (%s, true)", (TASK_TYPE,)
    )

    proc = run_cli("why", str(job), env={"COLUMNS": "250"})
    as_json = run_cli("why", str(job), "--json")

    assert proc.returncode == 0, proc.stderr
    assert_nothing_raw(proc)
    assert_nothing_raw(as_json)
    assert "its type t.\\x1b[31mevil\\u202e is paused" in proc.stdout
    assert json.loads(as_json.stdout)["job"]["type"] == TASK_TYPE


def test_an_enqueue_result_line_shows_the_type_with_its_escapes_visible(run_cli: CLI) -> None:
    proc = run_cli("enqueue", TASK_TYPE, "--count", "2")

    assert proc.returncode == 0, proc.stderr
    assert_nothing_raw(proc)
    assert "posted 2 job(s) of type t.\\x1b[31mevil\\u202e" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("status", HOSTILE),
        ("requeue", "--dry-run", "--id", HOSTILE),
        (
            "worker",
            "--tasks",
            "tests.support.tasks_retry",
            "--types",
            f"{HOSTILE}\nline 2",
            "--burst",
        ),
    ],
    ids=["unknown-view", "bad-id", "unknown-task-type"],
)
def test_an_error_line_echoing_the_input_shows_it_escaped_on_one_line(
    run_cli: CLI, args: tuple[str, ...]
) -> None:
    proc = run_cli(*args)

    assert proc.returncode == 2
    assert_nothing_raw(proc)
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("error: ")
