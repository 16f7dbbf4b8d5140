"""``skconsole job ID --as-test --tasks MODULE``: a production failure as a pytest module.

The job fails in a real worker run; the module the command prints, run by pytest in a
process of its own against a scratch queue, fails with that same error; pointed at the
fixed handler, it passes. Without ``--tasks`` (exit 2) or with a bad id (exit 1), one line.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import psycopg
import pytest

from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.producer import Producer
from skconsole.testing import run_until_idle
from tests.conftest import ROOT
from tests.support import tasks_as_test

pytest_plugins = ["pytester"]

Conn = psycopg.Connection[Any]
BUGGY = "tests.support.tasks_as_test:tasks"
FIXED = "tests.support.tasks_as_test:fixed"
#: hostile text the payload carries (and the error quotes): quotes of every kind, a
#: backslash, lines, a terminal escape, non-ASCII
NAME = 'O"Brien \'\'\' """ back\\slash\nsecond line \x1b[31m é 😀'
PAYLOAD = {"customer": {"name": NAME, "id": 42}, "lines": [1.5, True, None]}


def failed_in_production(db: Database) -> uuid.UUID:
    """The job, failed (2 attempts) in a run of the buggy handlers on the real engine."""
    with Producer(db) as producer:
        task_id = producer.post(tasks_as_test.TYPE, PAYLOAD, priority=7)
    job = run_until_idle(db, tasks_as_test.tasks, backoff=0).job(task_id)
    assert job.status is JobStatus.FAULTED
    return task_id


def as_test(run_cli: Any, task_id: uuid.UUID, tasks: str = BUGGY) -> str:
    proc = run_cli("job", str(task_id)[:13], "--as-test", "--tasks", tasks)
    assert proc.returncode == 0, proc.stderr
    return str(proc.stdout)


def run_pytest(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, server_dsn: str, source: str
) -> pytest.RunResult:
    """The generated module, run by pytest in a process of its own, as a developer would."""
    monkeypatch.setenv("SKCONSOLE_TEST_DSN", server_dsn)  # its scratch queues on our server
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # tests.support.tasks_as_test
    pytester.makepyfile(test_job=source)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", timeout=300)


def test_the_generated_test_fails_with_todays_error_while_the_handler_is_buggy(
    db: Database,
    run_cli: Any,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    server_dsn: str,
) -> None:
    task_id = failed_in_production(db)

    result = run_pytest(pytester, monkeypatch, server_dsn, as_test(run_cli, task_id))

    result.assert_outcomes(failed=1)
    today = "tests.support.tasks_as_test.RenderError: cannot render"
    result.stdout.fnmatch_lines(
        [
            f"*AssertionError: the job ended Faulted: {today} *",
            f"*(in production: {today} *",
        ]
    )
    assert "\x1b" not in "\n".join(result.outlines)  # the error's escape, made printable


def test_the_generated_test_passes_once_the_handler_is_fixed(
    db: Database,
    run_cli: Any,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    server_dsn: str,
) -> None:
    source = as_test(run_cli, failed_in_production(db))
    fixed = source.replace(f'TASKS = "{BUGGY}"', f'TASKS = "{FIXED}"')
    assert fixed != source

    result = run_pytest(pytester, monkeypatch, server_dsn, fixed)

    result.assert_outcomes(passed=1)


def test_the_generated_test_posts_the_jobs_exact_payload_type_and_priority(
    db: Database, conn: Conn, run_cli: Any
) -> None:
    task_id = failed_in_production(db)
    [(stored,)] = conn.execute(
        "SELECT task_payload FROM sk_task_results_t WHERE task_id = %s", (task_id,)
    ).fetchall()

    names: dict[str, Any] = {}
    exec(compile(as_test(run_cli, task_id), "test_job.py", "exec"), names)

    assert names["PAYLOAD_JSON"] == stored and json.loads(names["PAYLOAD_JSON"]) == PAYLOAD
    assert (names["TASK_TYPE"], names["PRIORITY"], names["TASKS"]) == (
        tasks_as_test.TYPE,
        7,
        BUGGY,
    )


def test_as_test_without_tasks_says_why_in_one_line(db: Database, run_cli: Any) -> None:
    task_id = failed_in_production(db)

    proc = run_cli("job", str(task_id), "--as-test")

    assert proc.returncode == 2 and proc.stdout == ""  # a usage error, before any read
    assert proc.stderr.strip().splitlines() == [
        "error: --as-test needs --tasks MODULE: the module `skconsole worker --tasks` runs,"
        " which holds the handler (the database does not record it)"
    ]


def test_as_test_of_an_unknown_job_fails_in_one_line(db: Database, run_cli: Any) -> None:
    proc = run_cli("job", "00ff00ff", "--as-test", "--tasks", BUGGY)

    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == ["error: no job id starts with '00ff00ff'"]
