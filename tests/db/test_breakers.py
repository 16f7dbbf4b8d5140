"""Circuit breakers keyed on a failure signature: an open breaker holds back only the
jobs that would hit the failure, half-open lets its canaries through, and it closes
or reopens on what they do (sql/schema/150_skconsole_breakers.sql). Ticks are run by
hand here (``tick``); the workers' upkeep runs them every 2 s."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from skconsole import ops, read
from skconsole.core.actor import Actor
from skconsole.core.breakers import PARK_SCAN
from skconsole.core.payload_terms import PayloadTerm
from skconsole.core.states import BreakerState
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.ops import BreakerCommand, BreakerParams, Selection
from skconsole.ops.audit_line import what
from skconsole.producer import Job, Producer
from skconsole.testing.run import run_until_idle
from skconsole.worker.registry import TaskOptions, TaskRegistry

Conn = psycopg.Connection[Any]
CLI = Callable[..., subprocess.CompletedProcess[str]]

TYPE = "br.call"
ACME = PayloadTerm(("partner",), "acme")
ACTOR = Actor("oncall", "laptop")
#: the partners whose calls time out now
FAILING: set[str] = set()


def registry() -> TaskRegistry:
    tasks = TaskRegistry(TaskOptions(max_attempts=5, timeout=10.0))

    def call(payload: dict[str, str]) -> None:
        if payload["partner"] in FAILING:
            raise TimeoutError("partner timed out")

    tasks.task(TYPE)(call)
    return tasks


@pytest.fixture(autouse=True)
def _healthy_partners() -> None:
    FAILING.clear()


def post(db: Database, partner: str, n: int) -> None:
    with Producer(db) as p:
        p.post_many([Job(TYPE, {"partner": partner, "i": i}) for i in range(n)])


def run(db: Database) -> None:
    # retries wait a minute: they stay queued, so the run ends
    run_until_idle(db, registry(), backoff=60.0)


def statuses(conn: Conn, partner: str) -> dict[int, int]:
    rows = conn.execute(
        "SELECT task_status, count(*) FROM sk_task_results_t"
        " WHERE task_type = %s AND task_payload::jsonb ->> 'partner' = %s GROUP BY 1",
        (TYPE, partner),
    ).fetchall()
    return {s: n for s, n in rows}


def attempts(conn: Conn, partner: str) -> int:
    """Attempts the jobs of ``partner`` made (each failure counted, and each success)."""
    row = conn.execute(
        "SELECT coalesce(sum(task_error_count + (task_status = 3)::int), 0) FROM"
        " sk_task_results_t WHERE task_type = %s AND task_payload::jsonb ->> 'partner' = %s",
        (TYPE, partner),
    ).fetchone()
    assert row is not None
    return int(row[0])


def signature(conn: Conn) -> str:
    row = conn.execute(
        "SELECT DISTINCT sk_error_signature FROM sk_task_results_t WHERE task_type = %s"
        " AND sk_error_signature IS NOT NULL",
        (TYPE,),
    ).fetchone()
    assert row is not None
    return str(row[0])


def act(conn: Conn, params: BreakerParams) -> ops.ActionResult:
    sel = Selection(task_type=TYPE) if params.breaker_id is None else Selection()
    return ops.BREAKER.execute(conn, sel, params, actor=ACTOR)


def tick(conn: Conn) -> list[tuple[Any, ...]]:
    return conn.execute("SELECT * FROM sk_breaker_tick(%s)", (PARK_SCAN,)).fetchall()


def the_breaker(conn: Conn) -> read.Breaker:
    (b,) = read.breakers(conn)
    return b


def fail_acme_once(db: Database, conn: Conn) -> str:
    """One failed attempt of one acme job: the signature the breaker watches."""
    FAILING.add("acme")
    post(db, "acme", 1)
    run(db)
    return signature(conn)


def test_an_open_breaker_holds_back_the_jobs_sharing_its_term_while_the_rest_run(
    db: Database, conn: Conn
) -> None:
    sig = fail_acme_once(db, conn)
    act(conn, BreakerParams(BreakerCommand.OPEN, signature=sig, term=ACME))
    post(db, "acme", 20)
    post(db, "zeta", 20)

    run(db)

    assert statuses(conn, "zeta") == {3: 20}
    assert statuses(conn, "acme") == {1: 20, 4: 1}
    assert attempts(conn, "acme") == 1  # only the attempt before the breaker opened


def test_a_job_posted_after_the_last_tick_is_held_back_by_the_claim_itself(
    db: Database, conn: Conn
) -> None:
    sig = fail_acme_once(db, conn)
    act(conn, BreakerParams(BreakerCommand.OPEN, signature=sig, term=ACME))
    post(db, "acme", 5)  # no tick has parked these
    post(db, "zeta", 2)

    claimed = conn.execute(
        query("claim"),
        {"worker_id": uuid.uuid4(), "types": [TYPE], "limit": 100, "hold_s": 0.0},
    ).fetchall()

    assert len(claimed) == 2
    assert all(json.loads(row[3])["partner"] == "zeta" for row in claimed)


def test_retries_of_the_signature_are_held_back_whatever_their_payload(
    db: Database, conn: Conn
) -> None:
    FAILING.update({"acme", "zeta"})
    post(db, "zeta", 3)
    run(db)
    act(conn, BreakerParams(BreakerCommand.OPEN, signature=signature(conn), term=ACME))
    conn.execute("UPDATE sk_tasks_queue_t SET task_locked_until_ts = now()")  # retries due
    FAILING.clear()

    run(db)

    assert statuses(conn, "zeta") == {4: 3}  # held: their last failure is the signature


def test_a_breaker_on_no_term_holds_back_the_whole_type(db: Database, conn: Conn) -> None:
    sig = fail_acme_once(db, conn)
    act(conn, BreakerParams(BreakerCommand.OPEN, signature=sig))
    post(db, "zeta", 4)

    run(db)

    assert statuses(conn, "zeta") == {1: 4}


def test_an_open_breaker_parks_its_jobs_and_closing_gives_their_due_times_back(
    db: Database, conn: Conn
) -> None:
    sig = fail_acme_once(db, conn)
    post(db, "acme", 10)
    due = dict(conn.execute("SELECT task_id, task_locked_until_ts FROM sk_tasks_queue_t"))

    opened = act(conn, BreakerParams(BreakerCommand.OPEN, signature=sig, term=ACME))
    assert opened.details["moved"] == 11
    assert the_breaker(conn).held == 11
    closed = act(conn, BreakerParams(BreakerCommand.CLOSE, breaker_id=the_breaker(conn).breaker_id))

    assert closed.details["moved"] == 11
    assert dict(conn.execute("SELECT task_id, task_locked_until_ts FROM sk_tasks_queue_t")) == due
    FAILING.clear()
    run(db)
    assert statuses(conn, "acme") == {3: 10, 4: 1}  # the retry still waits its back-off


def test_an_armed_breaker_opens_once_its_threshold_is_reached(db: Database, conn: Conn) -> None:
    sig = fail_acme_once(db, conn)
    act(
        conn,
        BreakerParams(BreakerCommand.ADD, signature=sig, term=ACME, threshold=5, window_s=60.0),
    )
    post(db, "acme", 3)
    run(db)
    tick(conn)
    assert the_breaker(conn).state is BreakerState.CLOSED  # 3 since it was made: below 5

    post(db, "acme", 2)
    run(db)
    tick(conn)

    b = the_breaker(conn)
    assert b.state is BreakerState.OPEN
    assert b.reason == "5 failures in 60 s (threshold 5)"
    assert b.held == 6  # every acme job waiting, the one failed before it was made too


def test_half_open_releases_exactly_its_canaries_and_they_close_it_by_succeeding(
    db: Database, conn: Conn
) -> None:
    sig = fail_acme_once(db, conn)
    act(
        conn,
        BreakerParams(BreakerCommand.OPEN, signature=sig, term=ACME, cool_down_s=0.0, canaries=3),
    )
    post(db, "acme", 20)
    tick(conn)  # parks the new ones
    tick(conn)  # cool-down over: half-open
    assert the_breaker(conn).state is BreakerState.HALF_OPEN
    FAILING.clear()

    run(db)

    assert attempts(conn, "acme") == 1 + 3  # the first failure, then the 3 canaries
    assert the_breaker(conn).canaries_ended == 3
    tick(conn)
    b = the_breaker(conn)
    assert (b.state, b.reason) == (BreakerState.CLOSED, "3 canaries ended without the signature")
    conn.execute("UPDATE sk_tasks_queue_t SET task_locked_until_ts = now()")  # the old retry
    run(db)
    assert statuses(conn, "acme") == {3: 21}


def test_a_canary_failing_with_the_signature_reopens_the_breaker(db: Database, conn: Conn) -> None:
    sig = fail_acme_once(db, conn)
    act(
        conn,
        BreakerParams(BreakerCommand.OPEN, signature=sig, term=ACME, cool_down_s=0.0, canaries=2),
    )
    post(db, "acme", 10)
    tick(conn)
    tick(conn)

    run(db)  # acme still times out: both canaries fail

    assert attempts(conn, "acme") == 1 + 2
    tick(conn)
    b = the_breaker(conn)
    assert b.state is BreakerState.OPEN
    assert b.opened_count == 2
    assert b.reason is not None and "failed with the signature again" in b.reason
    assert b.held == 11  # every acme job, the canaries' retries too


def test_half_open_with_nothing_held_closes(db: Database, conn: Conn) -> None:
    sig = fail_acme_once(db, conn)
    act(conn, BreakerParams(BreakerCommand.OPEN, signature=sig, term=ACME, cool_down_s=0.0))
    conn.execute("DELETE FROM sk_tasks_queue_t")
    tick(conn)
    tick(conn)

    assert the_breaker(conn).state is BreakerState.CLOSED


def test_removing_a_breaker_closes_it_first(db: Database, conn: Conn) -> None:
    sig = fail_acme_once(db, conn)
    act(conn, BreakerParams(BreakerCommand.OPEN, signature=sig, term=ACME))

    act(conn, BreakerParams(BreakerCommand.REMOVE, breaker_id=the_breaker(conn).breaker_id))

    assert read.breakers(conn) == []
    assert conn.execute("SELECT count(*) FROM sk_breaker_held_t").fetchone() == (0,)
    assert conn.execute(
        "SELECT tt_breaker_held FROM sk_task_types_t WHERE task_type = %s", (TYPE,)
    ).fetchone() == (False,)


def test_every_change_of_a_breaker_is_audited(db: Database, conn: Conn) -> None:
    sig = fail_acme_once(db, conn)
    act(
        conn,
        BreakerParams(BreakerCommand.ADD, signature=sig, term=ACME, threshold=9, window_s=30.0),
    )
    act(conn, BreakerParams(BreakerCommand.OPEN, signature=sig, term=ACME))
    act(conn, BreakerParams(BreakerCommand.CLOSE, signature=sig, term=ACME))

    lines = [what(e) for e in ops.audit.entries(conn, limit=10)]

    assert [line.split(": ")[1].split(" ")[0] for line in reversed(lines)] == [
        "add",
        "open",
        "close",
    ]


def test_reading_the_breakers_changes_nothing(db: Database, conn: Conn, dsn: str) -> None:
    sig = fail_acme_once(db, conn)
    act(conn, BreakerParams(BreakerCommand.OPEN, signature=sig, term=ACME))
    with psycopg.connect(dsn, autocommit=False) as ro:
        ro.execute("SET TRANSACTION READ ONLY")
        (b,) = read.breakers(ro)
    assert b.state is BreakerState.OPEN
    assert b.held == 1


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["breaker", "open", "--type", TYPE],
            "name a breaker by its id, or by --type and --signature",
        ),
        (["breaker", "close", "99", "--yes"], "no breaker #99"),
        (
            ["breaker", "add", "--type", TYPE, "--signature", "E", "--threshold", "5"],
            "--threshold and --window go together",
        ),
        (
            ["breaker", "add", "--type", TYPE, "--signature", "E", "--canaries", "0"],
            "--canaries must be 1 to 1,000",
        ),
        (
            ["breaker", "add", "--type", TYPE, "--signature", "E", "--where", "x=1"],
            "invalid payload path",
        ),
        (
            [
                "breaker",
                "add",
                "--type",
                TYPE,
                "--signature",
                "E",
                "--window",
                "1x",
                "--threshold",
                "2",
            ],
            "invalid duration",
        ),
    ],
)
def test_a_bad_breaker_command_gets_one_line(run_cli: CLI, args: list[str], said: str) -> None:
    done = run_cli(*args)

    assert done.returncode != 0
    assert said in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_why_names_the_breaker_holding_a_job_back_and_how_to_close_it(
    db: Database, conn: Conn
) -> None:
    sig = fail_acme_once(db, conn)
    act(conn, BreakerParams(BreakerCommand.OPEN, signature=sig, term=ACME))
    post(db, "acme", 1)
    tick(conn)
    held = conn.execute(
        "SELECT task_id FROM sk_tasks_queue_t WHERE task_payload::jsonb ->> 'i' = '0'"
    ).fetchone()
    assert held is not None

    with db.connect() as skconsole_conn:  # reads a parked due time (infinity) as the latest
        answer = read.why(skconsole_conn, held[0])

    assert answer is not None
    cause = answer.causes[0]
    assert cause.code is read.CauseCode.BREAKER
    assert "breaker #1 is open" in cause.evidence
    assert "payload.partner=acme" in cause.evidence
    assert [f.command() for f in cause.fixes] == ["skconsole breaker close 1"]
    assert all(c.code is not read.CauseCode.NOT_DUE for c in answer.causes)


def test_check_warns_of_an_open_breaker_and_the_exporter_exports_it(
    db: Database, conn: Conn
) -> None:
    from skconsole.check import verdict
    from skconsole.exporter.sources import read_breakers

    sig = fail_acme_once(db, conn)
    act(conn, BreakerParams(BreakerCommand.OPEN, signature=sig, term=ACME))

    with db.connect() as c:
        report = verdict.run(c)
        families = {f.name: f for f in read_breakers(c)}

    (result,) = [r for r in report.checks if r.name == "breakers"]
    assert result.summary == "1 breaker holding jobs back"
    assert result.level is verdict.Level.WARNING
    assert [s.value for s in families["skconsole_breaker_state"].samples] == [1.0]
    assert [s.value for s in families["skconsole_breaker_held_jobs"].samples] == [1.0]
