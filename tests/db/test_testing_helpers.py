"""skconsole.testing, the helpers users test their handlers and producers with:
run_until_idle and its report, the posted-job assertions, scratch queues, and
the pytest plugin (run end to end in a pytest subprocess through pytester)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skconsole import FatalTaskError, JobContext, Producer, Snooze, TaskRegistry
from skconsole.core.status import JobStatus
from skconsole.db.connect import Database
from skconsole.testing import (
    IdleTimeout,
    ScratchServer,
    arun_until_idle,
    assert_not_posted,
    assert_posted,
    make_due,
    payload_matches,
    posted,
    run_until_idle,
)

pytest_plugins = ["pytester"]


def post(db: Database, task_type: str, payload: Any = None, **kw: Any) -> Any:
    with Producer(db) as p:
        return p.post(task_type, payload, **kw)


# -- run_until_idle: outcomes ----------------------------------------------------------
def test_a_succeeding_handler_is_reported_processed_with_its_payload(db: Database) -> None:
    tasks = TaskRegistry()
    seen: list[Any] = []
    tasks.task("mail.send")(seen.append)
    task_id = post(db, "mail.send", {"to": "a@example.com"})

    report = run_until_idle(db, tasks)

    job = report.only()
    assert (job.task_id, job.task_type, job.payload) == (
        task_id,
        "mail.send",
        {"to": "a@example.com"},
    )
    assert (job.status, job.attempts, job.error_count, job.error) == (
        JobStatus.PROCESSED,
        1,
        0,
        None,
    )
    assert report.succeeded == [job] and report.failed == [] and report.pending == ()
    assert seen == [{"to": "a@example.com"}]


def test_a_whole_pipeline_runs_and_each_stage_names_its_parent(db: Database) -> None:
    tasks = TaskRegistry()
    tasks.task("order.validate", then="order.charge")(lambda p: {**p, "valid": True})
    tasks.task("order.charge")(lambda p, ctx: ctx.post("mail.receipt", {"order": p["order"]}))
    tasks.task("mail.receipt")(lambda p: None)
    root = post(db, "order.validate", {"order": 7})

    report = run_until_idle(db, tasks)

    charge, receipt = report.only("order.charge"), report.only("mail.receipt")
    assert (charge.payload, charge.parent_id) == ({"order": 7, "valid": True}, root)
    assert (receipt.payload, receipt.parent_id) == ({"order": 7}, charge.task_id)
    assert len(report.succeeded) == 3


def test_a_snoozed_job_is_reported_with_its_snoozes_and_no_error(db: Database) -> None:
    tasks = TaskRegistry()
    calls: list[int] = []

    def snooze_once(payload: Any, ctx: JobContext) -> None:
        calls.append(ctx.attempt)
        if len(calls) == 1:
            raise Snooze(0)

    tasks.task("report.build")(snooze_once)
    post(db, "report.build")

    job = run_until_idle(db, tasks).only()

    assert (job.status, job.snooze_count, job.error_count) == (JobStatus.PROCESSED, 1, 0)


def test_a_raising_handler_with_one_attempt_is_reported_faulted_with_its_error(
    db: Database,
) -> None:
    tasks = TaskRegistry()

    @tasks.task("mail.send", max_attempts=1)
    def send(payload: Any) -> None:
        raise ValueError(f"no such mailbox {payload['to']}")

    post(db, "mail.send", {"to": "x@example.com"})

    job = run_until_idle(db, tasks).only("mail.send")

    assert (job.status, job.attempts, job.error_count) == (JobStatus.FAULTED, 1, 1)
    assert job.error_summary == "ValueError: no such mailbox x@example.com"
    assert job.error is not None and "Traceback" in job.error and "in send" in job.error


def test_a_fatal_task_error_is_reported_fatal_after_one_attempt(db: Database) -> None:
    tasks = TaskRegistry()

    @tasks.task("mail.send", max_attempts=5)
    async def send(payload: Any) -> None:
        raise FatalTaskError("address is invalid")

    post(db, "mail.send", {"to": "nobody"})

    job = run_until_idle(db, tasks).only()

    assert (job.status, job.attempts, job.error_summary) == (
        JobStatus.FATAL,
        1,
        "skconsole.core.errors.FatalTaskError: address is invalid",
    )


def test_a_failure_to_retry_later_is_reported_error_and_listed_as_waiting(db: Database) -> None:
    tasks = TaskRegistry()

    @tasks.task("mail.send", max_attempts=3, backoff=60)
    def send(payload: Any) -> None:
        raise ConnectionError("smtp down")

    task_id = post(db, "mail.send", {"to": "a"})

    started = time.monotonic()
    report = run_until_idle(db, tasks)

    assert time.monotonic() - started < 10  # the back-off was not waited for
    job = report.only()
    assert (job.status, job.will_retry, job.attempts) == (JobStatus.ERROR, True, 1)
    assert job.due_in is not None and 50 < job.due_in <= 60
    assert report.retrying == [job]
    assert [j.task_id for j in report.pending] == [task_id]


def test_backoff_zero_runs_every_retry_until_the_job_is_faulted(db: Database) -> None:
    tasks = TaskRegistry()
    attempts: list[int] = []

    @tasks.task("mail.send", max_attempts=3, backoff=60)
    def send(payload: Any, ctx: JobContext) -> None:
        attempts.append(ctx.attempt)
        raise ConnectionError("smtp down")

    post(db, "mail.send", {"to": "a"})

    job = run_until_idle(db, tasks, backoff=0).only()

    assert (job.status, job.attempts, job.error_count) == (JobStatus.FAULTED, 3, 3)
    assert attempts == [1, 2, 3]
    task = tasks.get("mail.send")
    assert task is not None and task.options.backoff == 60  # the caller's registry is unchanged


def test_a_handler_that_fails_twice_then_succeeds_ends_processed_on_its_third_attempt(
    db: Database,
) -> None:
    tasks = TaskRegistry()

    @tasks.task("flaky", backoff=60)
    async def flaky(payload: Any, ctx: JobContext) -> None:
        if ctx.attempt < 3:
            raise TimeoutError("upstream slow")

    post(db, "flaky")

    job = run_until_idle(db, tasks, backoff=0).only()

    assert (job.status, job.attempts, job.error_count) == (JobStatus.PROCESSED, 3, 2)


def test_handlers_raising_base_exceptions_neither_crash_nor_hang_the_helper(
    db: Database,
) -> None:
    tasks = TaskRegistry()

    @tasks.task("exits", max_attempts=1)
    def exits(payload: Any) -> None:
        raise SystemExit(3)

    @tasks.task("interrupts", max_attempts=1)
    async def interrupts(payload: Any) -> None:
        raise KeyboardInterrupt

    post(db, "exits")
    post(db, "interrupts")

    report = run_until_idle(db, tasks, timeout=20)

    assert {(j.task_type, j.status) for j in report} == {
        ("exits", JobStatus.FAULTED),
        ("interrupts", JobStatus.FAULTED),
    }
    assert report.only("exits").error_summary == "SystemExit: 3"


# -- run_until_idle: what runs, and when it stops ------------------------------------
def test_types_limits_what_runs_and_other_types_stay_queued(db: Database) -> None:
    tasks = TaskRegistry()
    ran: list[str] = []
    tasks.task("a")(lambda payload: ran.append("a"))
    tasks.task("b")(lambda payload: ran.append("b"))
    post(db, "a")
    b_id = post(db, "b")

    report = run_until_idle(db, tasks, types=["a"])

    assert ran == ["a"] and [j.task_type for j in report] == ["a"]
    assert report.types == ("a",) and report.pending == ()
    assert [j.task_id for j in posted(db, "b", status=JobStatus.UNPROCESSED)] == [b_id]


def test_a_delayed_job_is_left_waiting_and_listed_as_pending(db: Database) -> None:
    tasks = TaskRegistry()
    tasks.task("later")(lambda payload: None)
    task_id = post(db, "later", {"n": 1}, delay=60)

    report = run_until_idle(db, tasks)

    assert len(report) == 0
    (waiting,) = report.pending
    assert (waiting.task_id, waiting.status, waiting.attempts) == (
        task_id,
        JobStatus.UNPROCESSED,
        0,
    )
    assert waiting.due_in is not None and 50 < waiting.due_in <= 60


def test_a_horizon_waits_for_a_job_due_within_it(db: Database) -> None:
    tasks = TaskRegistry()
    tasks.task("soon")(lambda payload: None)
    post(db, "soon", delay=0.3)

    report = run_until_idle(db, tasks, horizon=5)

    assert report.only().status is JobStatus.PROCESSED and report.pending == ()


def test_make_due_lets_the_next_run_take_a_delayed_job(db: Database) -> None:
    tasks = TaskRegistry()
    tasks.task("later")(lambda payload: None)
    post(db, "later", delay=3600)
    assert len(run_until_idle(db, tasks)) == 0

    assert make_due(db, "later") == 1

    assert run_until_idle(db, tasks).only().status is JobStatus.PROCESSED


def test_the_timeout_raises_an_error_naming_the_running_and_the_due_jobs(db: Database) -> None:
    tasks = TaskRegistry()

    @tasks.task("stuck", timeout=None)
    async def stuck(payload: Any) -> None:
        await asyncio.sleep(600)

    tasks.task("next")(lambda payload: None)
    stuck_id = post(db, "stuck", {"order": 41}, priority=0)
    post(db, "next", {"order": 42}, priority=1)

    started = time.monotonic()
    with pytest.raises(IdleTimeout) as caught:
        run_until_idle(db, tasks, timeout=1.0)

    assert time.monotonic() - started < 15
    message = str(caught.value)
    assert "did not go idle within 1s" in message
    assert "still running (1)" in message and 'stuck  {"order": 41}' in message
    assert "still due to run (1)" in message and 'next  {"order": 42}' in message
    assert [j.task_id for j in caught.value.running] == [stuck_id]
    # the stopped job went back to the queue, to run again later
    assert [j.task_id for j in posted(db, "stuck", status=JobStatus.UNPROCESSED)] == [stuck_id]


def test_a_sync_handler_that_ignores_the_stop_request_does_not_hang_the_timeout(
    db: Database,
) -> None:
    tasks = TaskRegistry()
    release = threading.Event()
    tasks.task("blocks", timeout=None)(lambda payload: release.wait(30))
    post(db, "blocks")

    started = time.monotonic()
    try:
        with pytest.raises(IdleTimeout, match="still running"):
            run_until_idle(db, tasks, timeout=0.5)
        assert time.monotonic() - started < 15
    finally:
        release.set()


async def test_arun_until_idle_runs_async_handlers_on_the_callers_event_loop(
    db: Database,
) -> None:
    tasks = TaskRegistry()
    loops: list[asyncio.AbstractEventLoop] = []

    @tasks.task("async.job")
    async def job(payload: Any) -> None:
        loops.append(asyncio.get_running_loop())

    post(db, "async.job")

    report = await arun_until_idle(db, tasks)

    assert report.only().status is JobStatus.PROCESSED
    assert loops == [asyncio.get_running_loop()]


async def test_run_until_idle_works_when_called_inside_a_running_event_loop(
    db: Database,
) -> None:
    tasks = TaskRegistry()
    tasks.task("job")(lambda payload: None)
    post(db, "job")

    assert run_until_idle(db, tasks).only().status is JobStatus.PROCESSED


# -- the report ------------------------------------------------------------------------
def test_the_report_reads_as_one_line_a_job_with_status_payload_and_error(
    db: Database,
) -> None:
    tasks = TaskRegistry()
    tasks.task("ok")(lambda payload: None)

    @tasks.task("bad", max_attempts=1)
    def bad(payload: Any) -> None:
        raise KeyError("account")

    post(db, "ok", {"n": 1})
    post(db, "bad", {"n": 2})
    post(db, "ok", {"n": 3}, delay=60)

    report = run_until_idle(db, tasks)

    text = str(report)
    lines = text.splitlines()
    assert lines[0].startswith("run of bad, ok: 2 job(s) ran in ")
    assert lines[0].endswith("(1 Processed, 1 Faulted); 1 waiting")
    assert any(line.startswith('  3 Processed  ok  {"n": 1}  attempts=1  id=') for line in lines)
    assert any(
        line.startswith('  5 Faulted  bad  {"n": 2}  attempts=1  errors=1  ')
        and "error: KeyError: 'account'" in line
        for line in lines
    )
    assert "still waiting:" in lines
    assert any('ok  {"n": 3}' in line and "due in" in line for line in lines)
    assert repr(report).startswith("<RunReport 2 job(s) ran in ")
    assert report.counts() == {JobStatus.PROCESSED: 1, JobStatus.FAULTED: 1}
    assert [j.payload for j in report.by_type("ok")] == [{"n": 1}]


def test_only_raises_listing_the_jobs_when_not_exactly_one_ran(db: Database) -> None:
    tasks = TaskRegistry()
    tasks.task("ok")(lambda payload: None)
    post(db, "ok", {"n": 1})
    post(db, "ok", {"n": 2})
    report = run_until_idle(db, tasks)

    with pytest.raises(AssertionError) as caught:
        report.only()

    message = str(caught.value)
    assert message.startswith("expected exactly one job to have run, 2 did")
    assert '{"n": 1}' in message and '{"n": 2}' in message


def test_assert_all_succeeded_raises_with_the_handlers_traceback(db: Database) -> None:
    tasks = TaskRegistry()

    @tasks.task("bad", max_attempts=1)
    def parse_amount(payload: Any) -> None:
        raise ValueError("cannot parse amount 'x'")

    post(db, "bad", {"amount": "x"})
    report = run_until_idle(db, tasks)

    with pytest.raises(AssertionError) as caught:
        report.assert_all_succeeded()

    message = str(caught.value)
    assert message.startswith("1 of 1 job(s) did not succeed:")
    assert "Traceback" in message and "in parse_amount" in message
    assert "ValueError: cannot parse amount 'x'" in message


# -- posted, assert_posted, assert_not_posted -----------------------------------------------
def test_posted_matches_payloads_by_subset_nested_dicts_included(db: Database) -> None:
    a = post(db, "mail", {"to": "a", "meta": {"lang": "en", "n": 1}, "tags": ["x"]})
    post(db, "mail", {"to": "b", "meta": {"lang": "fr"}})
    post(db, "other", {"to": "a"})

    def ids(payload: Any) -> list[Any]:
        return [j.task_id for j in posted(db, "mail", payload)]

    assert ids({"meta": {"lang": "en"}}) == [a]
    assert ids({"to": "a", "meta": {}}) == [a]
    assert ids({"tags": ["x"]}) == [a]
    assert ids({"meta": {"lang": "de"}}) == []
    assert ids({"to": "a", "missing": None}) == []
    assert len(posted(db, "mail")) == 2 and len(posted(db)) == 3


def test_payload_matching_never_takes_true_for_1() -> None:
    assert payload_matches({"flag": 1, "n": 2.0}, {"n": 2})
    assert not payload_matches({"flag": 1}, {"flag": True})
    assert not payload_matches({"flag": False}, {"flag": 0})
    assert not payload_matches({"items": [1, 2]}, {"items": [1]})
    assert payload_matches({"items": [{"id": 1, "qty": 2}]}, {"items": [{"id": 1}]})


def test_posted_filters_by_status(db: Database) -> None:
    tasks = TaskRegistry()
    tasks.task("ran")(lambda payload: None)
    done = post(db, "ran", {"n": 1})
    run_until_idle(db, tasks)
    waiting = post(db, "ran", {"n": 2})

    assert [j.task_id for j in posted(db, "ran", status=JobStatus.PROCESSED)] == [done]
    assert [j.task_id for j in posted(db, "ran", status=1)] == [waiting]
    assert len(posted(db, "ran", status=[JobStatus.PROCESSED, JobStatus.UNPROCESSED])) == 2


def test_assert_posted_returns_the_matching_jobs_and_checks_the_count(db: Database) -> None:
    first = post(db, "mail", {"to": "a", "n": 1})
    second = post(db, "mail", {"to": "a", "n": 2})

    assert [j.task_id for j in assert_posted(db, "mail", {"to": "a"}, count=2)] == [
        first,
        second,
    ]
    with pytest.raises(AssertionError, match=r"expected 1 job\(s\) of type 'mail' .* found 2"):
        assert_posted(db, "mail", {"to": "a"}, count=1)


def test_assert_posted_failure_lists_what_was_posted_of_that_type(db: Database) -> None:
    with Producer(db) as p:
        for n in range(12):
            p.post("mail", {"to": f"user{n}@example.com"})

    with pytest.raises(AssertionError) as caught:
        assert_posted(db, "mail", {"to": "nobody@example.com"})

    lines = str(caught.value).splitlines()
    assert lines[0] == (
        "expected a job of type 'mail' with a payload holding "
        '{"to": "nobody@example.com"} to be posted, found 0'
    )
    assert lines[1] == "posted of type 'mail' (12):"
    assert lines[2].startswith('  1 Unprocessed  mail  {"to": "user')
    assert len(lines) == 2 + 10 + 1 and lines[-1] == "  ... and 2 more"


def test_assert_posted_failure_names_the_types_posted_when_none_is_of_that_type(
    db: Database,
) -> None:
    post(db, "mail.send", {"to": "a"})
    post(db, "mail.send", {"to": "b"})
    post(db, "report.build")

    with pytest.raises(AssertionError) as caught:
        assert_posted(db, "mail.sned")

    assert str(caught.value).splitlines()[1] == (
        "no job of type 'mail.sned' was posted; types posted: mail.send (2), report.build (1)"
    )


def test_assert_not_posted_failure_lists_the_matching_jobs(db: Database) -> None:
    task_id = post(db, "refund", {"order": 7, "amount": 10})
    post(db, "refund", {"order": 8, "amount": 10})

    assert_not_posted(db, "refund", {"order": 9})
    with pytest.raises(AssertionError) as caught:
        assert_not_posted(db, "refund", {"order": 7}, status=JobStatus.UNPROCESSED)

    lines = str(caught.value).splitlines()
    assert lines[0] == (
        "expected no job of type 'refund' with a payload holding {\"order\": 7} "
        "in status 1 Unprocessed to be posted, found 1:"
    )
    assert len(lines) == 2 and f"id={task_id}" in lines[1]


# -- scratch queues and the pytest plugin -------------------------------------------------
def _databases(server_dsn: str, prefix: str) -> set[str]:
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT datname FROM pg_database WHERE starts_with(datname, %s)", (prefix,)
        ).fetchall()
    return {r[0] for r in rows}


def test_a_scratch_queue_is_an_empty_database_of_its_own_dropped_on_close(
    server_dsn: str, db: Database
) -> None:
    post(db, "in.the.main.database")
    with ScratchServer(server_dsn) as server:
        with server.new_queue() as queue:
            assert queue.posted() == []
            queue.post("mail", {"to": "a"})
            queue.assert_posted("mail", {"to": "a"}, count=1)
            template = server.template
            assert {queue.name, template} <= _databases(server_dsn, "skconsole_test_")
        assert queue.name not in _databases(server_dsn, "skconsole_test_")
    assert template not in _databases(server_dsn, "skconsole_test_")
    assert len(posted(db)) == 1


def test_the_plugin_is_registered_as_a_pytest11_entry_point(
    request: pytest.FixtureRequest,
) -> None:
    (entry,) = [e for e in entry_points(group="pytest11") if e.name == "skconsole"]
    assert entry.value == "skconsole.testing.pytest_plugin"
    assert request.config.pluginmanager.get_plugin("skconsole") is not None


USER_TESTS = """
import json, os

