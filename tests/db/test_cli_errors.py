"""The command line: every mistake a person can make is one clear line on
stderr with a non-zero exit code, never a traceback; and the happy path of
``enqueue`` + ``status --json``.

Hostile values of every option (far beyond any sensible bound, not UTF-8,
nested too deeply) run through the real CLI; the Python API's own checks
(Job, Selection, parse_duration, bump) are tested directly, without it.
"""

from __future__ import annotations

import json
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from psycopg import conninfo

UNREACHABLE = "postgresql://postgres@127.0.0.1:1/x"


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """The process failed with exactly one line on stderr, no traceback; returns that line."""
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("error: "), line
    for fragment in fragments:
        assert fragment in line, line
    return line


# -- enqueue -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        pytest.param(
            ("enqueue", "emails.send", "--payload", "not json{"),
            ("payload is not valid JSON",),
            id="enqueue-a-payload-that-is-not-json",
        ),
        pytest.param(
            ("enqueue", "emails.send", "--priority", "-1"),
            ("priority", "-1"),
            id="enqueue-a-negative-priority",
        ),
        pytest.param(
            ("enqueue", "emails.send", "--delay", "abc"),
            ("invalid duration 'abc'",),
            id="enqueue-an-unparseable-delay",
        ),
        pytest.param(
            ("worker", "--tasks", "no_such_tasks_module_xyz", "--burst"),
            ("cannot import task module 'no_such_tasks_module_xyz'",),
            id="worker-a-task-module-that-does-not-exist",
        ),
    ],
)
def test_a_usage_mistake_fails_with_one_line_and_exit_code_2(
    run_cli: Any, args: tuple[str, ...], fragments: tuple[str, ...]
) -> None:
    proc = run_cli(*args)

    assert_one_line_error(proc, *fragments)
    assert proc.returncode == 2


def test_enqueue_with_run_at_queues_the_job_for_that_time(run_cli: Any, conn: Any) -> None:
    proc = run_cli("enqueue", "reports.build", "--run-at", "2031-05-06T07:08:09+02:00")

    assert proc.returncode == 0, proc.stderr
    row = conn.execute("SELECT task_locked_until_ts FROM sk_tasks_queue_t").fetchone()
    assert row[0] == datetime.fromisoformat("2031-05-06T05:08:09+00:00")


def test_a_refused_enqueue_posts_nothing(run_cli: Any, conn: Any) -> None:
    run_cli("enqueue", "emails.send", "--payload", "{oops")
    run_cli("enqueue", "emails.send", "--priority", "-1")
    run_cli("enqueue", "emails.send", "--delay", "soon")

    assert conn.execute("SELECT count(*) FROM sk_task_results_t").fetchone() == (0,)


# -- worker --------------------------------------------------------------------------
def test_worker_with_a_module_that_holds_no_registry_fails_with_one_line(run_cli: Any) -> None:
    proc = run_cli("worker", "--tasks", "skconsole.core.errors", "--burst")

    assert_one_line_error(proc, "must define exactly one TaskRegistry")


def test_worker_with_a_task_type_its_module_does_not_register_fails_with_one_line(
    run_cli: Any,
) -> None:
    proc = run_cli(
        "worker",
        "--tasks",
        "tests.support.tasks_retry",
        "--types",
        "retry.ok,no.such.type",
        "--burst",
    )

    assert_one_line_error(proc, "unknown task type(s) no.such.type")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def broken(:\n", "SyntaxError"),
        ("raise RuntimeError('TASKS_CONFIG is not set')\n", "TASKS_CONFIG is not set"),
    ],
    ids=["syntax-error", "raises-on-import"],
)
def test_worker_with_a_task_module_that_fails_to_import_fails_with_one_line(
    run_cli: Any, tmp_path: Path, source: str, expected: str
) -> None:
    (tmp_path / "unimportable_tasks.py").write_text(source)

    proc = run_cli(  # a process of its own: the module is found on its PYTHONPATH
        "worker",
        "--tasks",
        "unimportable_tasks",
        "--burst",
        env={"PYTHONPATH": str(tmp_path)},
        process=True,
    )

    assert_one_line_error(proc, "unimportable_tasks", expected)


# -- connecting -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad_dsn", ["host=127.0.0.1 port=notaport", "host=127.0.0.1 port", "postgresql://[::1"], ids=str
)
def test_a_malformed_dsn_fails_with_one_line(run_cli: Any, bad_dsn: str) -> None:
    proc = run_cli("--dsn", bad_dsn, "status", use_dsn=False)

    assert_one_line_error(proc, "cannot connect to PostgreSQL")
    assert proc.returncode == 3


def test_an_unreachable_server_fails_with_one_line_naming_it(run_cli: Any) -> None:
    # end to end: the interpreter's own exit code and streams, no traceback
    proc = run_cli("--dsn", UNREACHABLE, "status", use_dsn=False, process=True)

    assert_one_line_error(proc, "cannot connect to PostgreSQL at postgres@127.0.0.1:1/x")
    assert proc.returncode == 3


def test_the_password_of_an_unreachable_server_is_never_printed(run_cli: Any) -> None:
    proc = run_cli(
        "--dsn", "postgresql://postgres:s3cr3t-pw@127.0.0.1:1/x", "enqueue", "t.a", use_dsn=False
    )

    assert_one_line_error(proc, "127.0.0.1:1")
    assert "s3cr3t-pw" not in proc.stderr + proc.stdout


def test_a_worker_refused_by_the_server_fails_with_one_line(run_cli: Any, dsn: str) -> None:
    """A server that answers and refuses (here: no such database) is not waited for, as an
    unreachable one is (tests/faults/test_startup_unreachable.py): exit code 3 at once."""
    proc = run_cli(
        "--dsn",
        conninfo.make_conninfo(dsn, dbname="sk_no_such_database"),
        "worker",
        "--tasks",
        "tests.support.tasks_retry",
        "--burst",
        use_dsn=False,
        process=True,  # a worker is a process of its own
    )

    assert_one_line_error(proc, "cannot connect to PostgreSQL", "does not exist")
    assert proc.returncode == 3


# -- missing schema ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command",
    [
        ("status",),
        ("enqueue", "t.a"),
        ("worker", "--tasks", "tests.support.tasks_retry", "--burst"),
    ],
    ids=lambda c: c[0],
)
def test_no_setup_on_a_database_without_the_schema_fails_pointing_to_skconsole_setup(
    run_cli: Any, fresh_database: str, command: tuple[str, ...]
) -> None:
    proc = run_cli("--dsn", fresh_database, "--no-setup", *command, use_dsn=False)

    assert_one_line_error(proc, "`skconsole setup`")
    assert proc.returncode == 4


def test_setup_then_no_setup_works_on_a_new_database(run_cli: Any, fresh_database: str) -> None:
    setup = run_cli("--dsn", fresh_database, "setup", use_dsn=False)
    assert setup.returncode == 0, setup.stderr
    assert "created" in setup.stdout

    again = run_cli("--dsn", fresh_database, "setup", use_dsn=False)
    assert again.returncode == 0, again.stderr
    assert "already up to date" in again.stdout

    status = run_cli("--dsn", fresh_database, "--no-setup", "status", "--json", use_dsn=False)
    assert status.returncode == 0, status.stderr