from skconsole import TaskRegistry
from skconsole.core.status import JobStatus

tasks = TaskRegistry()
sent = []


@tasks.task("emails.send")
def send(payload):
    sent.append(payload["to"])


def record(queue):
    with open(os.environ["SK_RECORD"], "a") as f:
        f.write(f"{queue.name} {queue.server.template}\\n")


def test_post_run_assert(skconsole_queue):
    record(skconsole_queue)
    skconsole_queue.post("emails.send", {"to": "a@example.com", "lang": "en"})
    report = skconsole_queue.run(tasks)
    assert report.only("emails.send").status is JobStatus.PROCESSED
    assert sent == ["a@example.com"]
    skconsole_queue.assert_posted("emails.send", {"to": "a@example.com"}, count=1)
    skconsole_queue.assert_not_posted("emails.send", {"to": "b@example.com"})


def test_each_test_gets_an_empty_queue(skconsole_queue):
    record(skconsole_queue)
    assert skconsole_queue.posted() == []


def test_a_failed_assertion_says_what_was_posted(skconsole_queue):
    record(skconsole_queue)
    skconsole_queue.post("emails.send", {"to": "c@example.com"})
    skconsole_queue.assert_posted("emails.send", {"to": "d@example.com"})
"""


def test_the_skconsole_queue_fixture_runs_a_user_test_file_end_to_end(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, server_dsn: str, tmp_path: Path
) -> None:
    record = tmp_path / "databases.txt"
    monkeypatch.setenv("SKCONSOLE_TEST_DSN", server_dsn)  # the inner session uses our server
    monkeypatch.setenv("SK_RECORD", str(record))
    pytester.makepyfile(test_user=USER_TESTS)

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=300)

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*expected a job of type 'emails.send' with a payload holding "
            '{"to": "d@example.com"} to be posted, found 0',
            "*posted of type 'emails.send' (1):",
            '*1 Unprocessed  emails.send  {"to": "c@example.com"}*',
        ]
    )
    made = [line.split() for line in record.read_text().splitlines()]
    queues, templates = {q for q, _ in made}, {t for _, t in made}
    assert len(made) == 3 and len(queues) == 3 and len(templates) == 1  # a database each
    assert not (queues | templates) & _databases(server_dsn, "skconsole_test_")  # all dropped


def test_the_plugin_starts_its_own_embedded_server_and_deletes_it_at_the_end(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    record = tmp_path / "server.json"
    monkeypatch.delenv("SKCONSOLE_TEST_DSN", raising=False)
    monkeypatch.setenv("SK_RECORD", str(record))
    pytester.makepyfile(
        test_user="""
import json, os

def test_uses_the_queue(skconsole_server, skconsole_queue):
    skconsole_queue.post("job", {"n": 1})
    assert len(skconsole_queue.posted("job", {"n": 1})) == 1
    with open(os.environ["SK_RECORD"], "w") as f:
        json.dump({"dsn": skconsole_server.dsn, "data_dir": str(skconsole_server.data_dir)}, f)
"""
    )

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=300)

    result.assert_outcomes(passed=1)
    server = json.loads(record.read_text())
    assert not Path(server["data_dir"]).parent.exists()  # the temporary directory is gone
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(server["dsn"], connect_timeout=3).close()


def test_a_scratch_server_uses_the_server_skconsole_test_dsn_names(
    monkeypatch: pytest.MonkeyPatch, server_dsn: str
) -> None:
    monkeypatch.setenv("SKCONSOLE_TEST_DSN", server_dsn)
    with ScratchServer() as server:
        assert server.dsn == server_dsn and not server.embedded and server.data_dir is None