# -- the happy path ----------------------------------------------------------------------------
def test_enqueue_then_status_json_reports_depth_statuses_and_workers(run_cli: Any) -> None:
    posted = run_cli("enqueue", "emails.send", "--payload", '{"to": "a@example.com"}')
    assert posted.returncode == 0, posted.stderr
    assert posted.stdout.strip().endswith(" posted")
    many = run_cli("enqueue", "emails.send", "--count", "2")
    assert many.returncode == 0, many.stderr
    assert "posted 2 job(s)" in many.stderr and len(many.stdout.split()) == 2
    later = run_cli("enqueue", "reports.build", "--delay", "1h", "--priority", "3")
    assert later.returncode == 0, later.stderr
    # a burst worker that runs none of these types registers, finds nothing and stops
    worker = run_cli("worker", "--tasks", "tests.support.tasks_retry", "--burst")
    assert worker.returncode == 0, worker.stdout + worker.stderr

    proc = run_cli("status", "--json")

    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) >= {"server_version", "depth", "statuses", "workers", "oldest_ready_s"}
    assert isinstance(doc["server_version"], str) and doc["server_version"]
    types = {t["task_type"]: t for t in doc["depth"]["types"]}
    # every known type is listed: the worker's registered ones too, with nothing waiting
    posted = {"emails.send", "reports.build"}
    assert posted <= set(types)
    assert all(types[t]["ready"] == types[t]["scheduled"] == 0 for t in set(types) - posted)
    for t in types.values():
        assert set(t) >= {
            "task_type",
            "ready",
            "scheduled",
            "in_flight",
            "oldest_ready_s",
            "paused",
        }
    assert (types["emails.send"]["ready"], types["emails.send"]["scheduled"]) == (3, 0)
    assert types["emails.send"]["oldest_ready_s"] >= 0
    assert (types["reports.build"]["ready"], types["reports.build"]["scheduled"]) == (0, 1)
    assert types["reports.build"]["oldest_ready_s"] is None
    totals = doc["depth"]["totals"]
    assert (totals["ready"], totals["scheduled"], totals["in_flight"]) == (3, 1, 0)
    assert (
        totals["oldest_ready_s"] == doc["oldest_ready_s"] == types["emails.send"]["oldest_ready_s"]
    )
    assert doc["statuses"]["Unprocessed"] == 4
    assert set(doc["statuses"]) >= {
        "Unknown",
        "Unprocessed",
        "Processing",
        "Processed",
        "Error",
        "Faulted",
        "Fatal",
        "Cancelled",
    }
    assert len(doc["workers"]) == 1
    w = doc["workers"][0]
    assert set(w) >= {
        "worker_id",
        "host",
        "pid",
        "concurrency",
        "state",
        "heartbeat_age_s",
        "in_flight",
    }
    assert (w["state"], w["in_flight"]) == ("stopped", 0)


def test_status_json_stays_valid_json_whatever_the_task_type_names(run_cli: Any) -> None:
    odd = ["émails.envoi", "a[red]b[/red]", "reports." + "x" * 230, 'quote"and\\slash']
    for name in odd:
        proc = run_cli("enqueue", name)
        assert proc.returncode == 0, proc.stderr

    proc = run_cli("status", "--json", env={"COLUMNS": "40"})

    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert sorted(t["task_type"] for t in doc["depth"]["types"]) == sorted(odd)


# -- hostile values: each is one line and exit code 2 ---------------------------------------
NOT_UTF8 = b"t.\xff\xfe".decode("utf-8", errors="surrogateescape")  # as Python gives argv
WORKER = ("worker", "--tasks", "tests.support.tasks_retry", "--burst")
HOSTILE_VALUES: list[tuple[tuple[str, ...], str]] = [
    (("requeue", "--older-than", "1000000d", "--dry-run"), "--older-than"),
    (("purge", "--older-than", "1000000d", "--dry-run"), "--older-than"),
    (("bump", "--by", "1", "--older-than", "1000000d", "--dry-run"), "--older-than"),
    (("cancel", "--older-than", "1000000d", "--dry-run"), "--older-than"),
    (("reap", "--older-than", "1000000d", "--dry-run"), "--older-than"),
    (("enqueue", NOT_UTF8), "TYPE is not valid UTF-8"),
    (("requeue", "--type", NOT_UTF8, "--dry-run"), "--type is not valid UTF-8"),
    (("requeue", "--group", NOT_UTF8, "--dry-run"), "--group is not valid UTF-8"),
    (("pause", NOT_UTF8, "--dry-run"), "--type is not valid UTF-8"),
    (("enqueue", "t.a", "--key", NOT_UTF8), "--key is not valid UTF-8"),
    (("enqueue", "t.a", "--source", NOT_UTF8), "--source is not valid UTF-8"),
    (("enqueue", "t.a", "--payload", f'"{NOT_UTF8}"'), "--payload is not valid UTF-8"),
    (("status", "failures", "--group", NOT_UTF8), "--group is not valid UTF-8"),
    (("audit", "--action", NOT_UTF8), "--action is not valid UTF-8"),
    (("enqueue", "t.a", "--payload", "[" * 50_000), "nested too deeply"),
    (("status", "metrics", "--sample", "99999999d"), "--sample must be between 0s and 1h"),
    (("enqueue", "t.a", "--delay", "99999999999d"), "--delay must be between 0s and 36500d"),
    (("enqueue", "t.a", "--run-at", "tomorrow"), "invalid time 'tomorrow' for --run-at"),
    (("enqueue", "t.a", "--run-at", "2027-01-01T06:00:00"), "--run-at needs a time zone"),
    (
        ("enqueue", "t.a", "--run-at", "2027-01-01T06:00Z", "--delay", "5s"),
        "either delay or run_at",
    ),
    (("enqueue", "t.a", "--count", "1000000000"), "--count must be between 1 and 100,000,000"),
    (("pause", "x" * 300, "--yes"), "longer than 250 characters"),
    (("resume", "--type", "x" * 300, "--yes"), "longer than 250 characters"),
    (("bump", "--type", "t.a", "--to", "99999999999", "--dry-run"), "--to must be between"),
    (("bump", "--type", "t.a", "--by", str(2**40), "--dry-run"), "--by must be between"),
    (("enqueue", "t.a", "--priority", str(2**40)), "priority must be between"),
    (("status", "inflight", "--limit", str(10**20)), "--limit must be between 1 and 100,000"),
    (("audit", "--limit", "0"), "--limit must be between 1 and 100,000"),
    (("status", "history", "--minutes", "99999"), "--minutes must be between 1 and 1,440"),
    ((*WORKER, "--concurrency", str(10**11)), "--concurrency must be between 1 and 10,000"),
    ((*WORKER, "--processes", str(10**14)), "--processes must be between 1 and 64"),
    ((*WORKER, "--batch-size", str(10**20)), "--batch-size must be between 1 and 10,000"),
    ((*WORKER, "--grace", "999d"), "--grace must be between 0s and 1d"),
    ((*WORKER, "--poll", "0"), "--poll must be between 10ms and 1h"),
    (("reap", "--unowned-after", "0s", "--dry-run"), "--unowned-after must be between 1s"),
    ((*WORKER, "--lease", "1s"), "--lease must be between 5s and 10m"),
    (("reap", "--unowned-after", "9" * 30 + "d", "--dry-run"), "--unowned-after must be"),
    (("bench", "--rate", "0"), "--rate must be above 0"),
    (("bench", "--rate", "nan"), "--rate must be above 0"),
    (("demo", "--rate", "inf"), "--rate must be between 0 and 1,000"),
    (("requeue", "--id", "\x1b]0;pwned\x07", "--dry-run"), "invalid job id '\\x1b]0;pwned\\x07'"),
]


def _case_id(case: tuple[tuple[str, ...], str]) -> str:
    args, _ = case
    shown = " ".join(a if a.isprintable() and len(a) < 20 else "<hostile>" for a in args)
    return shown.replace("tests.support.tasks_retry", "T")


@pytest.mark.parametrize("case", HOSTILE_VALUES, ids=[_case_id(c) for c in HOSTILE_VALUES])
def test_a_hostile_option_value_is_refused_with_one_line_and_exit_code_2(
    run_cli: Any, case: tuple[tuple[str, ...], str]
) -> None:
    args, fragment = case

    proc = run_cli(*args)

    assert_one_line_error(proc, fragment)
    assert proc.returncode == 2


def test_hostile_values_post_nothing(run_cli: Any, conn: Any) -> None:
    run_cli("enqueue", NOT_UTF8)
    run_cli("enqueue", "t.a", "--delay", "99999999999d")
    run_cli("enqueue", "t.a", "--payload", "[" * 50_000)

    assert conn.execute("SELECT count(*) FROM sk_task_results_t").fetchone() == (0,)


def test_enqueue_count_at_its_maximum_is_accepted_up_to_posting(run_cli: Any) -> None:
    """The bound is inclusive: 100,000,000 passes validation (refused here only by --key)."""
    proc = run_cli("enqueue", "t.a", "--count", "100000000", "--key", "k")

    assert_one_line_error(proc, "--key posts one job")
